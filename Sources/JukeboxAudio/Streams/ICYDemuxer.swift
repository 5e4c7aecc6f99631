// SPDX-License-Identifier: MIT

/// Splits an ICY (Shoutcast/Icecast) body into audio and metadata blocks.
///
/// With `Icy-MetaData: 1` the server puts a metadata block after every `metaInterval` audio bytes:
/// one length byte (× 16 bytes) and then text such as `StreamTitle='Artist - Title';`. The audio
/// the decoder sees must not contain those blocks. Memory is bounded by the format itself: a block
/// is at most 255 × 16 = 4080 bytes.
public struct ICYDemuxer: Sendable {
    /// Audio bytes between metadata blocks; 0 when the server sends none (all bytes are audio).
    public let metaInterval: Int
    private var audioLeft: Int
    private var metaLeft = 0
    private var inLengthByte = false
    private var block: [UInt8] = []

    /// A demuxer for a body whose `icy-metaint` header said `metaInterval` (0 or absent: no metadata).
    public init(metaInterval: Int) {
        self.metaInterval = max(0, metaInterval)
        self.audioLeft = self.metaInterval
    }

    /// Feeds body bytes; `audio` receives the audio runs in order, `metadata` each complete
    /// non-empty block's text bytes (NULs trimmed).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, audio: (UnsafeRawBufferPointer) -> Void,
                              metadata: ([UInt8]) -> Void) {
        guard metaInterval > 0 else { audio(bytes); return }
        var index = 0
        while index < bytes.count {
            if metaLeft > 0 {
                let take = min(metaLeft, bytes.count - index)
                block.append(contentsOf: bytes[index..<(index + take)])
                metaLeft -= take
                index += take
                if metaLeft == 0 { finishBlock(metadata) }
            } else if inLengthByte {
                metaLeft = Int(bytes[index]) * 16
                index += 1
                inLengthByte = false
                if metaLeft == 0 { audioLeft = metaInterval }
            } else {
                let take = min(audioLeft, bytes.count - index)
                if take > 0 { audio(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])) }
                audioLeft -= take
                index += take
                if audioLeft == 0 { inLengthByte = true }
            }
        }
    }

    private mutating func finishBlock(_ metadata: ([UInt8]) -> Void) {
        var text = block
        block.removeAll(keepingCapacity: true)
        audioLeft = metaInterval
        while text.last == 0 { text.removeLast() }
        if !text.isEmpty { metadata(text) }
    }

    /// The most characters of a title kept (a hostile server's 4 KB "title" is cut): `TagText`'s.
    public static let maxTitleCharacters = TagText.maxCharacters

    /// The `StreamTitle` of a metadata block: `StreamTitle='Artist - Title';StreamUrl='…';`.
    /// nil when the block has none; cleaned by `TagText.clean` (control characters removed,
    /// spaces trimmed, at most `maxTitleCharacters`); invalid UTF-8 is read as Latin-1 (older
    /// Shoutcast servers send it).
    public static func streamTitle(_ block: [UInt8]) -> String? {
        let key = Array("StreamTitle='".utf8)
        guard let start = firstIndex(of: key, in: block, from: 0) else { return nil }
        let valueStart = start + key.count
        // The value ends at the first "';" (a title may itself contain a quote), else the block's end.
        let end = firstIndex(of: Array("';".utf8), in: block, from: valueStart)
            ?? (block.last == UInt8(ascii: "'") ? block.count - 1 : block.count)
        return cleanText(Array(block[valueStart..<max(valueStart, end)]))
    }

    /// Header or metadata text made safe to show: `TagText.clean`, the one definition shared
    /// with the tags of files.
    public static func cleanText(_ bytes: [UInt8], latin1Fallback: Bool = true) -> String {
        TagText.clean(bytes, latin1Fallback: latin1Fallback)
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count, from <= haystack.count - needle.count else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}

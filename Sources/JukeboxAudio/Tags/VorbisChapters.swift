// SPDX-License-Identifier: MIT

/// Chapters in Vorbis comments, the de-facto convention of FLAC, Ogg Vorbis and Opus audiobooks:
/// `CHAPTER001=00:00:00.000` and `CHAPTER001NAME=Title` (keys in any case, the number of any
/// width up to 4 digits, the time `[[H:]M:]S[.fff]`).
///
/// Read here from the comment block itself (FLAC's `VORBIS_COMMENT` block; Ogg's second packet,
/// `\u{3}vorbis` or `OpusTags`) rather than from TagLib: its C API has no property map before
/// TagLib 2 (Debian 12 has 1.13). Bounded as the ID3 reader: at most `maxCommentBytes` of the
/// comment packet, `maxComments` comments looked at, only `CHAPTER…` ones kept (a picture in the
/// comments is skipped, not copied), at most `MP4Chapter.maxCount` chapters.
enum VorbisChapters {
    /// Most bytes of an Ogg comment packet gathered (a packet with a large cover is refused).
    static let maxCommentBytes = 8 << 20
    /// Most comments looked at, FLAC metadata blocks walked, Ogg pages read.
    static let maxComments = 100_000
    static let maxBlocks = 1024
    static let maxPages = 4096

    /// The chapters of a FLAC file (`fLaC`, then metadata blocks).
    static func fromFLAC(_ source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        chapters(try flacComments(source, prefixes: ["CHAPTER"]))
    }

    /// The comments of a FLAC file whose keys start with one of `prefixes` (upper case).
    static func flacComments(_ source: MP4ByteSource, prefixes: [String]) throws(MP4Error) -> [(key: String, value: [UInt8])] {
        var at: UInt64 = 4
        for _ in 0..<maxBlocks {
            guard at + 4 <= source.size else { break }
            let h = try source.read(at: at, count: 4)
            let length = UInt64(h[1]) << 16 | UInt64(h[2]) << 8 | UInt64(h[3])
            guard length <= source.size - at - 4 else { throw MP4Error("damaged FLAC file: a metadata block runs past the end") }
            if h[0] & 0x7f == 4 {
                return try comments(try source.read(at: at + 4, count: Int(length))[...], prefixes: prefixes)
            }
            if h[0] & 0x80 != 0 { break }
            at += 4 + length
        }
        return []
    }

    /// The chapters of an Ogg Vorbis or Opus file: the comment packet, the second of the first
    /// stream, gathered from its pages.
    static func fromOgg(_ source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        chapters(try oggComments(source, prefixes: ["CHAPTER"]))
    }

    /// The comments of an Ogg Vorbis or Opus file whose keys start with one of `prefixes` (upper case).
    static func oggComments(_ source: MP4ByteSource, prefixes: [String]) throws(MP4Error) -> [(key: String, value: [UInt8])] {
        var at: UInt64 = 0
        var serial: [UInt8]?
        var packet = 0
        var gathered: [UInt8] = []
        for _ in 0..<maxPages {
            // A page of another stream is skipped unread: `at` may now be past the end.
            guard at <= source.size, source.size - at >= 27 else { break }
            let h = try source.read(at: at, count: 27)
            guard h[0..<4].elementsEqual("OggS".utf8) else { throw MP4Error("damaged Ogg file: a page does not start with OggS") }
            let segments = try source.read(at: at + 27, count: Int(h[26]))
            let dataSize = segments.reduce(0) { $0 + Int($1) }
            let pageSerial = Array(h[14..<18])
            let dataAt = at + 27 + UInt64(h[26])
            at = dataAt + UInt64(dataSize)
            if serial == nil { serial = pageSerial }
            guard pageSerial == serial else { continue }
            let data = try source.read(at: dataAt, count: dataSize)
            var offset = 0
            for lace in segments {
                if packet == 1 {
                    gathered += data[offset..<offset + Int(lace)]
                    guard gathered.count <= maxCommentBytes else {
                        throw MP4Error("Ogg comment packet over \(maxCommentBytes >> 20) MiB: its chapters are not read")
                    }
                }
                offset += Int(lace)
                if lace < 255 {
                    if packet == 1 { return try oggComments(gathered, prefixes: prefixes) }
                    packet += 1
                }
            }
        }
        return []
    }

    /// The comments of an Ogg comment packet: Vorbis's `\u{3}vorbis` or Opus's `OpusTags` first.
    static func oggComments(_ packet: [UInt8], prefixes: [String]) throws(MP4Error) -> [(key: String, value: [UInt8])] {
        if packet.starts(with: [3] + Array("vorbis".utf8)) { return try comments(packet.dropFirst(7), prefixes: prefixes) }
        if packet.starts(with: Array("OpusTags".utf8)) { return try comments(packet.dropFirst(8), prefixes: prefixes) }
        return []
    }

    /// The comments of a Vorbis comment block (little-endian lengths: the vendor, the count, then
    /// each `KEY=value`) whose keys start with one of `prefixes` (upper-case ASCII; the key's case
    /// is ignored), keys upper-cased; the others skipped unread.
    static func comments(_ block: ArraySlice<UInt8>, prefixes: [String]) throws(MP4Error) -> [(key: String, value: [UInt8])] {
        let wanted: [[UInt8]] = prefixes.map { Array($0.utf8) }
        var at = block.startIndex
        func u32() throws(MP4Error) -> Int {
            guard block.endIndex - at >= 4 else { throw MP4Error("damaged Vorbis comments: they end inside a length") }
            defer { at += 4 }
            return Int(block[at]) | Int(block[at + 1]) << 8 | Int(block[at + 2]) << 16 | Int(block[at + 3]) << 24
        }
        let vendor = try u32()
        guard vendor <= block.endIndex - at else { throw MP4Error("damaged Vorbis comments: the vendor runs past the end") }
        at += vendor
        let count = try u32()
        var found: [(key: String, value: [UInt8])] = []
        for _ in 0..<min(count, maxComments) {
            let length = try u32()
            guard length <= block.endIndex - at else { throw MP4Error("damaged Vorbis comments: a comment runs past the end") }
            let comment = block[at..<at + length]
            at += length
            guard wanted.contains(where: { p in comment.count >= p.count && comment.prefix(p.count).map(Self.upper).elementsEqual(p) }),
                  let equals = comment.prefix(64).firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: comment[comment.startIndex..<equals], as: UTF8.self).uppercased()
            found.append((key, Array(comment[(equals + 1)...].prefix(TagText.maxCharacters * 8))))
        }
        return found
    }

    /// An ASCII letter in upper case; any other byte as it is.
    static func upper(_ byte: UInt8) -> UInt8 { byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte }

    /// `CHAPTERnnn` (a start) and `CHAPTERnnnNAME` (its title) as chapters: ordered by start (ties
    /// by number), one per start; a chapter without a start that reads is left out.
    static func chapters(_ comments: [(key: String, value: [UInt8])]) -> [MP4Chapter] {
        var starts: [Int: Double] = [:]
        var names: [Int: String] = [:]
        for (key, value) in comments {
            var rest = key.dropFirst("CHAPTER".count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 4, let number = Int(digits) else { continue }
            rest = rest.dropFirst(digits.count)
            if rest.isEmpty {
                guard starts[number] == nil, starts.count < MP4Chapter.maxCount,
                      let seconds = seconds(String(decoding: value, as: UTF8.self)) else { continue }
                starts[number] = seconds
            } else if rest == "NAME", names[number] == nil, names.count < MP4Chapter.maxCount {
                names[number] = TagText.clean(value, latin1Fallback: false)
            }
        }
        var result: [MP4Chapter] = []
        for (number, start) in starts.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            if result.last?.start == start { continue }
            result.append(MP4Chapter(start: start, title: names[number] ?? ""))
        }
        return result
    }

    /// `HH:MM:SS.fff`, `M:SS`, `SS.f` as seconds; nil for anything else (or past 100,000 hours).
    static func seconds(_ text: String) -> Double? {
        let trimmed = text.trimmingASCIIWhitespace()
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), trimmed.utf8.count <= 32 else { return nil }
        var total = 0.0
        for (i, part) in parts.enumerated() {
            let last = i == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ ($0.isASCII && $0.isNumber) || (last && $0 == ".") }),
                  part.first != ".", part.filter({ $0 == "." }).count <= 1, let value = Double(part) else { return nil }
            if i > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        return total.isFinite && total < 360_000_000 ? total : nil
    }
}

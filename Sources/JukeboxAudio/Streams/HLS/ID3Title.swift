// SPDX-License-Identifier: MIT

/// The ID3v2 tags HLS stations send: one at the start of each packed audio segment (RFC 8216 3.4),
/// and timed metadata in MPEG-TS (`TSDemuxer.takeMetadata`). Their `TPE1`/`TIT2` frames are the
/// station's title. The frames are walked by `ID3Chapters.frames`, bounded as for files.
public enum ID3Title {
    /// The bytes the ID3v2 tag at the start of `bytes` takes (header, body, footer), 0 when none.
    public static func tagLength(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33,
              bytes[6] | bytes[7] | bytes[8] | bytes[9] < 0x80 else { return 0 }
        let size = Int(bytes[6]) << 21 | Int(bytes[7]) << 14 | Int(bytes[8]) << 7 | Int(bytes[9])
        let footer = bytes[5] & 0x10 != 0 ? 10 : 0
        return min(bytes.count, 10 + size + footer)
    }

    /// `ARTIST - TITLE` (or the one there is) of the tag at the start of `bytes`, cleaned as a
    /// stream title; nil when it has neither (a timestamp `PRIV` only) or is damaged.
    public static func title(_ bytes: [UInt8]) -> String? {
        var artist = "", title = ""
        let source = BytesSource(bytes: Array(bytes.prefix(tagLength(bytes))))
        do {
            try ID3Chapters.frames(source, wanted: { $0 == "TIT2" || $0 == "TPE1" }) { id, body, _ in
                let text = TagText.clean(ID3Chapters.decodeText(body))
                if id == "TIT2" { title = text } else { artist = text }
            }
        } catch {
            return nil
        }
        switch (artist.isEmpty, title.isEmpty) {
        case (true, true): return nil
        case (false, false): return TagText.clean(artist + " - " + title)
        case (true, false): return title
        case (false, true): return artist
        }
    }

    /// A tag in memory, read as the frame walker reads a file.
    private struct BytesSource: MP4ByteSource {
        let bytes: [UInt8]
        var size: UInt64 { UInt64(bytes.count) }

        func read(at offset: UInt64, count: Int) throws(MP4Error) -> [UInt8] {
            guard offset <= size, count >= 0, UInt64(count) <= size - offset else { throw MP4Error("the tag ends early") }
            return Array(bytes[Int(offset)..<Int(offset) + count])
        }
    }
}

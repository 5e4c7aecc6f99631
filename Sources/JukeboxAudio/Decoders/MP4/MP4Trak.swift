// SPDX-License-Identifier: MIT

/// One `trak` box: what the movie needs of any track (its id, kind, timescale, sample table, edit
/// list, chapter reference); `MP4Movie` picks the sound track and the chapter track from these.
struct MP4Trak {
    var id: UInt32 = 0
    /// `hdlr`'s type: `soun` for sound, `text`/`sbtl` for a chapter track.
    var handler = ""
    var timescale: UInt32 = 0
    var sampleEntry: MP4Box?
    var table: MP4SampleTable?
    /// The track named by `tref/chap` (QuickTime chapters).
    var chapterTrack: UInt32?
    /// `elst` entries: (duration in the movie's timescale, media time or -1 for an empty edit).
    var edits: [(duration: UInt64, mediaTime: Int64)] = []

    /// Reads `trak`; `withTable: false` leaves the sample table out (a fragmented MP4's init
    /// section has empty tables, its samples come in each fragment's `trun`).
    static func read(_ trak: MP4Box, in source: MP4ByteSource, withTable: Bool = true) throws(MP4Error) -> MP4Trak {
        var t = MP4Trak()
        let children = try trak.children(in: source)
        if let tkhd = children.first("tkhd") {
            var c = MP4Cursor(try tkhd.content(in: source, limit: 4096), box: "tkhd")
            try c.skip(try c.version() == 1 ? 16 : 8)
            t.id = try c.u32()
        }
        if let chap = try children.first("tref")?.children(in: source).first("chap") {
            var c = MP4Cursor(try chap.content(in: source, limit: 4096), box: "chap")
            if c.remaining >= 4 { t.chapterTrack = try c.u32() }
        }
        if let elst = try children.first("edts")?.children(in: source).first("elst") {
            var c = MP4Cursor(try elst.content(in: source, limit: 1 << 16), box: "elst")
            let wide = try c.version() == 1
            let n = Int(try c.u32())
            guard n * (wide ? 20 : 12) <= c.remaining else { throw MP4Error("damaged file: box 'elst' says it holds \(n) entries") }
            for _ in 0..<n {
                let duration = wide ? try c.u64() : UInt64(try c.u32())
                let media = wide ? Int64(bitPattern: try c.u64()) : Int64(Int32(bitPattern: try c.u32()))
                try c.skip(4)  // rate: 1.0 for audio
                t.edits.append((duration, media))
            }
        }
        guard let mdia = children.first("mdia") else { return t }
        let media = try mdia.children(in: source)
        if let mdhd = media.first("mdhd") {
            var c = MP4Cursor(try mdhd.content(in: source, limit: 4096), box: "mdhd")
            try c.skip(try c.version() == 1 ? 16 : 8)
            t.timescale = try c.u32()
        }
        if let hdlr = media.first("hdlr") {
            var c = MP4Cursor(try hdlr.content(in: source, limit: 4096), box: "hdlr")
            _ = try c.version()
            try c.skip(4)
            t.handler = fourCC(try c.take(4))
        }
        guard let minf = media.first("minf"), let stbl = try minf.children(in: source).first("stbl") else { return t }
        let tables = try stbl.children(in: source)
        if let stsd = tables.first("stsd") {
            t.sampleEntry = try stsd.children(in: source, skipping: 8).first
        }
        if withTable { t.table = try MP4SampleTable.read(tables, in: source) }
        return t
    }

    /// The edit that places the audio: the first non-empty one (an empty edit, media time -1,
    /// only delays the presentation, which a player does not need), in this track's timescale.
    func edit(movieTimescale: UInt32) -> MP4Edit? {
        guard let first = edits.first(where: { $0.mediaTime >= 0 }) else { return nil }
        // A duration of 0 (some writers) means "to the end"; the movie's timescale converts it.
        let duration: UInt64? = first.duration == 0 || movieTimescale == 0
            ? nil : first.duration.multipliedReportingOverflow(by: UInt64(timescale)).partialValue / UInt64(movieTimescale)
        return MP4Edit(mediaStart: UInt64(first.mediaTime), duration: duration)
    }
}

/// The iTunes metadata the player reads itself (TagLib reads the tags people see).
enum MP4Tags {
    /// `moov/udta/meta/ilst/----` with mean `com.apple.iTunes` and name `iTunSMPB`: hex words,
    /// the second the encoder delay, the third the padding, the fourth the original's length.
    static func iTunSMPB(_ udta: [MP4Box], in source: MP4ByteSource) throws(MP4Error) -> MP4Gapless? {
        guard let value = try freeform(udta, in: source, wanted: { $0 == "iTunSMPB" }).first?.value else { return nil }
        let words = value.split(separator: " ").compactMap { UInt64($0, radix: 16) }
        guard words.count >= 4 else { return nil }
        return MP4Gapless(delay: words[1], padding: words[2], frames: words[3])
    }

    /// The freeform items (`moov/udta/meta/ilst/----`) with mean `com.apple.iTunes` whose name is
    /// `wanted`: name and value (UTF-8, at most 4 KiB each), in the file's order.
    static func freeform(_ udta: [MP4Box], in source: MP4ByteSource,
                         wanted: (String) -> Bool) throws(MP4Error) -> [(name: String, value: String)] {
        guard let meta = udta.first("meta") else { return [] }
        // `meta` is a full box in MP4 files, a plain container in some QuickTime ones.
        let head = try source.read(at: meta.contentStart, count: Int(min(8, meta.contentSize)))
        let skip: UInt64 = head.count == 8 && fourCC(head[4..<8]) == "hdlr" ? 0 : 4
        guard let ilst = try meta.children(in: source, skipping: skip).first("ilst") else { return [] }
        var found: [(name: String, value: String)] = []
        for item in try ilst.children(in: source) where item.type == "----" {
            let parts = try item.children(in: source)
            func text(_ type: String, skipping: Int) throws(MP4Error) -> String? {
                guard let box = parts.first(type) else { return nil }
                let bytes = try box.content(in: source, limit: 4096)
                return bytes.count >= skipping ? String(decoding: bytes[skipping...], as: UTF8.self) : nil
            }
            guard try text("mean", skipping: 4) == "com.apple.iTunes", let name = try text("name", skipping: 4), wanted(name),
                  let value = try text("data", skipping: 8) else { continue }
            found.append((name, value))
        }
        return found
    }
}

extension MP4Chapter {
    /// Most chapters kept: a 40-chapter audiobook is common, 1000 is plenty.
    static let maxCount = 1000
    /// Longest title kept, in bytes.
    static let maxTitleBytes = 256

    /// Nero's `chpl`: version and flags, 4 more bytes in version 1, a count, then per chapter a
    /// start in 100 ns units, a length byte and the title.
    static func fromNero(_ chpl: MP4Box, in source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        var c = MP4Cursor(try chpl.content(in: source, limit: 1 << 20), box: "chpl")
        if try c.version() == 1 { try c.skip(4) }
        let count = Int(try c.u8())
        var chapters: [MP4Chapter] = []
        for _ in 0..<count {
            let start = try c.u64()
            let title = try c.take(Int(try c.u8()))
            chapters.append(MP4Chapter(start: Double(start) / 10_000_000, title: cleanTitle(title)))
        }
        return ordered(chapters)
    }

    /// A QuickTime chapter track: each sample a 16-bit length and the title (UTF-8, or UTF-16 with
    /// a byte-order mark), starting when the sample does.
    static func fromTextTrack(_ track: MP4Trak, in source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        guard let table = track.table, track.timescale > 0 else { return [] }
        var reader = try MP4SampleReader(table, source: source)
        var chapters: [MP4Chapter] = []
        while chapters.count < maxCount, let sample = try reader.next() {
            let bytes = try source.read(at: sample.offset, count: min(sample.size, 2 + maxTitleBytes * 2))
            var c = MP4Cursor(bytes, box: "text")
            let length = min(Int(try c.u16()), c.remaining)
            chapters.append(MP4Chapter(start: Double(sample.start) / Double(track.timescale), title: cleanTitle(try c.take(length))))
        }
        return ordered(chapters)
    }

    /// A title as text: UTF-16 with its byte-order mark decoded, bad bytes as U+FFFD, cut to the
    /// bound; what a screen may not show (control characters) is the display's business.
    static func cleanTitle(_ bytes: ArraySlice<UInt8>) -> String {
        var text: String
        let bom = bytes.prefix(2).map { $0 }
        if bom == [0xfe, 0xff] || bom == [0xff, 0xfe] {
            let big = bom[0] == 0xfe
            var units: [UInt16] = []
            var i = bytes.startIndex + 2
            while i + 1 < bytes.endIndex {
                let high = UInt16(bytes[big ? i : i + 1])
                let low = UInt16(bytes[big ? i + 1 : i])
                units.append(high << 8 | low)
                i += 2
            }
            text = String(decoding: units, as: UTF16.self)
        } else {
            text = String(decoding: bytes, as: UTF8.self)
        }
        while text.utf8.count > maxTitleBytes { text.removeLast() }
        return text
    }

    /// Sorted by start, one per start (a damaged list must not make "next chapter" go back).
    static func ordered(_ chapters: [MP4Chapter]) -> [MP4Chapter] {
        var result: [MP4Chapter] = []
        for chapter in chapters.sorted(by: { $0.start < $1.start }) where chapter.start.isFinite && chapter.start >= 0 {
            if result.last?.start == chapter.start { continue }
            result.append(chapter)
        }
        return result
    }
}

// SPDX-License-Identifier: MIT

/// An MP3's chapters from its ID3v2 tag (the `CHAP` and `CTOC` frames of the ID3v2 Chapter Frame
/// Addendum), read here because TagLib's C API does not expose them.
///
/// Nothing in the file is trusted: the tag's size is checked against the file, every frame's
/// against the tag, a chapter frame is read to at most `maxFrameBytes`, at most `maxFrames`
/// frames are walked and `MP4Chapter.maxCount` chapters kept. ID3v2.3 and v2.4 are read (v2.2
/// has no chapters); v2.4's unsynchronisation (the tag's flag or a frame's) is undone, an
/// ID3v2.3 tag unsynchronised as a whole is refused with its reason. Titles come from each
/// chapter's `TIT2` sub-frame (ISO-8859-1, UTF-16 with a byte-order mark, UTF-16BE or UTF-8).
/// The chapters are those of the top-level table of contents (`CTOC`, nested ones followed) when
/// the tag has one, else every `CHAP`, then ordered by start (ties in the table's order) with one
/// chapter per start: "next chapter" must never go back.
enum ID3Chapters {
    /// Most frames walked (a tag of millions of empty frames costs no more than this).
    static let maxFrames = 20_000
    /// Most bytes of one `CHAP` or `CTOC` frame read (sub-frames past it are not seen).
    static let maxFrameBytes = 1 << 16
    /// Most tables of contents kept, and how deep nested ones are followed.
    static let maxTables = 256
    static let maxDepth = 8

    /// The chapters of the file behind `source`; empty when it has no ID3v2.3/2.4 tag or no
    /// chapters; throws with the reason when the tag is damaged or cannot be read.
    static func read(_ source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        var chapters: [(id: [UInt8], chapter: MP4Chapter)] = []
        var tables: [(id: [UInt8], top: Bool, children: [[UInt8]])] = []
        try frames(source, wanted: { $0 == "CHAP" || $0 == "CTOC" }) { id, body, major in
            if id == "CHAP", chapters.count < MP4Chapter.maxCount, let chapter = chapter(body, major: major) {
                chapters.append(chapter)
            } else if id == "CTOC", tables.count < maxTables, let table = table(body) {
                tables.append(table)
            }
        }
        return ordered(chapters, tables: tables)
    }

    /// Walks the frames of the ID3v2.3/2.4 tag at the start of `source` and calls `visit` with
    /// the id, the content (at most `maxFrameBytes`, format flags undone) and the tag's major
    /// version of each frame whose id is `wanted` (compressed or encrypted ones are skipped). No
    /// tag, or v2.2: nothing visited. Throws with the reason when the tag is damaged.
    static func frames(_ source: MP4ByteSource, wanted: (String) -> Bool,
                       visit: (String, [UInt8], UInt8) -> Void) throws(MP4Error) {
        guard source.size >= 10 else { return }
        let header = try source.read(at: 0, count: 10)
        guard header[0..<3].elementsEqual("ID3".utf8) else { return }
        let major = header[3]
        guard major == 3 || major == 4 else { return }
        guard header[6...9].allSatisfy({ $0 < 0x80 }) else { throw MP4Error("damaged ID3v2 tag: its size is not a syncsafe integer") }
        let flags = header[5]
        let end = 10 + UInt64(syncsafe(header[6...9]))
        guard end <= source.size else { throw MP4Error("damaged ID3v2 tag: it says it is longer than the file") }
        if major == 3 && flags & 0x80 != 0 {
            throw MP4Error("ID3v2.3 tag unsynchronised as a whole: its chapters are not read")
        }
        let tagUnsynchronised = major == 4 && flags & 0x80 != 0
        var at: UInt64 = 10
        if flags & 0x40 != 0 {
            guard at + 4 <= end else { throw MP4Error("damaged ID3v2 tag: its extended header runs past the tag") }
            let b = try source.read(at: at, count: 4)
            // v2.3: the size after the field itself; v2.4: syncsafe, the whole extended header.
            let length = major == 3 ? UInt64(b.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) + 4 : UInt64(syncsafe(b[0...3]))
            guard length >= 6, length <= end - at else { throw MP4Error("damaged ID3v2 tag: its extended header runs past the tag") }
            at += length
        }
        var walked = 0
        while end - at >= 10, walked < maxFrames {
            walked += 1
            let h = try source.read(at: at, count: 10)
            // Padding (zeros), or bytes that are not a frame: the frames have ended.
            guard h[0..<4].allSatisfy({ ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x30 && $0 <= 0x39) }) else { break }
            let id = String(decoding: h[0..<4], as: UTF8.self)
            let size = UInt64(frameSize(h[4...7], major: major))
            guard size <= end - at - 10 else { throw MP4Error("damaged ID3v2 tag: frame '\(id)' runs past the tag's end") }
            if wanted(id), let body = content(try source.read(at: at + 10, count: Int(min(size, UInt64(maxFrameBytes)))),
                                              flags: h[9], major: major, unsynchronised: tagUnsynchronised) {
                visit(id, body, major)
            }
            at += 10 + size
        }
    }

    /// The chapters in the order the top-level table gives (nested tables followed, each chapter
    /// once), else in the tag's order; then by start, ties kept in that order, one per start.
    static func ordered(_ chapters: [(id: [UInt8], chapter: MP4Chapter)],
                        tables: [(id: [UInt8], top: Bool, children: [[UInt8]])]) -> [MP4Chapter] {
        var listed: [MP4Chapter] = chapters.map(\.chapter)
        if let top = tables.first(where: { $0.top }) ?? (tables.count == 1 ? tables.first : nil) {
            var byID: [[UInt8]: MP4Chapter] = [:]
            for c in chapters where byID[c.id] == nil { byID[c.id] = c.chapter }
            var tableByID: [[UInt8]: [[UInt8]]] = [:]
            for t in tables where tableByID[t.id] == nil { tableByID[t.id] = t.children }
            var seen = Set<[UInt8]>()
            var inTable: [MP4Chapter] = []
            func walk(_ children: [[UInt8]], depth: Int) {
                for child in children where inTable.count < MP4Chapter.maxCount && seen.insert(child).inserted {
                    if let chapter = byID[child] {
                        inTable.append(chapter)
                    } else if depth < maxDepth, let nested = tableByID[child] {
                        walk(nested, depth: depth + 1)
                    }
                }
            }
            seen.insert(top.id)
            walk(top.children, depth: 0)
            if !inTable.isEmpty { listed = inTable }
        }
        var result: [MP4Chapter] = []
        let sorted = listed.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        for (_, chapter) in sorted where chapter.start.isFinite && chapter.start >= 0 {
            if result.last?.start == chapter.start { continue }
            result.append(chapter)
        }
        return result
    }

    /// A `CHAP` frame's body: its element ID, start (ms), end, byte offsets, then sub-frames.
    /// The body is as stored once its own unsynchronisation is undone, so its sub-frames' is not
    /// undone again.
    static func chapter(_ body: [UInt8], major: UInt8) -> (id: [UInt8], chapter: MP4Chapter)? {
        var c = MP4Cursor(body, box: "CHAP")
        guard let id = try? c.cString(), let start = try? c.u32(), (try? c.skip(12)) != nil else { return nil }
        var title = ""
        var rest = Array(body[c.at...])[...]
        // Sub-frames: the same headers as the tag's frames; the first TIT2 names the chapter.
        while rest.count >= 10 {
            let h = rest.prefix(10)
            let size = Int(frameSize(h.dropFirst(4).prefix(4), major: major))
            guard size <= rest.count - 10 else { break }
            let subID = h.prefix(4)
            let data = Array(rest.dropFirst(10).prefix(size))
            if subID.elementsEqual("TIT2".utf8),
               let text = content(data, flags: h[h.startIndex + 9] & ~0x02, major: major, unsynchronised: false) {
                title = TagText.clean(decodeText(text))
                break
            }
            rest = rest.dropFirst(10 + size)
        }
        return (Array(id), MP4Chapter(start: Double(start) / 1000, title: title))
    }

    /// A `CTOC` frame's body: its element ID, flags (0x02: top level), the count, the children's IDs.
    static func table(_ body: [UInt8]) -> (id: [UInt8], top: Bool, children: [[UInt8]])? {
        var c = MP4Cursor(body, box: "CTOC")
        guard let id = try? c.cString(), let flags = try? c.u8(), let count = try? c.u8() else { return nil }
        var children: [[UInt8]] = []
        for _ in 0..<count {
            guard let child = try? c.cString() else { break }
            children.append(Array(child))
        }
        return (Array(id), flags & 0x02 != 0, children)
    }

    /// A frame's data without what its format flags add: nil when compressed or encrypted (not
    /// read); the grouping byte and v2.4's data length dropped, unsynchronisation undone.
    static func content(_ data: [UInt8], flags: UInt8, major: UInt8, unsynchronised: Bool) -> [UInt8]? {
        var skip = 0
        var undo = unsynchronised
        if major == 3 {
            if flags & 0xc0 != 0 { return nil }
            if flags & 0x20 != 0 { skip += 1 }
        } else {
            if flags & 0x0c != 0 { return nil }
            if flags & 0x40 != 0 { skip += 1 }
            if flags & 0x01 != 0 { skip += 4 }
            if flags & 0x02 != 0 { undo = true }
        }
        guard skip <= data.count else { return nil }
        let rest = data.dropFirst(skip)
        guard undo else { return Array(rest) }
        // Unsynchronisation put a zero after every 0xFF: taken out again.
        var out: [UInt8] = []
        out.reserveCapacity(rest.count)
        var previous: UInt8 = 0
        for b in rest {
            if !(previous == 0xff && b == 0x00) { out.append(b) }
            previous = (previous == 0xff && b == 0x00) ? 0 : b
        }
        return out
    }

    /// A text frame's first string: the encoding byte, then the text up to its terminator.
    static func decodeText(_ data: [UInt8]) -> String {
        guard let encoding = data.first else { return "" }
        let bytes = data.dropFirst().prefix(TagText.maxCharacters * 8)
        switch encoding {
        case 0:
            return String(String.UnicodeScalarView(bytes.prefix { $0 != 0 }.map { Unicode.Scalar($0) }))
        case 1, 2:
            var big = true
            var units = bytes
            if encoding == 1, units.count >= 2 {
                let bom = (units[units.startIndex], units[units.startIndex + 1])
                if bom == (0xff, 0xfe) { big = false; units = units.dropFirst(2) }
                else if bom == (0xfe, 0xff) { units = units.dropFirst(2) }
            }
            var decoded: [UInt16] = []
            var i = units.startIndex
            while i + 1 < units.endIndex {
                let unit = big ? UInt16(units[i]) << 8 | UInt16(units[i + 1]) : UInt16(units[i + 1]) << 8 | UInt16(units[i])
                if unit == 0 { break }
                decoded.append(unit)
                i += 2
            }
            return String(decoding: decoded, as: UTF16.self)
        case 3:
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        default:
            return ""
        }
    }

    /// A frame's size: v2.3 a plain 32-bit number, v2.4 a syncsafe one (taken as plain when a
    /// byte has its top bit set, as some v2.4 writers did).
    static func frameSize<C: Collection>(_ b: C, major: UInt8) -> UInt32 where C.Element == UInt8 {
        major == 4 && b.allSatisfy({ $0 < 0x80 }) ? syncsafe(b) : b.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Seven bits a byte, most significant first.
    static func syncsafe<C: Collection>(_ b: C) -> UInt32 where C.Element == UInt8 {
        b.prefix(4).reduce(UInt32(0)) { $0 << 7 | UInt32($1 & 0x7f) }
    }
}

extension MP4Cursor {
    /// Bytes up to a zero (the zero read, not returned); throws when there is none.
    mutating func cString() throws(MP4Error) -> ArraySlice<UInt8> {
        guard let zero = bytes[at...].firstIndex(of: 0) else {
            throw MP4Error("damaged file: box '\(box)' has a string without its end")
        }
        let text = try take(zero - at)
        try skip(1)
        return text
    }
}

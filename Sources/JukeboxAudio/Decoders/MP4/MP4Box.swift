// SPDX-License-Identifier: MIT

/// Where one box is in the file: its type and the span of its content (after the header).
struct MP4Box: Equatable {
    /// The four-character type (`moov`, `trak`…; other bytes as `?`).
    var type: String
    /// The first byte of the box (its size field).
    var start: UInt64
    /// The first byte after the header (the content).
    var contentStart: UInt64
    /// The first byte after the box.
    var end: UInt64

    var contentSize: UInt64 { end - contentStart }

    /// Most boxes a container may hold before the file is taken as damaged or hostile: no real
    /// file comes near (a 9-hour audiobook's `moov` holds a few dozen), and it bounds the work a
    /// crafted file can cause.
    static let maxChildren = 4096
    /// Deepest nesting followed (`moov/trak/mdia/minf/stbl/stsd/mp4a/esds` is 8).
    static let maxDepth = 12

    /// The box whose header starts at `offset`, inside a container ending at `end`. A size of 0
    /// (to the end) is allowed; a box running past `end` is damage, except an `mdat` at the top
    /// level (`clampsMediaData`): a truncated download keeps the audio it has.
    static func at(_ offset: UInt64, end: UInt64, in source: MP4ByteSource, clampsMediaData: Bool = false) throws(MP4Error) -> MP4Box {
        guard end >= offset, end - offset >= 8 else { throw MP4Error("damaged file: a box header is cut short") }
        var cursor = MP4Cursor(try source.read(at: offset, count: 8), box: "?")
        let size32 = try cursor.u32()
        let type = fourCC(try cursor.take(4))
        var header: UInt64 = 8
        var size = UInt64(size32)
        if size32 == 1 {
            guard end - offset >= 16 else { throw MP4Error("damaged file: box '\(type)' is cut short") }
            var large = MP4Cursor(try source.read(at: offset + 8, count: 8), box: type)
            size = try large.u64()
            header = 16
        } else if size32 == 0 {
            size = end - offset
        }
        guard size >= header else { throw MP4Error("damaged file: box '\(type)' says it is \(size) bytes long") }
        if size > end - offset {
            guard clampsMediaData, type == "mdat" else {
                throw MP4Error("damaged file: box '\(type)' runs past the end of " + (clampsMediaData ? "the file (truncated?)" : "its container"))
            }
            size = end - offset
        }
        return MP4Box(type: type, start: offset, contentStart: offset + header, end: offset + size)
    }

    /// The boxes inside this one, from `skipping` bytes into its content (a sample entry's fields,
    /// a full box's version and flags).
    func children(in source: MP4ByteSource, skipping: UInt64 = 0) throws(MP4Error) -> [MP4Box] {
        try MP4Box.sequence(from: contentStart + skipping, to: end, in: source)
    }

    /// The boxes one after the other from `start` to `end`.
    static func sequence(from start: UInt64, to end: UInt64, in source: MP4ByteSource, topLevel: Bool = false) throws(MP4Error) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var offset = start
        // Trailing bytes shorter than a header (some writers pad with zeros) are not a box.
        while offset < end, end - offset >= 8 {
            guard boxes.count < maxChildren else { throw MP4Error("damaged file: more than \(maxChildren) boxes in one container") }
            let box = try at(offset, end: end, in: source, clampsMediaData: topLevel)
            boxes.append(box)
            offset = box.end
        }
        return boxes
    }

    /// The content, read whole: only for boxes whose size is bounded by what they are (headers and
    /// small tables), never `mdat`. `limit` guards against a box that claims gigabytes.
    func content(in source: MP4ByteSource, limit: Int = 1 << 20) throws(MP4Error) -> [UInt8] {
        guard contentSize <= UInt64(limit) else {
            throw MP4Error("damaged file: box '\(type)' is \(contentSize) bytes (at most \(limit) expected)")
        }
        return try source.read(at: contentStart, count: Int(contentSize))
    }
}

extension Array where Element == MP4Box {
    /// The first box of `type`.
    func first(_ type: String) -> MP4Box? { first { $0.type == type } }
}

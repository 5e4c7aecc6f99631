// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// The place sidecar's layout on disk: two 4 KiB slots, overwritten in turn in place.
///
/// Why not a temp file and a rename, as for the queue file: that costs two journal commits per
/// save (`fsync` of the new file, then of the folder), and a commit waits for every other dirty
/// file of the file system (ext4's ordered mode). Under load, or on a slow SD card, one save then
/// takes seconds, and every second of it is position a power cut loses beyond the save interval
/// (a HIL run lost 6 s that way). Overwriting blocks that are already allocated needs only
/// `fdatasync`, which writes the one block and flushes the device: no commit, no other file's
/// data, a fraction of the wear.
///
/// Each slot holds one record: the place's JSON line (`PlaceFile.bytes`, with its `seq`), then a
/// line with the 64-bit FNV-1a hash of that line in hex, then zeros (not checked). A write goes to the slot
/// that does *not* hold the newest valid record, so a write torn by a power cut damages only the
/// record being replaced; the reader takes the valid record with the highest `seq`. The file is
/// created (and re-created when it is missing or not this layout) whole, the atomic way.
enum PlaceSlots {
    /// The size of one slot: a file system block, so that the two never share one.
    static let slotSize = 4096
    /// The size of a sidecar in this layout.
    static let fileSize = 2 * slotSize
    /// The bytes of a slot a save writes: one sector, which a record (~170 bytes) never fills;
    /// the rest of the slot stays zero from the file's creation.
    static let recordArea = 512

    /// A valid record found in a slot.
    struct Record {
        var place: PlaceFile
        var slot: Int
        var sequence: UInt64 { place.sequence ?? 0 }
    }

    /// Whether `bytes` are a sidecar in this layout (else: a single JSON line, the first layout).
    static func isSlotted(_ bytes: [UInt8]) -> Bool { bytes.count == fileSize }

    /// The valid records of a slotted sidecar; a slot that is empty, torn or fails its hash gives none.
    static func records(_ bytes: [UInt8]) -> [Record] {
        intact(bytes).compactMap { slot, line in
            PlaceFile.decode(line).flatMap { $0.sequence == nil ? nil : Record(place: $0, slot: slot) }
        }
    }

    /// The newest record of `records`, whatever queue file it names.
    static func newest(_ records: [Record]) -> Record? {
        records.max { $0.sequence < $1.sequence }
    }

    // The slots whose line matches its hash, with that line. The hash proves the line is the one
    // written whole, so the writer can read its `seq` without decoding the JSON (`JSONDecoder`
    // would keep its code resident for a read every few seconds, as `PlaceFile.bytes` says).
    private static func intact(_ bytes: [UInt8]) -> [(slot: Int, line: [UInt8])] {
        guard isSlotted(bytes) else { return [] }
        return (0..<2).compactMap { slot in
            let data = bytes[slot * slotSize..<(slot + 1) * slotSize]
            guard let end = data.firstIndex(of: 0x0A) else { return nil }
            let line = Array(data[...end])
            let rest = data[(end + 1)...]
            // What follows the hash line is not looked at: a page torn by a cut may have left
            // anything there, and a slot must never stay unusable for it.
            guard let hashEnd = rest.firstIndex(of: 0x0A),
                  String(decoding: rest[..<hashEnd], as: UTF8.self) == PlaceFile.hex(StateStore.hash(line)) else { return nil }
            return (slot, line)
        }
    }

    // The `seq` of an intact line (written by `PlaceFile.bytes`: `,"seq":N,`).
    private static func sequence(of line: [UInt8]) -> UInt64? {
        let key = Array(",\"seq\":".utf8)
        guard line.count > key.count,
              let at = (0...(line.count - key.count)).first(where: { line[$0..<($0 + key.count)].elementsEqual(key) }) else { return nil }
        let digits = line[(at + key.count)...].prefix { (0x30...0x39).contains($0) }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }

    /// One slot's bytes for `place` (which carries its `sequence`).
    static func slot(_ place: PlaceFile) -> [UInt8] {
        let line = place.bytes()
        var out = line + Array((PlaceFile.hex(StateStore.hash(line)) + "\n").utf8)
        // A place too long for the record area cannot happen (its strings are a phase and a hex
        // hash), but a record must never spill out of it (a slot that fails its check instead).
        if out.count > recordArea { out = [0x0A] }
        return out + [UInt8](repeating: 0, count: slotSize - out.count)
    }

    /// Writes `place` into the sidecar at `path` in place: into the slot not holding the newest
    /// record, numbered one after it, then `fdatasync`. Returns false, having written nothing,
    /// when there is no sidecar in this layout to write into (the caller creates one); throws
    /// when a call fails on one that is.
    static func overwrite(_ place: PlaceFile, at path: String, beforeSync: (() -> Void)?) throws(SystemError) -> Bool {
        // O_NOFOLLOW: a symlink is not ours to write through; it is replaced by a created file,
        // as is anything but a plain file of one name (a FIFO, a hard link to another file).
        let fd = open(cPath(path), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1, info.st_size == fileSize else { return false }
        var bytes = [UInt8](repeating: 0, count: fileSize)
        let got = try sys("read", path) { bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, fileSize, 0) } }
        guard got == fileSize else { return false }
        let newest = intact(bytes).compactMap { slot, line in sequence(of: line).map { (slot: slot, sequence: $0) } }
            .max { $0.sequence < $1.sequence }
        var numbered = place
        numbered.sequence = (newest?.sequence ?? 0) &+ 1
        let slotBytes = Array(slot(numbered).prefix(recordArea))
        let offset = (newest.map { 1 - $0.slot } ?? 0) * slotSize
        var done = 0
        while done < slotBytes.count {
            let n = try sys("write", path) {
                slotBytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            }
            if n == 0 { throw SystemError(call: "write", subject: path, errno: EIO) }
            done += n
        }
        beforeSync?()
        _ = try sys("fdatasync", path) { Int(fdatasync(fd)) }
        return true
    }

    /// A new sidecar's bytes: `place` as record 1 in the first slot, the second empty.
    static func created(_ place: PlaceFile) -> [UInt8] {
        var first = place
        first.sequence = 1
        return slot(first) + [UInt8](repeating: 0, count: slotSize)
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Why an MP4 file (`.m4a`, `.m4b`, `.mp4`) cannot be read, in words a person understands.
public struct MP4Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong ("not an MP4 file", "damaged file: …").
    public var reason: String
    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { reason }
}

/// Random access to the bytes of an MP4 file. The parser reads boxes where they are instead of
/// loading the file (or its `moov`, several MiB for a 9-hour audiobook) into memory.
public protocol MP4ByteSource {
    /// Bytes in all.
    var size: UInt64 { get }
    /// Exactly `count` bytes from `offset`; throws when they are not all there (a truncated or
    /// damaged file) or the read fails.
    func read(at offset: UInt64, count: Int) throws(MP4Error) -> [UInt8]
}

/// The bytes of an open file, read with `pread` (no shared file position: one source may serve a
/// parser and a decoder on one thread after the other).
public final class MP4File: MP4ByteSource {
    /// The descriptor, owned: closed when the source goes.
    public let fd: Int32
    public let size: UInt64

    /// Opens `path` (a regular file, read-only); throws with the reason when it cannot.
    public init(path: String) throws(MP4Error) {
        do throws(SystemError) { fd = try openRegularFile(path) } catch {
            throw MP4Error(error.reason ?? errnoText(error.errno).lowercased())
        }
        var status = stat()
        size = fstat(fd, &status) == 0 ? UInt64(max(0, status.st_size)) : 0
    }

    deinit { Glibc.close(fd) }

    public func read(at offset: UInt64, count: Int) throws(MP4Error) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw MP4Error("damaged file: it ends inside what it says is there (truncated?)")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw MP4Error("read error: " + errnoText(errno).lowercased()) }
            if got == 0 { throw MP4Error("damaged file: it ends inside what it says is there (truncated?)") }
            done += got
        }
        return bytes
    }
}

/// Bytes in memory as a source (tests, and boxes already read).
public struct MP4Bytes: MP4ByteSource {
    /// The bytes.
    public var bytes: [UInt8]
    /// A source over `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var size: UInt64 { UInt64(bytes.count) }
    public func read(at offset: UInt64, count: Int) throws(MP4Error) -> [UInt8] {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else {
            throw MP4Error("damaged file: it ends inside what it says is there (truncated?)")
        }
        return Array(bytes[Int(offset)..<Int(offset) + count])
    }
}

/// Big-endian fields read in order from a box's bytes; running past the end throws (a damaged box
/// names itself), it never traps.
struct MP4Cursor {
    let bytes: [UInt8]
    private(set) var at = 0
    /// The box being read, for the error.
    let box: String

    init(_ bytes: [UInt8], box: String) {
        self.bytes = bytes
        self.box = box
    }

    var remaining: Int { bytes.count - at }

    private func short() -> MP4Error { MP4Error("damaged file: box '\(box)' is shorter than its fields") }

    mutating func take(_ n: Int) throws(MP4Error) -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw short() }
        defer { at += n }
        return bytes[at..<at + n]
    }

    mutating func skip(_ n: Int) throws(MP4Error) { _ = try take(n) }

    mutating func uint(_ width: Int) throws(MP4Error) -> UInt64 {
        try take(width).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func u8() throws(MP4Error) -> UInt8 { UInt8(try uint(1)) }
    mutating func u16() throws(MP4Error) -> UInt16 { UInt16(try uint(2)) }
    mutating func u32() throws(MP4Error) -> UInt32 { UInt32(try uint(4)) }
    mutating func u64() throws(MP4Error) -> UInt64 { try uint(8) }

    /// A full box's version (its flags skipped).
    mutating func version() throws(MP4Error) -> UInt8 {
        let v = try u8()
        try skip(3)
        return v
    }
}

/// Bits read most significant first (an AudioSpecificConfig's fields); nil past the end.
struct MP4Bits {
    let bytes: [UInt8]
    private var bit = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func read(_ n: Int) -> Int? {
        guard bit + n <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0..<n {
            value = value << 1 | Int(bytes[bit / 8] >> (7 - UInt8(bit % 8)) & 1)
            bit += 1
        }
        return value
    }
}

/// A box's type as text for messages and comparisons: printable ASCII as it is, other bytes as `?`.
func fourCC<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    String(decoding: bytes.map { (0x20...0x7e).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}

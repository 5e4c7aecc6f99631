// SPDX-License-Identifier: MIT
import Glibc

/// File names are bytes; the player's paths are `String`s. `FileSystemPath` maps one to the other
/// without loss (MirBSD's OPTU-8 escape): bytes that are valid UTF-8 become their characters;
/// every byte that is not part of valid UTF-8 — and, so that the mapping stays one to one, every
/// byte of a valid sequence for U+EF80…U+EFFF — becomes the private-use scalar U+EF00 + byte
/// (U+EF80…U+EFFF). Turning the string back into bytes (`bytes`, `cPath`) gives exactly the bytes
/// read. Every path from the system (readdir, argv, getcwd, realpath, a playlist's lines) enters
/// through `string(_:)`; every path handed to the system or a library leaves through `cPath`.
/// What is shown to a person maps the escapes to U+FFFD (`DisplayText.inert`); the MPD face and
/// the state file keep the escaped text, so a client can send it back and a restart finds the file.
public enum FileSystemPath {
    /// The scalars that stand for single bytes 0x80…0xFF.
    public static let escapes: ClosedRange<UInt32> = 0xEF80...0xEFFF

    /// `bytes` (a name or path, no NUL) as a `String`, losslessly.
    public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let b = Array(bytes)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < b.count {
            let lead = b[i]
            if lead < 0x80 { out.append(Unicode.Scalar(lead)); i += 1; continue }
            if let (scalar, length) = decode(b, at: i) {
                if escapes.contains(scalar) {
                    for k in i..<(i + length) { out.append(escape(b[k])) }
                } else {
                    out.append(Unicode.Scalar(scalar)!)
                }
                i += length
            } else {
                out.append(escape(lead))
                i += 1
            }
        }
        return String(out)
    }

    /// The bytes `path` stands for: escapes back to their bytes, everything else as UTF-8.
    public static func bytes(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if escapes.contains(scalar.value) {
                out.append(UInt8(scalar.value - 0xEF00))
            } else {
                out += UTF8.encode(scalar).map { Array($0) } ?? []
            }
        }
        return out
    }

    /// Whether `path` holds an escaped byte (it was not valid UTF-8 on disk).
    public static func hasEscapes(_ path: String) -> Bool {
        path.unicodeScalars.contains { escapes.contains($0.value) }
    }

    private static func escape(_ byte: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(0xEF00 + UInt32(byte))!
    }

    /// The scalar of the valid, shortest-form UTF-8 sequence at `i` (not a surrogate, at most
    /// U+10FFFF) and its length; nil when the bytes there are not one.
    private static func decode(_ b: [UInt8], at i: Int) -> (UInt32, Int)? {
        let lead = b[i]
        let length: Int, minimum: UInt32
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; minimum = 0x80; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; minimum = 0x800; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; minimum = 0x10000; value = UInt32(lead & 0x07)
        default: return nil
        }
        guard i + length <= b.count else { return nil }
        for k in (i + 1)..<(i + length) {
            guard b[k] & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(b[k] & 0x3F)
        }
        guard value >= minimum, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return nil }
        return (value, length)
    }
}

/// `path` as the NUL-terminated bytes a system call or C library takes (escapes turned back into
/// their bytes: see `FileSystemPath`). Pass it where a `const char *` path goes: `open(cPath(p), …)`.
public func cPath(_ path: String) -> [CChar] {
    FileSystemPath.bytes(path).map { CChar(bitPattern: $0) } + [0]
}

/// A C string from the system (a `d_name`, `argv`, `realpath`'s answer) as a path `String`.
public func pathString(cString: UnsafePointer<CChar>) -> String {
    FileSystemPath.string(UnsafeBufferPointer(start: cString, count: strlen(cString)).lazy.map { UInt8(bitPattern: $0) })
}

/// Opens a file that came from outside (a track, a playlist, a cover, the config, the cards map,
/// bookmarks) for reading, refusing anything but a regular file: a FIFO would block the reader for
/// good, a device might never end. Opens with O_NONBLOCK (a FIFO's open returns at once), checks
/// the open file itself with fstat (no race with a rename), then clears O_NONBLOCK. The caller
/// closes the descriptor. `noFollow`: refuse a symbolic link as the last component.
public func openRegularFile(_ path: String, noFollow: Bool = false) throws(SystemError) -> Int32 {
    let name = cPath(path)
    let fd = Int32(try sys("open", path) { Int(open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (noFollow ? O_NOFOLLOW : 0))) })
    var st = stat()
    guard fstat(fd, &st) == 0 else {
        let code = errno
        close(fd)
        throw SystemError(call: "open", subject: path, errno: code)
    }
    guard st.st_mode & S_IFMT == S_IFREG else {
        close(fd)
        let isDir = st.st_mode & S_IFMT == S_IFDIR
        throw SystemError(call: "open", subject: path, errno: isDir ? EISDIR : EINVAL,
                          reason: isDir ? nil : "not a regular file")
    }
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    return fd
}

/// Creates the temporary file a whole-file write goes through, beside `path`:
/// `FOLDER/.NAME.PID.N.tmp`, `O_CREAT|O_EXCL|O_NOFOLLOW` (never an existing file, never through a
/// link), trying a few N. The caller writes, fsyncs, renames it over `path` or unlinks it.
public func createTemporary(beside path: String, fallbackName: String = "file") throws(SystemError) -> (path: String, fd: Int32) {
    let cut = path.utf8.lastIndex(of: UInt8(ascii: "/"))
    let folder = cut.map { String(path[..<$0]) } ?? "."
    let base = cut.map { String(path[path.index(after: $0)...]) }.flatMap { $0.isEmpty ? nil : $0 } ?? fallbackName
    var temp = ""
    var fd: Int32 = -1
    for attempt in 0..<8 {
        temp = "\(folder.isEmpty ? "" : folder)/.\(base).\(getpid()).\(attempt).tmp"
        fd = open(cPath(temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd >= 0 || errno != EEXIST { break }
    }
    let opened = fd
    _ = try sys("open", temp) { Int(opened) }
    return (temp, opened)
}

/// What kind of file a path names, following links (nil when it does not exist or cannot be stat'ed).
public enum FileKind: Equatable, Sendable {
    case regular, directory, other
}

/// The kind of `path` (after links), or nil.
public func fileKind(_ path: String) -> FileKind? {
    var st = stat()
    guard stat(cPath(path), &st) == 0 else { return nil }
    switch st.st_mode & S_IFMT {
    case S_IFREG: return .regular
    case S_IFDIR: return .directory
    default: return .other
    }
}

/// The identity of the directory (or file) at `path` after links, "dev:inode", or nil.
public func fileIdentity(_ path: String) -> String? {
    var st = stat()
    guard stat(cPath(path), &st) == 0 else { return nil }
    return "\(st.st_dev):\(st.st_ino)"
}

/// The identities (`fileIdentity`) of the folders above `path`, up to `/`: a walk that starts at
/// `path` seeds its visited set with them, so a link back to one of them (`music/loop → music`)
/// is not walked again.
public func ancestorIdentities(_ path: String) -> Set<String> {
    var result = Set<String>()
    var current = path
    for _ in 0..<64 {
        current = current.hasSuffix("/") ? current + ".." : current + "/.."
        guard let id = fileIdentity(current), result.insert(id).inserted else { break }
    }
    return result
}

/// Whether a path exists (any kind of file).
public func fileExists(_ path: String) -> Bool {
    access(cPath(path), F_OK) == 0
}

/// Whether a path is a directory.
public func isDirectory(_ path: String) -> Bool {
    fileKind(path) == .directory
}

/// The names in a directory (without `.` and `..`), unsorted, decoded losslessly
/// (`FileSystemPath`); throws when it cannot be read.
public func directoryEntries(_ path: String) throws(SystemError) -> [String] {
    guard let dir = opendir(cPath(path)) else { throw SystemError(call: "opendir", subject: path, errno: errno) }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { pathString(cString: $0) }
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Reads a whole regular file (bounded by `limit` bytes, so a wrong path to a huge file cannot
/// exhaust memory; a FIFO or device is refused: `openRegularFile`).
public func readFile(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
    let fd = try openRegularFile(path)
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = try sys("read", path) { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
        if n == 0 { break }
        bytes += chunk[0..<n]
        if bytes.count > limit { throw SystemError(call: "read", subject: path, errno: EFBIG) }
    }
    return bytes
}

/// The absolute form of `path` against the current directory (no symlink resolution).
public func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buf = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buf, buf.count) != nil else { return path }
    let cwd = FileSystemPath.string(buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
    return resolveDots(cwd + "/" + path)
}

private func resolveDots(_ path: String) -> String {
    var parts: [Substring] = []
    for p in path.split(separator: "/") {
        if p == "." { continue }
        if p == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
        parts.append(p)
    }
    return "/" + parts.joined(separator: "/")
}

/// Writes all of `text` to `fd`, retrying short writes and EINTR; gives up quietly on other
/// errors (a closed terminal or log must never stop the player).
public func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)[...]
    var attempts = 0
    while !bytes.isEmpty && attempts < 1000 {
        attempts += 1
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n > 0 { bytes = bytes.dropFirst(n) } else if n < 0 && errno == EINTR { continue } else { return }
    }
}

/// A small text file (a /proc or sysfs entry, a lock file) as UTF-8, or nil when it cannot be read
/// or is longer than `limit` bytes.
public func readFileText(_ path: String, limit: Int = 1 << 20) -> String? {
    (try? readFile(path, limit: limit)).map { String(decoding: $0, as: UTF8.self) }
}

// SPDX-License-Identifier: MIT
import Glibc

/// Whether a path exists (any kind of file).
public func fileExists(_ path: String) -> Bool {
    access(path, F_OK) == 0
}

/// Whether a path is a directory.
public func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

/// The names in a directory (without `.` and `..`), unsorted; throws when it cannot be read.
public func directoryEntries(_ path: String) throws(SystemError) -> [String] {
    guard let dir = opendir(path) else { throw SystemError(call: "opendir", subject: path, errno: errno) }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Reads a whole file (bounded by `limit` bytes, so a wrong path to a huge file cannot exhaust
/// memory).
public func readFile(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
    let fd = Int32(try sys("open", path) { Int(open(path, O_RDONLY | O_CLOEXEC)) })
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
    let cwd = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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

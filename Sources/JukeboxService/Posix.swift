// SPDX-License-Identifier: MIT
import Glibc

/// A failed system call: which call, on what, and errno's text.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The call that failed, e.g. "rename".
    public var call: String
    /// What it was called on (a path), if anything.
    public var subject: String
    /// errno at the failure.
    public var errno: Int32
    /// Why, when errno's text would not say it (a check of ours, not a failed call).
    public var reason: String? = nil

    /// The reason as a person reads it: `rename /a → /b: No space left on device`.
    public var description: String {
        "\(call) \(subject): \(reason ?? String(cString: strerror(errno)))"
    }
}

/// The one place the service calls into libc: retries EINTR (bounded) and turns -1 into a
/// typed error naming the call and its subject.
@discardableResult
func sys(_ call: String, _ subject: String = "", _ body: () -> Int) throws(SystemError) -> Int {
    for _ in 0..<100 {
        let r = body()
        if r != -1 { return r }
        if errno == EINTR { continue }
        throw SystemError(call: call, subject: subject, errno: errno)
    }
    throw SystemError(call: call, subject: subject, errno: EINTR)
}

/// Seconds on CLOCK_MONOTONIC (never jumps with the wall clock).
public func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Seconds since the epoch on CLOCK_REALTIME: for time stamps people read, never for intervals.
public func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// `seconds` since the epoch as local time, `2026-12-01 04:47:43` (`dateAndTime`) or `04:47:43.250`
/// (time of day with milliseconds).
public func wallClockText(_ seconds: Double, dateAndTime: Bool = true) -> String {
    var t = time_t(seconds.rounded(.down))
    var parts = tm()
    localtime_r(&t, &parts)
    func pad(_ v: Int32, _ width: Int = 2) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    let time = pad(parts.tm_hour) + ":" + pad(parts.tm_min) + ":" + pad(parts.tm_sec)
    guard dateAndTime else {
        return time + "." + pad(Int32((seconds - seconds.rounded(.down)) * 1000), 3)
    }
    return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1) + "-" + pad(parts.tm_mday) + " " + time
}

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

/// A small text file (a /proc entry) or nil.
func readFileText(_ path: String) -> String? {
    (try? readFile(path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
}

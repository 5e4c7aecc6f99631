// SPDX-License-Identifier: MIT
import CWeb
import Glibc
import JukeboxService
import JukeboxSystem

/// The PIN's hash in `web-pin` (one line, yescrypt's `$y$…` through libcrypt), mode 0600,
/// written atomically with the service's own `writeAtomically`; never the PIN itself.
public struct PinStore: Sendable {
    public let path: String

    public init(folder: String) { path = folder + "/web-pin" }

    /// The stored hash, nil when no PIN is set (no file, or not a hash).
    public func hash() -> String? {
        // O_NOFOLLOW: a link planted in the state folder is not followed.
        guard let fd = try? openRegularFile(path, noFollow: true) else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = read(fd, &bytes, bytes.count)
        guard n > 0 else { return nil }
        let text = String(decoding: bytes[0..<n], as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return text.hasPrefix("$") ? text : nil
    }

    /// Hashes `pin` and stores it; throws when it cannot.
    public func set(_ pin: String) throws(SystemError) {
        var out = [CChar](repeating: 0, count: 512)
        guard jb_web_hash_secret(pin, &out, out.count) == 0 else {
            let reason = jb_web_crypt_problem().map { String(cString: $0) } ?? "libcrypt could not hash the PIN"
            throw SystemError(call: "crypt_r", subject: "yescrypt", errno: EINVAL, reason: reason)
        }
        let hash = out.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        try writeAtomically(Array((hash + "\n").utf8), to: path, mode: 0o600)
    }

    /// Whether `pin` is the stored one (false when none is stored).
    public func check(_ pin: String) -> Bool {
        guard let hash = hash() else { return false }
        return jb_web_check_secret(pin, hash) != 0
    }
}

/// `bytes` random bytes from getrandom as lowercase hex (a session or CSRF token).
public func randomToken(bytes: Int = 32) -> String {
    var raw = [UInt8](repeating: 0, count: bytes)
    precondition(jb_web_random(&raw, raw.count) == 0, "getrandom failed")
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: raw.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Tells systemd how the service is doing (`Type=notify`): the notify protocol spoken directly,
/// one datagram per message to the AF_UNIX socket named by `$NOTIFY_SOCKET` (no libsystemd).
///
/// Contract:
/// - Without `$NOTIFY_SOCKET` (not started by systemd, or not `Type=notify`) every call is a
///   no-op: nothing is sent, nothing is counted.
/// - Never blocks (`MSG_DONTWAIT`) and never throws: a message that cannot be sent is counted in
///   `failures` and described in `lastError`; the player goes on.
/// - Not thread-safe: use it from one thread (the runtime's loop).
public final class SystemdNotifier {
    /// `$NOTIFY_SOCKET` as given, when it names a usable address (an absolute path, or `@name`
    /// for the abstract namespace); nil when unset or unusable (then `lastError` says why).
    public let socketAddress: String?
    /// Seconds within which systemd expects a `watchdogPing()` (`$WATCHDOG_USEC`); ping at half
    /// of it. nil: no watchdog, because `$WATCHDOG_USEC` is unset or not a positive number,
    /// `$WATCHDOG_PID` names another process, or there is no socket to ping through.
    public let watchdogInterval: Double?
    /// Messages that could not be sent since start.
    public private(set) var failures = 0
    /// Messages sent since start.
    public private(set) var sent = 0
    /// The last failure (or an unusable `$NOTIFY_SOCKET`), as a person reads it.
    public private(set) var lastError: String?

    private var address = sockaddr_un()
    private var addressLength: socklen_t = 0
    private var fd: Int32 = -1
    private var lastStatus: String?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment` (by default
    /// the process's own), so tests can point it at their own socket.
    public init(environment: [String: String] = SystemdNotifier.processEnvironment()) {
        var usable: String?
        if let raw = environment["NOTIFY_SOCKET"], !raw.isEmpty {
            if let (addr, length) = Self.makeAddress(raw) {
                address = addr
                addressLength = length
                usable = raw
            } else {
                lastError = "NOTIFY_SOCKET \(raw): not an absolute path or @abstract name of at most 107 bytes"
            }
        }
        socketAddress = usable
        watchdogInterval = usable == nil ? nil
            : Self.watchdogInterval(usec: environment["WATCHDOG_USEC"], pid: environment["WATCHDOG_PID"])
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether messages go anywhere (`$NOTIFY_SOCKET` named a usable address).
    public var isEnabled: Bool { socketAddress != nil }

    /// `READY=1`: start-up is finished (state loaded, playing or knowingly waiting).
    public func ready() { send("READY=1") }

    /// `STATUS=text`, only when it differs from the last status sent (so calling it on every
    /// render is cheap). Line breaks in `text` become spaces: the protocol is line-based.
    public func status(_ text: String) {
        let line = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
        guard isEnabled, line != lastStatus else { return }
        if send("STATUS=" + line) { lastStatus = line }
    }

    /// `WATCHDOG=1`: the loop is alive. Call at least every `watchdogInterval / 2` seconds.
    public func watchdogPing() { send("WATCHDOG=1") }

    /// `STOPPING=1`: shutting down (SIGTERM): systemd waits for the exit without alarm.
    public func stopping() { send("STOPPING=1") }

    /// `RELOADING=1` with `MONOTONIC_USEC` (systemd 253+ needs it for `Type=notify-reload`; older
    /// versions ignore it): a reload (SIGHUP) has begun. Follow with `readyAgain()`.
    public func reloading() {
        let usec = UInt64(monotonicNow() * 1_000_000)
        send("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    /// `READY=1` after `reloading()`: the reload is done.
    public func readyAgain() { send("READY=1") }

    /// `EXTEND_TIMEOUT_USEC`: asks for `seconds` more before start-up (or stop) counts as hung;
    /// repeat it during a long first scan of the music folders (`TimeoutStartSec=` is 60 s).
    public func extendTimeout(seconds: Double) {
        send("EXTEND_TIMEOUT_USEC=\(UInt64(max(0, seconds) * 1_000_000))")
    }

    /// Sends one datagram holding `message` (`KEY=value` lines). Returns whether it went out;
    /// false without a socket or on failure (counted).
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard isEnabled else { return false }
        if fd < 0 {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 { return fail("socket", errno) }
        }
        let bytes = Array(message.utf8)
        var result = -1
        // EINTR is the only retry (bounded); a full socket buffer (EAGAIN) is a failure, not a wait.
        for _ in 0..<10 {
            result = bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), $0, addressLength)
                    }
                }
            }
            if result >= 0 || errno != EINTR { break }
        }
        if result < 0 { return fail("sendto", errno) }
        sent += 1
        return true
    }

    private func fail(_ call: String, _ code: Int32) -> Bool {
        failures += 1
        lastError = SystemError(call: call, subject: socketAddress ?? "", errno: code).description
        return false
    }

    /// The socket address for `NOTIFY_SOCKET` and its exact length: a path (with its NUL), or
    /// for `@name` a NUL byte then `name` (abstract names are not NUL-terminated; the length
    /// says where they end). nil for anything else (relative paths, `vsock:`, too long).
    static func makeAddress(_ value: String) -> (sockaddr_un, socklen_t)? {
        var bytes = Array(value.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        guard abstract || bytes.first == UInt8(ascii: "/"), bytes.count > 1 else { return nil }
        if abstract { bytes[0] = 0 }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        // A path needs room for its terminating NUL; an abstract name may fill sun_path.
        guard bytes.count + (abstract ? 0 : 1) <= capacity else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        return (addr, socklen_t(offset + bytes.count + (abstract ? 0 : 1)))
    }

    /// `WATCHDOG_USEC` in seconds, if it is a positive whole number and `WATCHDOG_PID` is unset
    /// or this process's id.
    static func watchdogInterval(usec: String?, pid: String?, ownPID: pid_t = getpid()) -> Double? {
        guard let usec, let micro = UInt64(usec), micro > 0 else { return nil }
        if let pid, !pid.isEmpty {
            guard let wanted = pid_t(pid), wanted == ownPID else { return nil }
        }
        return Double(micro) / 1_000_000
    }

    /// The variables the notifier reads, from the process environment.
    public static func processEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(key) { env[key] = String(cString: value) }
        }
        return env
    }
}

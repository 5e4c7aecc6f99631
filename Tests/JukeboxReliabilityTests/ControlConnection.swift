// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxService

/// One client connection to the player's control socket, speaking its line protocol directly
/// (spawning `jukebox ctl` per command would cost more than the commands, and hundreds are sent).
///
/// A reply is every line up to and including the first that starts with `ok` or `error:`
/// (lines before it are indented continuation lines).
final class ControlConnection {
    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to the socket at `path`; nil when nothing answers there (yet).
    init?(path: String) {
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { return nil }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { close(s); return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard ok == 0 else { close(s); return nil }
        fd = s
    }

    deinit { close(fd) }

    /// Sends one line without waiting for the answer (the kill may come before it).
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            done += n
        }
    }

    /// Sends `line` and returns the reply's lines, or nil when none came within `timeout`
    /// seconds or the connection closed.
    func ask(_ line: String, timeout: Double = 5) -> [String]? {
        send(line)
        return reply(timeout: timeout)
    }

    /// The next complete reply.
    func reply(timeout: Double = 5) -> [String]? {
        var lines: [String] = []
        let end = Date().addingTimeInterval(timeout)
        while true {
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                lines.append(line)
                if line.hasPrefix("ok") || line.hasPrefix("error:") { return lines }
            }
            let left = end.timeIntervalSinceNow
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(left * 1000) + 1) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return nil }
            pending += buffer[..<n]
        }
    }

    /// `status --json`, decoded.
    func status(timeout: Double = 5) -> PlayerStatus? {
        guard let last = ask("status --json", timeout: timeout)?.last, last.hasPrefix("ok ") else { return nil }
        return PlayerStatus(text: last.dropFirst(3))
    }

    /// Waits for the player's socket to answer; the connection, or nil after `timeout`.
    static func waitForPlayer(at path: String, timeout: Double) -> ControlConnection? {
        let end = Date().addingTimeInterval(timeout)
        repeat {
            if let c = ControlConnection(path: path), c.ask("version", timeout: 2) != nil { return c }
            usleep(20_000)  // polls another process's socket until it answers (nothing here to wait on)
        } while Date() < end
        return nil
    }
}

/// Playing and moving on (another track, or the position 0.2 s further) within `seconds`: the
/// seconds it took, or nil. The soaks and the fault storm all ask this one question.
func advancing(_ control: ControlConnection, within seconds: Double) -> Double? {
    let start = Date()
    var first: PlayerStatus?
    let ok = waitFor(seconds) {
        guard let s = control.status(), s.phase == "playing" else { return false }
        guard let before = first else { first = s; return false }
        if s.path != before.path { return true }
        // Back to an earlier place in the same track (repeat one from the end, as seed
        // 1796299536685 found: a play at 60.0 of 60.0 ends at once and starts over; or a seek
        // back): that is the new baseline, or the first sample would stay out of reach.
        if (s.position ?? 0) < (before.position ?? 0) { first = s; return false }
        return (s.position ?? 0) > (before.position ?? 0) + 0.2
    }
    return ok ? Date().timeIntervalSince(start) : nil
}

/// `status --json`, as the bridges read it.
typealias PlayerStatus = PlayerStatusJSON

extension PlayerStatusJSON {
    /// `repeat`, under a name that needs no backquotes.
    var repeatMode: String { self.repeat }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures

/// A raw MPD protocol connection over TCP to 127.0.0.1, for tests that compare or abuse servers
/// byte by byte (mpc and python-mpd2 hide what a server really sent).
final class MPDWire {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var closed = false

    /// Connects; `timeout` bounds every later read (a reply that never comes is nil, not a hang).
    init(port: Int, timeout: Int = 5, receiveBuffer: Int32? = nil) throws {
        fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else {
            let e = errno
            close(fd)
            throw NSError(domain: "mpdwire", code: Int(e), userInfo: [NSLocalizedDescriptionKey: "cannot connect to 127.0.0.1:\(port): \(String(cString: strerror(e)))"])
        }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends all of `text`; false when the peer is gone.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// One line without its newline; nil at the end of the stream or after the read timeout.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 {
                closed = true
                return nil
            }
            buffer += chunk[..<n]
        }
    }

    /// The lines of one reply, its final `OK` or `ACK …` line included; nil when the connection
    /// ended (or went silent) first.
    func readReply() -> [String]? {
        var lines: [String] = []
        while let line = readLine() {
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") { return lines }
        }
        return nil
    }

    /// Sends `lines` (each ended by a newline) and reads one reply.
    func request(_ lines: String) -> [String]? {
        guard send(lines + "\n") else { return nil }
        return readReply()
    }

    /// The `key: value` pairs of a reply (its last line left out).
    static func pairs(_ reply: [String]) -> [(key: String, value: String)] {
        reply.dropLast().compactMap { line in
            guard let r = line.range(of: ": ") else { return nil }
            return (String(line[..<r.lowerBound]), String(line[r.upperBound...]))
        }
    }

    /// A port nobody listens on now (the kernel's pick for port 0; another program may take it
    /// before it is used: servers that cannot bind port 0 retry with another).
    static func freePort() throws -> Int {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw NSError(domain: "mpdwire", code: 1, userInfo: [NSLocalizedDescriptionKey: "no free port"]) }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// Debian's real `mpd` on 127.0.0.1 with a private config: its own music folder, database, state,
/// stored playlists and log in `folder`; the null output (software mixer); no zeroconf. The
/// system's mpd service is never touched.
final class RealMPD {
    let process: Process
    let port: Int
    let folder: String

    /// Starts mpd on a free port (another pick when the port was taken meanwhile) and waits until
    /// it answers and its database holds `songs` songs; throws after `timeout` seconds.
    init(folder: String, music: String, songs: Int, timeout: Double = 20) throws {
        self.folder = folder
        // Without a playlist folder MPD hides the stored-playlist commands.
        try FileManager.default.createDirectory(atPath: folder + "/playlists", withIntermediateDirectories: true)
        var lastError = ""
        for _ in 0..<5 {
            let port = try MPDWire.freePort()
            let config = """
            music_directory "\(music)"
            db_file "\(folder)/mpd.db"
            state_file "\(folder)/mpd.state"
            playlist_directory "\(folder)/playlists"
            log_file "\(folder)/mpd.log"
            bind_to_address "127.0.0.1"
            port "\(port)"
            zeroconf_enabled "no"
            auto_update "no"
            audio_output {
              type "null"
              name "null"
              mixer_type "software"
            }

            """
            try config.write(toFile: folder + "/mpd.conf", atomically: true, encoding: .utf8)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mpd")
            p.arguments = ["--no-daemon", folder + "/mpd.conf"]
            _ = FileManager.default.createFile(atPath: folder + "/mpd.err", contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: folder + "/mpd.err")
            p.standardError = FileHandle(forWritingAtPath: folder + "/mpd.err")
            p.standardInput = FileHandle.nullDevice
            try p.run()
            var wire: MPDWire?
            _ = waitFor(timeout) {
                if !p.isRunning { return true }
                wire = try? MPDWire(port: port)
                return wire != nil
            }
            if let wire, p.isRunning, wire.readLine()?.hasPrefix("OK MPD ") == true {
                // The first start scans the folder into the database; wait for the songs.
                let ready = waitFor(timeout) {
                    let stats = MPDWire.pairs(wire.request("stats") ?? [])
                    return stats.contains { $0.key == "songs" && $0.value == String(songs) }
                }
                if ready {
                    self.process = p
                    self.port = port
                    return
                }
                lastError = "mpd's database never held \(songs) songs"
            } else {
                lastError = (try? String(contentsOfFile: folder + "/mpd.log", encoding: .utf8)) ?? ""
                lastError += (try? String(contentsOfFile: folder + "/mpd.err", encoding: .utf8)) ?? ""
            }
            Self.stop(p)
        }
        throw NSError(domain: "mpd", code: 1, userInfo: [NSLocalizedDescriptionKey: "mpd did not start: \(lastError)"])
    }

    /// SIGTERM, then SIGKILL after 5 s; reaped.
    static func stop(_ p: Process) {
        if p.isRunning {
            p.terminate()
            if !waitFor(5, { !p.isRunning }) { kill(p.processIdentifier, SIGKILL) }
        }
        p.waitUntilExit()
    }

    func stop() { Self.stop(process) }
}

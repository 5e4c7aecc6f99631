// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxSystem

/// A TCP connection to a face on 127.0.0.1 that the bench holds open while it measures, as a
/// phone or a home server would: MPD's `idle`, the web app's event stream. Reads never block (the
/// sampling loop drains it between samples), so a face that sends a lot never waits on the bench.
final class LoopbackClient {
    private let fd: Int32
    /// Everything read so far.
    private(set) var received = ""

    /// Connects to 127.0.0.1:`port` (retried for up to `within` seconds while the face starts;
    /// 0: once) and sends `hello`.
    init(port: Int, hello: String, within: Double = 10) throws {
        var connected: Int32 = -1
        _ = waitFor(within) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rc == 0 { connected = fd; return true }
            close(fd)
            return false
        }
        guard connected >= 0 else { throw BenchError("nothing listens on 127.0.0.1:\(port)") }
        fd = connected
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        try send(hello)
    }

    /// Sends `text` whole (a few bytes: the socket's buffer takes it at once).
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN { usleep(1000); continue }  // a full buffer: the peer reads soon
            guard n > 0 else { throw BenchError("send to a face: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    /// Reads what has arrived, without waiting; returns it (and keeps it in `received`).
    @discardableResult
    func drain() -> String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var got = ""
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got += String(decoding: buffer[..<n], as: UTF8.self)
        }
        received += got
        return got
    }

    deinit { close(fd) }
}

/// An MPD client parked in `idle`, as a phone's MPD app is: each answer (`changed: …` then `OK`)
/// is followed by another `idle`.
final class MPDIdleClient {
    private let client: LoopbackClient
    /// How many `idle` answers came back (each a change the face announced).
    private(set) var changes = 0

    init(port: Int) throws {
        client = try LoopbackClient(port: port, hello: "")
        guard waitFor(10, { self.client.drain(); return self.client.received.hasPrefix("OK MPD ") }) else {
            throw BenchError("MPD on port \(port) did not greet: \(client.received.prefix(200))")
        }
        try client.send("idle\n")
    }

    /// Takes what came; answers a finished `idle` with the next one.
    func poll() throws {
        let got = client.drain()
        let answers = got.components(separatedBy: "\nOK\n").count - 1 + (got.hasPrefix("OK\n") ? 1 : 0)
        guard answers > 0 else { return }
        changes += answers
        try client.send("idle\n")
    }
}

/// The web app's event stream (`GET /api/events`), as an open page holds it.
final class WebEventsClient {
    private let client: LoopbackClient

    init(port: Int) throws {
        client = try LoopbackClient(port: port, hello: "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
    }

    func poll() { client.drain() }

    /// The `event: status` messages received so far.
    var statusEvents: Int { client.received.components(separatedBy: "event: status").count - 1 }
}

/// mosquitto on 127.0.0.1 with a private config (no persistence, anonymous clients), as the MQTT
/// tests start it; it dies with the bench (`ChildDeath`), and with `stop()` or its deinit.
final class BenchBroker {
    static let binary = "/usr/sbin/mosquitto"
    let port: Int
    private let child: Child

    /// nil when mosquitto is not installed.
    init?(in ws: Workspace) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { return nil }
        port = try IcecastServer.freePort()
        let conf = ws.path("mosquitto-\(port).conf")
        // As root, mosquitto would become user mosquitto, which cannot read the workspace.
        let user = geteuid() == 0 ? "user root\n" : ""
        try "listener \(port) 127.0.0.1\npersistence false\nallow_anonymous true\n\(user)".write(toFile: conf, atomically: true, encoding: .utf8)
        let command = ChildDeath.command(Self.binary, ["-c", conf])
        child = try Child(binary: command.executable, args: command.arguments, environment: [:], outputBase: ws.path("mosquitto-\(port)"))
        guard waitFor(30, { (try? LoopbackClient(port: self.port, hello: "", within: 0)) != nil || self.child.poll() }), !child.poll() else {
            throw BenchError("mosquitto did not listen on \(port): \(child.stderr.suffix(400))")
        }
    }

    func stop() {
        child.send(SIGTERM)
        _ = try? child.wait(timeout: 10)
    }
}

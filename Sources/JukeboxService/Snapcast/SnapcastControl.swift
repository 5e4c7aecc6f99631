// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// `jukebox snapcast-control`: snapserver's stream plugin ("controlscript") for a jukebox stream,
/// bridging snapserver's JSON-RPC on stdin/stdout to the control socket, so Snapcast's clients
/// (Snapweb, the Android app) show what plays and control the player.
///
/// On start it says `Plugin.Stream.Ready`. Requests (`SnapcastBridge.action`) become control
/// lines, each on a connection of its own, answered with "ok" or the player's error. An `events`
/// stream on one more connection wakes it at each change; it then reads `status --json` and
/// sends `Plugin.Stream.Player.Properties` when the properties changed. With no player there it
/// reports a stopped, uncontrollable stream and connects again every second; it ends when
/// snapserver closes its stdin. One thread, one `poll`; a request waits at most `timeout`.
public final class SnapcastControl {
    /// Where the control socket is, asked again at every connection (the player may start later).
    private let socketPath: () -> String
    private let input: Int32
    private let output: Int32
    private let log: (String) -> Void
    /// Seconds a control request waits for its reply.
    public var timeout = 3.0
    /// Seconds between attempts to reach a player that is not there.
    public var retrySeconds = 1.0

    private var events: Int32 = -1
    private var eventBuffer = LineSplitter(maxLength: 64 * 1024)
    private var inputBuffer = LineSplitter(maxLength: 64 * 1024)
    private var lastProperties: String?
    private var retryAt = 0.0
    /// The missing player was logged (once until it is reached).
    private var saidMissing = false

    /// A bridge reading snapserver's lines from `input` and writing to `output`; `log` gets lines
    /// for snapserver's log (stderr).
    public init(socketPath: @escaping () -> String, input: Int32 = 0, output: Int32 = 1,
                log: @escaping (String) -> Void = { writeAll(2, "jukebox snapcast-control: \($0)\n") }) {
        self.socketPath = socketPath
        self.input = input
        self.output = output
        self.log = log
    }

    deinit { if events >= 0 { close(events) } }

    /// Runs until snapserver closes stdin (or stdout); returns the exit status (0).
    public func run() -> Int32 {
        guard send(SnapcastBridge.notification("Plugin.Stream.Ready")) else { return 0 }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if events < 0 && monotonicNow() >= retryAt { connectEvents() }
            var fds = [pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: events, events: Int16(POLLIN), revents: 0)]
            let wait = events >= 0 ? -1 : Int32(max(1, ((retryAt - monotonicNow()) * 1000).rounded(.up)))
            let ready = poll(&fds, 2, wait)
            if ready < 0 {
                if errno == EINTR { continue }
                log("poll: \(errnoText(errno))")
                return 1
            }
            if fds[0].revents != 0 {
                let n = read(input, &buffer, buffer.count)
                if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { return 0 }  // snapserver is gone
                var lines: [[UInt8]?] = []
                if n > 0 { inputBuffer.feed(buffer[0..<n]) { lines.append($0) } }
                for line in lines {
                    guard let line else {
                        guard send(SnapcastBridge.error(id: "null", code: -32600, message: "request too long")) else { return 0 }
                        continue
                    }
                    if line.isEmpty { continue }
                    guard handle(line) else { return 0 }
                }
            }
            if events >= 0 && fds[1].revents != 0 {
                let n = read(events, &buffer, buffer.count)
                if n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)) {
                    // The player went away (or restarts): say so, and look for it again.
                    close(events)
                    events = -1
                    retryAt = monotonicNow() + retrySeconds
                    log("the player at \(socketPath()) closed the connection")
                    guard refresh() else { return 0 }
                    continue
                }
                // Any line is a change: one status read covers all that came at once.
                eventBuffer.feed(buffer[0..<max(0, n)]) { _ in }
                guard refresh() else { return 0 }
            }
        }
    }

    /// Carries out one request; false when stdout is closed.
    private func handle(_ line: [UInt8]) -> Bool {
        switch SnapcastBridge.action(for: line) {
        case .ignore:
            return true
        case .reply(let text):
            return send(text)
        case .properties(let id):
            let properties = SnapcastBridge.properties(status: status())
            return send(SnapcastBridge.result(id: id, properties))
        case .control(let id, let command):
            let reply = request(command)
            guard let reply else {
                return send(SnapcastBridge.error(id: id, code: SnapcastBridge.refusedCode, message: "jukebox is not running or did not answer"))
            }
            let last = reply.split(separator: "\n").last.map(String.init) ?? reply
            if last.hasPrefix("ok") { return send(SnapcastBridge.result(id: id, "\"ok\"")) }
            let message = last.hasPrefix("error: ") ? String(last.dropFirst(7)) : last
            return send(SnapcastBridge.error(id: id, code: SnapcastBridge.refusedCode, message: message))
        }
    }

    /// Sends the properties when they changed since the last ones sent; false when stdout is closed.
    private func refresh() -> Bool {
        let properties = SnapcastBridge.properties(status: events >= 0 ? status() : nil)
        guard properties != lastProperties else { return true }
        lastProperties = properties
        return send(SnapcastBridge.notification("Plugin.Stream.Player.Properties", params: properties))
    }

    /// The JSON after `ok ` of `status --json`, nil when no player answered.
    private func status() -> String? {
        guard let reply = request("status --json"), reply.hasPrefix("ok {") else { return nil }
        return String(reply.dropFirst(3))
    }

    /// One request on a connection of its own; nil when no player answered.
    private func request(_ line: String) -> String? {
        guard let (_, reply) = try? ControlClient.connect(path: socketPath(), request: line, timeout: timeout) else { return nil }
        return reply
    }

    private func connectEvents() {
        let path = socketPath()
        guard let fd = try? ControlSocket.connect(path: path) else {
            retryAt = monotonicNow() + retrySeconds
            if !saidMissing { log("no player at \(path); trying again every \(retrySeconds) s") }
            saidMissing = true
            return
        }
        let line = Array("events\n".utf8)
        guard line.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
            close(fd)
            retryAt = monotonicNow() + retrySeconds
            return
        }
        events = fd
        log("following the player at \(path)")
        saidMissing = false
        _ = refresh()
    }

    /// Writes one line to snapserver; false when it is gone (stdout closed).
    private func send(_ line: String) -> Bool {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if n > 0 { bytes = bytes.dropFirst(n) } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }
}

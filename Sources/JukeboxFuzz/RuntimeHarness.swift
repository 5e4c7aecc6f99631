// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// How the running player answers control lines: one `Runtime` loop (fake audio, a state file
/// in the private folder) runs for the whole process; each input is sent on a fresh control
/// socket connection. The runtime must survive it, answer only in its reply syntax, and close
/// the connection once the input ends. Unlike the other harnesses the player's state carries
/// over from input to input (each starts with `clear` and `interrupt end` to keep it bounded).
enum RuntimeHarness {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ runtime: Runtime) { self.runtime = runtime }
    }

    static let socketPath: String = {
        let path = StateHarness.folder + "/control"
        let control: ControlSocket
        do { control = try ControlSocket(path: path) } catch { fatalError("control socket: \(error)") }
        let mailbox = Mailbox()
        let audio = SilentAudio(mailbox: mailbox)
        let runtime = Runtime(state: State(), audio: audio, store: StateStore(path: StateHarness.folder + "/runtime.json"),
                              status: SilentStatus(), log: Log(level: .error), mailbox: mailbox, control: control)
        runtime.controlSettings.version = "jukebox-fuzz"
        // `add` and `load` find one track per path (with a length from the path, some unknown).
        runtime.loadTracks = { paths in
            (paths.map { TrackInfo(path: $0, duration: $0.utf8.count % 3 == 0 ? nil : Double($0.utf8.count)) }, [])
        }
        let box = Box(runtime)
        Thread { _ = box.runtime.run(initial: [.add([TrackInfo(path: "/m/a.flac", duration: 90), TrackInfo(path: "/m/b.ogg")])]) }.start()
        return path
    }()

    static func run(_ data: [UInt8]) -> Bool {
        let fd: Int32
        do { fd = try ControlSocket.connect(path: socketPath) } catch { fatalError("property failed: the runtime stopped listening: \(error)") }
        defer { close(fd) }
        let input = Array("clear\ninterrupt end\n".utf8) + data
        var offset = 0
        while offset < input.count {
            let n = input[offset...].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            require(n > 0, "cannot write to the control socket: \(errno)")
            offset += n
        }
        shutdown(fd, Int32(SHUT_WR))
        // Everything the runtime answers, until it closes the connection.
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = monotonicNow() + 10
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, (deadline - monotonicNow()) * 1000))
            let ready = poll(&p, 1, left)
            // libFuzzer's -timeout watchdog is a SIGALRM timer: an interrupted wait is no answer.
            if ready < 0 && errno == EINTR { continue }
            require(ready == 1, "the runtime did not close the connection within 10 s (poll \(ready), errno \(errno))")
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            reply += buffer[0..<n]
        }
        let lines = reply.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        require(reply.isEmpty || reply.last == 0x0A, "a reply without its line end")
        require(lines.count >= 2, "no replies to clear and interrupt end: \(String(decoding: reply, as: UTF8.self).debugDescription)")
        var accepted = false
        for raw in lines {
            let line = String(decoding: raw, as: UTF8.self)
            let known = line == "ok" || line.hasPrefix("ok ") || line.hasPrefix("error: ") || line.hasPrefix("  ") || line.hasPrefix("event ")
            require(known, "a reply outside the reply syntax: \(line.debugDescription)")
            if line.hasPrefix("ok ") { accepted = true }
        }
        return accepted
    }
}

/// An audio engine that plays nothing and reports what a real one would.
final class SilentAudio: AudioPort {
    let mailbox: Mailbox
    var heard: (id: UInt64, seconds: Double)?
    init(mailbox: Mailbox) { self.mailbox = mailbox }
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        heard = (id, seconds)
        mailbox.post(.trackStarted(playID: id))
    }
    func setNext(id: UInt64, path: String) {}
    func clearNext() {}
    func pause() {}
    func resume() {}
    func stop() { heard = nil }
    func release(token: UInt64) {
        heard = nil
        mailbox.post(.deviceReleased(token: token, heard: nil))
    }
    func probe() { mailbox.post(.deviceAvailable) }
    func seek(to seconds: Double) { if let h = heard { heard = (h.id, seconds) } }
    func setVolume(_ percent: Int) {}
    func position() -> (id: UInt64, seconds: Double)? { heard }
    func shutdown() {}
}

/// Status output nobody reads.
final class SilentStatus: StatusSink {
    func render(_ view: StatusView) {}
    func report(_ message: String) {}
}

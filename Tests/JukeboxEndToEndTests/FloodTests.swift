// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// Clients that pipeline commands as fast as they can write them must not hold up another
/// client's `status`: each client's lines are handled a few per pass of the loop, in turn.
final class FloodTests: DaemonTestCase {
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var lines = 0
        func add(_ n: Int) { lock.lock(); lines += n; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return lines }
    }

    /// Sends `line` on a fresh connection and returns the reply line and the seconds it took.
    private func timedRequest(_ line: String) -> (reply: String?, seconds: Double) {
        guard let fd = Self.silentConnection(socket) else { return (nil, 0) }
        defer { close(fd) }
        let start = Date()
        let bytes = Array((line + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { return (nil, 0) }
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !got.contains(0x0A) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = 10 - Date().timeIntervalSince(start)
            guard left > 0, poll(&p, 1, Int32(left * 1000)) == 1 else { return (nil, Date().timeIntervalSince(start)) }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { return (nil, Date().timeIntervalSince(start)) }
            got += buffer[0..<n]
        }
        let seconds = Date().timeIntervalSince(start)
        return (String(decoding: got.prefix { $0 != 0x0A }, as: UTF8.self), seconds)
    }

    func testStatusIsAnsweredWithinASecondWhileFourClientsFloodNext() throws {
        try statusStaysQuickWhileFourClientsFlood("next", at: { $0 }, extra: [:], label: "control")
    }

    /// A flood from four MPD clients (anyone on the LAN): the MPD listener takes a few lines of
    /// each client per pass too. `status`, answered at once (a pipelined `next` waits for the
    /// core, and a client holding more than 1024 lines behind it is closed), measured 0.9-1.4 s
    /// before.
    func testStatusIsAnsweredWithinASecondWhileFourMPDClientsFloodStatus() throws {
        let mpd = dir + "/mpd.sock"
        try statusStaysQuickWhileFourClientsFlood("status", at: { _ in mpd }, extra: ["mpd": ["bind": mpd]], label: "MPD")
    }

    /// Starts a daemon, has four clients of the socket `flooded(controlSocket)` write `command` as
    /// fast as it takes them (reading every reply), then times `status` on the control socket.
    private func statusStaysQuickWhileFourClientsFlood(_ command: String, at flooded: (String) -> String, extra: [String: Any], label: String) throws {
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([a, b], extra: extra.merging(["state": dir + "/state.json"]) { x, _ in x })
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let path = flooded(socket)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: path) }, "no socket at \(path)")
        let replies = Counter()
        var fds: [Int32] = []
        var threads: [Thread] = []
        let chunk = Array(String(repeating: command + "\n", count: 800).utf8)
        for _ in 0..<4 {
            let fd = try XCTUnwrap(Self.silentConnection(path))
            fds.append(fd)
            // Writes as fast as the socket takes them (blocking), and reads every reply.
            threads.append(Thread {
                while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            })
            threads.append(Thread {
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n <= 0 { break }
                    replies.add(buffer[0..<n].filter { $0 == 0x0A }.count)
                }
            })
        }
        threads.forEach { $0.start() }
        defer { for fd in fds { shutdown(fd, Int32(SHUT_RDWR)); close(fd) } }
        XCTAssertTrue(waitFor(20) { replies.value >= 400 }, "the flood never got going: \(replies.value) replies")
        var latencies: [Double] = []
        for _ in 0..<5 {
            let (reply, seconds) = timedRequest("status")
            XCTAssertEqual(reply?.hasPrefix("ok "), true, reply ?? "no reply within 10 s")
            latencies.append(seconds)
        }
        let during = replies.value
        print("status during a flood of \(command) from 4 \(label) clients (\(during) replies so far): "
              + latencies.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", "))
        XCTAssertLessThan(latencies.max() ?? 99, 1.0, "status waited behind the flood")
        // The flood's own pace, for the record (taking turns must not starve the flooders either).
        let from = replies.value, started = Date()
        XCTAssertTrue(waitFor(20) { replies.value >= from + 2000 }, "the flood stalled")
        print("\(label) flood pace: \(Int(2000 / Date().timeIntervalSince(started))) replies/s")
    }
}

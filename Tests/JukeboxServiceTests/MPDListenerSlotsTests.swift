// SPDX-License-Identifier: MIT
import Foundation
import Glibc
@testable import JukeboxService
import XCTest

/// A backend that holds every command (an `add` waiting for the tag reader).
private final class HoldingBackend: MPDBackend {
    var held: [(Result<[String], MPDError>) -> Void] = []
    func run(_ request: MPDRequest, reply: @escaping (Result<[String], MPDError>) -> Void) { held.append(reply) }
}

/// The MPD listener's slots, driven directly (no loop): deterministic where a loop under load
/// is not.
final class MPDListenerSlotsTests: XCTestCase {
    /// Clients that sent a line and left while one pass of the loop accepted a burst of
    /// newcomers: accepted first, they held the slots and the last newcomer was closed without
    /// a greeting (StuckJobTests, 2 runs in 12 under load). Their lines are still read and
    /// handled; they just hold no slot. Live clients still count against `maxClients`.
    func testClientsGoneBeforeTheirLinesWereReadLeaveTheirSlotsToNewcomers() throws {
        let dir = TempDir()
        let path = dir.file("mpd")
        var settings = MPDSettings()
        settings.binds = [path]
        settings.maxClients = 2
        let backend = HoldingBackend()
        let listener = MPDListener(settings: settings) { MPDSession(backend: backend, known: ["add"], password: nil) }
        XCTAssertEqual(listener.problems, [])
        // The pass: only the listener reported ready (the clients' hang-ups came after its poll).
        func acceptPass() {
            var fds = listener.pollFDs()
            fds[0].revents = Int16(POLLIN)
            for i in 1..<fds.count { fds[i].revents = 0 }
            listener.service(fds)
        }
        // Each greeted, sends its add and leaves before the next comes, all within one pass.
        for i in 0..<3 {
            let fd = try ControlSocket.connect(path: path)
            acceptPass()
            XCTAssertEqual(greeting(fd), "OK MPD 0.21.0", "client \(i)")
            let line = "add \(i).flac\n"
            XCTAssertEqual(send(fd, line, line.utf8.count, Int32(MSG_NOSIGNAL)), line.utf8.count)
            close(fd)
        }
        var live: [Int32] = []
        defer { live.forEach { close($0) } }
        for _ in 0..<2 { live.append(try ControlSocket.connect(path: path)) }
        acceptPass()
        XCTAssertEqual(listener.clients.count, 5, "a newcomer was refused a slot held by a client already gone")
        XCTAssertEqual(listener.clients.values.filter { $0.peerGone }.count, 3)
        for fd in live { XCTAssertEqual(greeting(fd), "OK MPD 0.21.0") }
        // A third live client finds no room: closed without a word, as MPD does.
        let refused = try ControlSocket.connect(path: path)
        defer { close(refused) }
        acceptPass()
        XCTAssertEqual(listener.clients.count, 5)
        XCTAssertNil(greeting(refused))
        // The gone clients' lines are still handled, then they close.
        listener.service(readyPass(listener))
        XCTAssertEqual(backend.held.count, 3, "every gone client's add reached the backend")
        XCTAssertEqual(listener.clients.count, 2)
    }

    /// Every client fd reported readable, as poll would once their lines and ends are there.
    private func readyPass(_ listener: MPDListener) -> [pollfd] {
        var fds = listener.pollFDs()
        fds[0].revents = 0
        for i in 1..<fds.count where fds[i].fd >= 0 { fds[i].revents = Int16(POLLIN) }
        return fds
    }

    /// The first line the listener sent on `fd` (nil: closed without one), waiting at most 5 s.
    private func greeting(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !bytes.contains(0x0A), poll(&p, 1, 5000) == 1 {
            var buffer = [UInt8](repeating: 0, count: 256)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        guard let end = bytes.firstIndex(of: 0x0A) else { return nil }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}

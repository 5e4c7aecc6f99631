// SPDX-License-Identifier: MIT
import Foundation
import Glibc
@testable import JukeboxService
import XCTest

/// The control socket's slots, driven directly (no loop): deterministic where a loop under load
/// is not.
final class ControlSocketSlotsTests: XCTestCase {
    /// A burst of fire-and-forget clients (`echo add … | socat`: a line, then gone) still in the
    /// listen queue when a newcomer comes: accepted first, they took the slots and the newcomer
    /// was told "too many connections" (StuckJobTests saw it under AddressSanitizer). Their lines
    /// are still handled; they just hold no slot.
    func testClientsGoneBeforeTheirAcceptLeaveTheirSlotsToNewcomers() throws {
        let dir = TempDir()
        let path = dir.file("control")
        let control = try ControlSocket(path: path)
        // 17: the listen queue's length (backlog 16, and one more).
        for i in 0..<17 {
            let fd = try ControlSocket.connect(path: path)
            let line = "add /music/\(i)\n"
            XCTAssertEqual(send(fd, line, line.utf8.count, Int32(MSG_NOSIGNAL)), line.utf8.count)
            close(fd)
        }
        control.acceptAll()
        XCTAssertEqual(control.clients.count, 17)
        var live: [Int32] = []
        defer { live.forEach { close($0) } }
        for _ in 0..<16 { live.append(try ControlSocket.connect(path: path)) }
        control.acceptAll()
        XCTAssertEqual(control.clients.count, 33, "a newcomer was refused a slot held by a client already gone")
        XCTAssertEqual(control.clients.values.filter(\.peerGone).count, 17)
        // A gone client's line is still there to handle, then its end.
        let gone = try XCTUnwrap(control.clients.values.filter(\.peerGone).min { $0.id < $1.id })
        XCTAssertTrue(control.read(gone), "the end of a gone client is found")
        XCTAssertEqual(gone.pending, ["add /music/0"])
        // Live clients still count: the limit holds for them.
        for _ in 0..<(ControlSocket.maxClients - 16) { live.append(try ControlSocket.connect(path: path)) }
        control.acceptAll()
        XCTAssertEqual(control.clients.values.filter { !$0.peerGone && !$0.closed }.count, ControlSocket.maxClients)
        XCTAssertEqual(control.clients.count, 17 + ControlSocket.maxClients)
    }
}

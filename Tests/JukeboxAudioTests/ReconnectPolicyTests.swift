// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `ReconnectPolicy`, the HTTP stream's retry decisions, as a table: how a connection ended ×
/// whether audio came before × a stop → the action, then the back-off sequence.
final class ReconnectPolicyTests: XCTestCase {
    private typealias Action = ReconnectPolicy.Action

    func testEachEndingDecidesItsAction() {
        let notFound = ConnectionEnd(fatal: "HTTP 404 not found")
        let noNetwork = ConnectionEnd(fatal: "Could not resolve host", transient: true)
        let serverError = ConnectionEnd(fatal: "HTTP 503 service unavailable", transient: true)
        let refused = ConnectionEnd(fatal: "not audio (the server sent text/html)", alwaysFatal: true)
        let cleanEnd = ConnectionEnd()
        let cutAfterAudio = ConnectionEnd(fatal: "Recv failure", deliveredAudio: true, transient: true)
        let file = ConnectionEnd(deliveredAudio: true, fileEnded: true)
        let playlist = ConnectionEnd(follow: "http://host/live")
        let rows: [(String, ConnectionEnd, hadAudio: Bool, stopping: Bool, Action)] = [
            ("a playlist is followed at once", playlist, false, false, .follow("http://host/live")),
            ("even while stopping (the loop checks the stop)", playlist, true, true, .follow("http://host/live")),
            ("a stop ends", noNetwork, false, true, .end),
            ("a stop ends after audio", cutAfterAudio, true, true, .end),
            ("a file's end after audio ends", file, true, false, .end),
            ("a 404 before audio gives up", notFound, false, false, .giveUp("HTTP 404 not found", disconnect: true)),
            ("a refusal gives up even after audio", refused, true, false,
             .giveUp("not audio (the server sent text/html)", disconnect: true)),
            ("a clean end before audio gives up", cleanEnd, false, false, .giveUp("the server sent no audio", disconnect: false)),
            ("no network before audio is retried", noNetwork, false, false,
             .reconnect(after: 0.5, lastError: "Could not resolve host")),
            ("a 5xx before audio is retried", serverError, false, false,
             .reconnect(after: 0.5, lastError: "HTTP 503 service unavailable")),
            ("a 404 after audio is retried", notFound, true, false, .reconnect(after: 0.5, lastError: "HTTP 404 not found")),
            ("a clean end after audio is retried", cleanEnd, true, false,
             .reconnect(after: 0.5, lastError: "the server ended the stream")),
            ("a cut after audio is retried", cutAfterAudio, true, false, .reconnect(after: 0.5, lastError: "Recv failure")),
        ]
        for (name, end, hadAudio, stopping, expected) in rows {
            var policy = ReconnectPolicy(backoff: 0.5...30)
            XCTAssertEqual(policy.connectionEnded(end, hadAudio: hadAudio, stopping: stopping), expected, name)
        }
    }

    func testTheBackOffDoublesUpToItsBoundAndRestartsAfterAudio() {
        var policy = ReconnectPolicy(backoff: 0.5...5)
        let cut = ConnectionEnd(fatal: "Recv failure", transient: true)
        var waits: [Double] = []
        for _ in 0..<6 {
            guard case .reconnect(let seconds, _) = policy.connectionEnded(cut, hadAudio: true, stopping: false) else {
                return XCTFail("a cut after audio is retried")
            }
            waits.append(seconds)
        }
        XCTAssertEqual(waits, [0.5, 1, 2, 4, 5, 5])
        // A connection that delivered audio starts the back-off again from its lower bound.
        var delivered = cut
        delivered.deliveredAudio = true
        XCTAssertEqual(policy.connectionEnded(delivered, hadAudio: true, stopping: false),
                       .reconnect(after: 0.5, lastError: "Recv failure"))
        XCTAssertEqual(policy.connectionEnded(cut, hadAudio: true, stopping: false),
                       .reconnect(after: 1, lastError: "Recv failure"))
        // Following a playlist, ending and giving up leave the back-off where it was.
        _ = policy.connectionEnded(ConnectionEnd(follow: "http://x/"), hadAudio: true, stopping: false)
        _ = policy.connectionEnded(cut, hadAudio: true, stopping: true)
        XCTAssertEqual(policy.delay, 2)
    }
}

// SPDX-License-Identifier: MIT
@testable import JukeboxService
import XCTest

/// The control face's bookkeeping per client (`ControlClientBook`), without a socket or a loop:
/// each table is a sequence of steps and the lines each step makes due.
final class ControlClientBookTests: XCTestCase {
    /// One step on a book: what is done, and the lines that must be due after it.
    enum Step {
        case say(String, client: Int)
        case reserve(name: String, client: Int)
        case fill(name: String, [String])
        case cancel(name: String)
    }

    /// Runs `steps` on a fresh book; returns each step's due lines and the book.
    func run(_ steps: [Step]) -> (due: [[String]], book: ControlClientBook) {
        var book = ControlClientBook()
        var slots: [String: ControlClientBook.Slot] = [:]
        var due: [[String]] = []
        for step in steps {
            switch step {
            case .say(let line, let client): due.append(book.say(line, to: client))
            case .reserve(let name, let client):
                slots[name] = book.reserve(for: client)
                due.append([])
            case .fill(let name, let lines): due.append(book.fill(slots[name]!, lines).due)
            case .cancel(let name):
                book.cancel(slots[name]!)
                due.append([])
            }
        }
        return (due, book)
    }

    func testRepliesKeepTheOrderOfTheLinesWhateverOrderTheyAreReadyIn() {
        let table: [(name: String, steps: [Step], due: [[String]], owes: [Int: Bool])] = [
            ("nothing owed: a line goes at once", [.say("ok a", client: 1)], [["ok a"]], [1: false]),
            ("a line waits behind a reply still owed", [.reserve(name: "r", client: 1), .say("ok b", client: 1)],
             [[], []], [1: true]),
            ("the owed reply comes: both go, in order",
             [.reserve(name: "r", client: 1), .say("ok b", client: 1), .fill(name: "r", ["  x", "ok a"])],
             [[], [], ["  x", "ok a", "ok b"]], [1: false]),
            ("a later slot ready first waits for the earlier one",
             [.reserve(name: "r1", client: 1), .reserve(name: "r2", client: 1), .fill(name: "r2", ["ok 2"]), .fill(name: "r1", ["ok 1"])],
             [[], [], [], ["ok 1", "ok 2"]], [1: false]),
            ("another client does not wait for this one's replies",
             [.reserve(name: "r", client: 1), .say("ok other", client: 2)], [[], ["ok other"]], [1: true, 2: false]),
            ("a slot given back frees the order", [.reserve(name: "r", client: 1), .cancel(name: "r"), .say("ok c", client: 1)],
             [[], [], ["ok c"]], [1: false]),
            ("a slot given back behind an owed one keeps that one owed",
             [.reserve(name: "r1", client: 1), .reserve(name: "r2", client: 1), .cancel(name: "r2"), .fill(name: "r1", ["ok 1"])],
             [[], [], [], ["ok 1"]], [1: false]),
        ]
        for row in table {
            let (due, book) = run(row.steps)
            XCTAssertEqual(due, row.due, row.name)
            for (client, owes) in row.owes { XCTAssertEqual(book.owes(client), owes, "\(row.name): client \(client)") }
        }
    }

    func testAFillTellsWhenTheClientIsOwedNothingMore() {
        var book = ControlClientBook()
        let first = book.reserve(for: 7), second = book.reserve(for: 7)
        XCTAssertEqual(book.fill(first, ["ok 1"]).settled, false, "the second is still owed")
        XCTAssertEqual(book.fill(second, ["ok 2"]).settled, true)
        // A slot of a client whose replies were forgotten (it went) is answered into nothing.
        let lost = book.reserve(for: 8)
        book.forgetReplies(8)
        XCTAssertEqual(book.fill(lost, ["ok"]).due, [])
        XCTAssertEqual(book.fill(lost, ["ok"]).settled, false)
    }

    func testEventStreamsHeldInterruptionsAndGrantWaiters() {
        let table: [(name: String, act: (inout ControlClientBook) -> Void, holds: [Int: Bool])] = [
            ("a fresh client holds nothing", { _ in }, [1: false]),
            ("streaming events", { $0.startStreaming(1, json: false) }, [1: true, 2: false]),
            ("a stream ended", { b in b.startStreaming(1, json: true); _ = b.stopStreaming(1) }, [1: false]),
            ("holding a yield", { $0.hold("yield-1", by: 1) }, [1: true]),
            ("a yield ended", { b in b.hold("yield-1", by: 1); b.unhold("yield-1", by: 1) }, [1: false]),
            ("waiting for a grant", { $0.waitForGrant("manual", client: 2) }, [2: true, 1: false]),
            ("granted", { b in b.waitForGrant("manual", client: 2); _ = b.granted("manual") }, [2: false]),
            ("owed a reply", { b in _ = b.reserve(for: 3) }, [3: true]),
        ]
        for row in table {
            var book = ControlClientBook()
            row.act(&book)
            for (client, holds) in row.holds { XCTAssertEqual(book.holdsSomething(client), holds, "\(row.name): client \(client)") }
        }
    }

    func testGrantsGoToTheLongestWaitingClientOfThatInterruption() {
        var book = ControlClientBook()
        book.waitForGrant("manual", client: 1)
        book.waitForGrant("yield-2", client: 2)
        book.waitForGrant("manual", client: 3)
        XCTAssertEqual(book.granted("manual"), 1)
        XCTAssertEqual(book.granted("manual"), 3)
        XCTAssertNil(book.granted("manual"), "no one waits any more")
        XCTAssertEqual(book.granted("yield-2"), 2)
        XCTAssertTrue(book.waitingForGrant.isEmpty)
    }

    func testAClientThatGoesHandsBackWhatItHeldAndKeepsItsPlaceForAGrant() {
        var book = ControlClientBook()
        book.startStreaming(4, json: true)
        book.hold("yield-4", by: 4)
        book.hold("yield-4", by: 4)
        book.unhold("yield-4", by: 4)
        book.hold("other", by: 4)
        book.waitForGrant("manual", client: 4)
        _ = book.reserve(for: 4)
        XCTAssertEqual(book.streams, [4: true])
        XCTAssertEqual(book.drop(4), ["yield-4", "other"], "what it still held, oldest first, for the face to end")
        XCTAssertFalse(book.owes(4))
        XCTAssertTrue(book.streams.isEmpty)
        XCTAssertTrue(book.held.isEmpty)
        // The grant it waited for is used up by it when it comes (as before the face was a room).
        XCTAssertEqual(book.granted("manual"), 4)
        XCTAssertEqual(book.drop(4), [], "a second drop finds nothing")
    }

    func testTheLoopGrantsOneInterruptionsWaitersInTurnWhicheverFaceAsked() {
        // The socket's and the console's waiters for one id share one queue in the loop's port (`GrantWaiters`).
        var waiters = GrantWaiters(), granted: [String] = []
        waiters.queues["manual", default: []].append { granted.append("console") }
        waiters.queues["manual", default: []].append { granted.append("socket client 1") }
        waiters.queues["yield-2", default: []].append { granted.append("socket client 2") }
        waiters.take("manual")?()
        waiters.take("yield-2")?()
        waiters.take("manual")?()
        XCTAssertNil(waiters.take("manual"), "a grant no one waits for does nothing")
        XCTAssertEqual(granted, ["console", "socket client 2", "socket client 1"])
        XCTAssertTrue(waiters.queues.isEmpty)
    }

    func testASourceEndedFromAnotherConnectionLeavesItsHolderAndARefusedBeginWaitsNoMore() {
        var book = ControlClientBook()
        book.hold("source-airplay", by: 3)
        book.hold("source-airplay", by: 5)
        XCTAssertEqual(book.unholdLatest("source-airplay"), 5, "the latest begin ends first")
        XCTAssertEqual(book.held, [3: ["source-airplay"]])
        XCTAssertEqual(book.unholdLatest("source-airplay"), 3)
        XCTAssertEqual(book.held, [:])
        XCTAssertNil(book.unholdLatest("source-airplay"))
        book.waitForGrant("source-airplay", client: 7)
        book.stopWaiting("source-airplay", client: 7)
        XCTAssertEqual(book.waitingForGrant, [:])
        XCTAssertFalse(book.holdsSomething(7))
    }
}

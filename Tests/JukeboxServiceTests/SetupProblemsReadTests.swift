// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The setup problems file (config `setupProblems`) is read off the loop: its path is the
/// config's, and a read stuck on a dead disk must not stop the player.
final class SetupProblemsReadTests: XCTestCase {
    /// A read held at start: the control socket answers meanwhile; the lines come once it is let
    /// go. Then a reload's read is held and a second reload's read answers first: the held one,
    /// older, is dropped when it comes back, so its lines never replace the newer's.
    func testTheFileIsReadOffTheLoopAndOnlyTheNewestReadIsHeard() throws {
        let dir = TempDir()
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("ctl"))
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.setupProblemsPath = dir.file("problems")
        let gates = Gates()
        runtime.readSetupProblemsFile = { _ in gates.next() }
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            gates.openAll()
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        let ctl = try ControlClient(path: dir.file("ctl"))
        XCTAssertTrue(waitFor(10) { gates.started == 1 }, "the start's read began")
        XCTAssertNotNil(ctl.request("status", timeout: 10), "answered while the file is read")
        XCTAssertFalse(ctl.request("diag", timeout: 10)?.contains("setup problem") ?? true)
        gates.open(0, lines: ["first"])
        XCTAssertTrue(waitFor(10) { ctl.request("diag", timeout: 10)?.contains("setup problem: first") == true }, "heard once read")

        XCTAssertEqual(ctl.request("reload", timeout: 10)?.hasPrefix("error: this player has no configuration file"), true)
        XCTAssertTrue(waitFor(10) { gates.started == 2 })
        _ = ctl.request("reload", timeout: 10)
        XCTAssertTrue(waitFor(10) { gates.started == 3 })
        gates.open(2, lines: ["newest"])
        XCTAssertTrue(waitFor(10) { ctl.request("diag", timeout: 10)?.contains("setup problem: newest") == true })
        gates.open(1, lines: ["stale"])
        XCTAssertTrue(waitFor(10) { gates.returned == 3 }, "the held read came back")
        // Its lines, were they posted, would come right after it returned: a second gives them time.
        XCTAssertFalse(waitFor(1) { ctl.request("diag", timeout: 10)?.contains("stale") == true }, "the older read is dropped")
        XCTAssertTrue(ctl.request("diag", timeout: 10)?.contains("setup problem: newest") == true)
    }

    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ runtime: Runtime) { self.runtime = runtime }
    }

    /// Reads that wait until the test lets each go, with the lines it gives.
    private final class Gates: @unchecked Sendable {
        private let lock = NSCondition()
        private var given: [Int: [String]] = [:]
        private var all = false
        private var count = 0
        private var back = 0
        var started: Int { lock.lock(); defer { lock.unlock() }; return count }
        var returned: Int { lock.lock(); defer { lock.unlock() }; return back }

        func next() -> (lines: [String], error: String?) {
            lock.lock()
            defer { lock.unlock() }
            let me = count
            count += 1
            while given[me] == nil && !all { lock.wait() }
            back += 1
            return (given[me] ?? [], nil)
        }

        func open(_ read: Int, lines: [String]) { lock.lock(); given[read] = lines; lock.broadcast(); lock.unlock() }
        func openAll() { lock.lock(); all = true; lock.broadcast(); lock.unlock() }
    }
}

// SPDX-License-Identifier: MIT
import Foundation

/// A gate the thread under test (a writer, a job, a look) stops at until the test opens it,
/// counting who came: every caller held, or only the first (the next ones pass at once, to see
/// a call made again while the first still hangs).
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private let holdsOnlyFirst: Bool
    private var isOpen = false
    private var waiting = 0

    init(holdsOnlyFirst: Bool = false) {
        self.holdsOnlyFirst = holdsOnlyFirst
    }

    /// How many calls of `pass` began, held or not.
    var calls: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    /// Called by the thread under test: waits while the gate is closed (only the first caller,
    /// for a gate that holds only the first).
    func pass() {
        condition.lock()
        waiting += 1
        let held = !holdsOnlyFirst || waiting == 1
        condition.broadcast()
        while held && !isOpen { condition.wait() }
        condition.unlock()
    }

    /// Waits until a thread stands at the gate.
    func waitForSomeoneAtIt() {
        condition.lock()
        while waiting == 0 { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}

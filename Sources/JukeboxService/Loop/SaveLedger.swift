// SPDX-License-Identifier: MIT

/// The loop's saves: the state file (`store`), its writer (off the loop), how far the saves
/// handed over are finished, who waits for that, and how the last one went. Nil store and
/// writer: this player saves nothing. A class: the loop and the faces' ports share it.
final class SaveLedger {
    let store: StateStore?
    /// Writes the core's saves off the loop (nil without a state file).
    let writer: StateWriter?
    /// Saves up to this number are finished (written or failed).
    private(set) var savedThrough: UInt64 = 0
    private var waiters: [(through: UInt64, then: (_ error: String?) -> Void)] = []
    /// The last save: when (monotonic) and its error.
    private(set) var last: (at: Double, error: String?)?

    init(store: StateStore?, mailbox: Mailbox) {
        self.store = store
        writer = store.map { StateWriter(store: $0, mailbox: mailbox) }
    }

    /// The number of the last save handed to the writer (0 without one).
    var number: UInt64 { writer?.lastNumber ?? 0 }

    /// Has `then` wait until every save handed over since number `since` is finished; false
    /// (nothing kept) when none is outstanding: then it is due at once.
    func wait(since: UInt64, _ then: @escaping (_ error: String?) -> Void) -> Bool {
        guard let writer, writer.lastNumber > since, writer.lastNumber > savedThrough else { return false }
        waiters.append((writer.lastNumber, then))
        return true
    }

    /// Calls `then` once every save handed over since number `since` is finished, with the error
    /// of the write that finished it; at once when there is none.
    func after(since: UInt64, _ then: @escaping (_ error: String?) -> Void) {
        if !wait(since: since, then) { then(nil) }
    }

    /// Saves up to `through` are finished (at `at`, with `error`): the waiters now due, oldest first.
    func finished(through: UInt64, error: String?, at: Double) -> [(_ error: String?) -> Void] {
        savedThrough = max(savedThrough, through)
        last = (at, error)
        let due = waiters.filter { $0.through <= savedThrough }
        waiters.removeAll { $0.through <= savedThrough }
        return due.map(\.then)
    }
}

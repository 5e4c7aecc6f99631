// SPDX-License-Identifier: MIT
import JukeboxCore

/// The loop's once-a-second read of a state file that could not be read (`State.stateUnreadable`:
/// EACCES, EIO, a card whose reader answers late), until it can: then the place it holds comes
/// back and saving resumes (`StartUp.readAgain`). The read is a job on the tag reader's thread,
/// not the loop's: a state folder on a failing card or a share can keep a read waiting for
/// seconds, and the loop must never wait on a disk (a read given up after `Runtime.jobLimit`
/// counts as still unreadable). One read at a time; what it found reaches the core only while
/// the core still waits for it.
final class StateFileWatch {
    /// Reads the state file; a test holds it to see the loop go on meanwhile.
    typealias Load = @Sendable (StateStore) -> StateStore.Loaded

    private unowned let core: LoopCore
    private let jobs: OffLoopJobs
    private let log: Log
    var load: Load
    /// A read is under way.
    private var reading = false
    /// Said once: this player has no tag reader to read with (a test's runtime).
    private var saidNoReader = false
    /// Why the last read was given up, said once (a dead card gives up every read alike).
    private var lastProblem: String?

    init(core: LoopCore, jobs: OffLoopJobs, log: Log, load: @escaping Load = { $0.load() }) {
        self.core = core
        self.jobs = jobs
        self.log = log
        self.load = load
    }

    /// Whether the core waits for the state file: the loop then calls `look` about once a second.
    var isNeeded: Bool { core.state.stateUnreadable != nil }

    /// Hands a read of `store`'s file to the tag reader unless one is under way; its answer
    /// comes back through the mailbox (`OffLoopJobs.workDone`).
    func look(_ store: StateStore) {
        guard isNeeded, !reading else { return }
        let found = Read(), load = self.load
        reading = jobs.perform({ _ in
            found.loaded = load(store)
            return .success(FileWorkOutput())
        }, then: { [weak self] result in
            guard let self else { return }
            reading = false
            if case .failure(let error) = result {
                // Given up (a card that stopped answering): still unreadable; the next read tries again.
                if error.message != lastProblem { log.warning("cannot read the state file \(store.path) again: \(error.message)") }
                lastProblem = error.message
                return
            }
            guard let loaded = found.loaded, isNeeded else { return }
            for event in StartUp.readAgain(loaded, path: store.path, log: log) { core.dispatch(event) }
        })
        if !reading && !saidNoReader {
            saidNoReader = true
            log.warning("cannot read the state file \(store.path) again: this player cannot load files")
        }
    }
}

/// What a read found, handed from the tag reader's thread to the loop with the job's result (the
/// mailbox orders the two; nothing else touches it).
private final class Read: @unchecked Sendable {
    var loaded: StateStore.Loaded?
}

// SPDX-License-Identifier: MIT
import JukeboxSystem

/// A thread of the shell's that runs small jobs off the loop, one at a time, in order, and posts
/// each job's result to the loop's mailbox: the MPD face's cover reads (a file read on an SD card
/// or a network share may stall, and the loop must never wait on a disk).
public final class WorkerThread: @unchecked Sendable {
    private let mailbox: Mailbox
    private let monitor = Monitor()
    private var thread: NativeThread?
    // Shared with the thread, under the monitor.
    private var jobs: [@Sendable () -> Mailbox.Result] = []
    private var stopping = false

    /// Starts the thread, called `name` (15 bytes at most show in `top`).
    public init(name: String, mailbox: Mailbox) {
        self.mailbox = mailbox
        thread = NativeThread(name: name) { [self] in run() }
    }

    /// Queues `job`; what it returns is posted to the mailbox.
    public func run(_ job: @escaping @Sendable () -> Mailbox.Result) {
        monitor.withLock {
            jobs.append(job)
            monitor.broadcast()
        }
    }

    /// Drops what is queued and ends the thread after the job in hand; `waiting` for that, or not
    /// (the player quitting: a stalled read must not hold up its exit).
    public func finish(waiting: Bool = true) {
        monitor.withLock {
            stopping = true
            jobs.removeAll()
            monitor.broadcast()
        }
        if waiting { thread?.join() } else { thread?.detach() }
    }

    private func run() {
        while let job = next() { mailbox.post(result: job()) }
    }

    private func next() -> (@Sendable () -> Mailbox.Result)? {
        monitor.withLock {
            while jobs.isEmpty && !stopping { monitor.wait() }
            return stopping ? nil : jobs.removeFirst()
        }
    }
}

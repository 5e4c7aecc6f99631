// SPDX-License-Identifier: MIT
import JukeboxSystem

/// A thread of the shell's that runs small jobs off the loop, one at a time, in order, and posts
/// each job's result to the loop's mailbox: the MPD face's folder listings and cover reads (a file
/// read on an SD card or a network share may stall, and the loop must never wait on a disk). A job
/// stuck for `limit` seconds is given up and reported failed; later ones go on (`JobRunner`).
public final class WorkerThread: @unchecked Sendable {
    private let runner: JobRunner

    /// Starts the thread, called `name` (15 bytes at most show in `top`).
    public init(name: String, mailbox: Mailbox, limit: Double = JobRunner.defaultLimit) {
        runner = JobRunner(name: name, mailbox: mailbox, limit: limit)
    }

    /// Queues `job`; what it returns is posted to the mailbox, or `failed(reason)` when it is given
    /// up. `label` names it in the reason.
    public func run(_ label: String, failed: @escaping @Sendable (String) -> Mailbox.Result,
                    _ job: @escaping @Sendable () -> Mailbox.Result) {
        runner.submit(label, run: job, failed: failed)
    }

    /// On the loop, every pass: gives up a job without progress (`JobRunner.supervise`).
    public func supervise(now: Double) { runner.supervise(now: now) }

    /// When `supervise` must next run; nil while nothing runs.
    public var nextDeadline: Double? { runner.nextDeadline }

    /// Drops what is queued and ends the thread after the job in hand; `waiting` for that, or not
    /// (the player quitting: a stalled read must not hold up its exit).
    public func finish(waiting: Bool = true) {
        runner.finish(waiting: waiting)
    }
}

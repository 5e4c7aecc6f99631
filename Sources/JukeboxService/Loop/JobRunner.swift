// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Runs the shell's off-loop jobs (tag reads, folder listings, cover reads, stored playlists) one
/// at a time, in order, on a worker thread, and posts each job's result to the loop's mailbox —
/// with a bound. A read stuck in the kernel (a hung NFS server, a dying USB stick) cannot be
/// cancelled, so a job that makes no progress for `limit` seconds (on the loop's clock, checked by
/// the loop's `supervise`) is given up: its worker is abandoned (left to end by itself, its result
/// thrown away), the job is reported failed with the reason, and a fresh worker serves the jobs
/// behind it. At most `maxAbandoned` workers may hang at once; beyond that, jobs fail at once with
/// the reason until one of them comes back (it then serves the queue again).
///
/// Progress: a job's start and end, and every `JobProgress.note()` its code calls on the worker
/// (`LibraryLoader` notes each file and folder entry), so a large folder read at a steady pace is
/// never cut, only a stall.
public final class JobRunner: @unchecked Sendable {
    /// One job: its run, and the result that reports it failed with a reason.
    struct Job {
        let serial: UInt64
        let label: String
        let run: @Sendable () -> Mailbox.Result
        let failed: @Sendable (String) -> Mailbox.Result
    }

    /// A worker thread and what the runner knows of it (under the runner's monitor).
    final class Worker: @unchecked Sendable {
        var thread: NativeThread?
        /// Given up on: whatever its job returns is thrown away.
        var abandoned = false
        /// Progress notes of the job in hand.
        var beats = 0
    }

    /// The worker thread's identity, reachable from `JobProgress.note()` through a thread-specific key.
    final class Context {
        unowned let runner: JobRunner
        let worker: Worker
        init(runner: JobRunner, worker: Worker) {
            self.runner = runner
            self.worker = worker
        }
    }

    static let contextKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Seconds without progress after which a job is given up, unless the owner says otherwise
    /// (`Runtime.jobLimit`): a tag read takes milliseconds, a spun-down USB disk wakes in about 10 s.
    public static let defaultLimit = 30.0

    /// The thread's name (15 bytes at most show in `top`).
    public let name: String
    /// Seconds a job may go without progress before it is given up.
    public let limit: Double
    /// Most workers left hanging at once.
    public let maxAbandoned: Int
    private let mailbox: Mailbox
    private let monitor = Monitor()
    // Under the monitor.
    private var queue: [Job] = []
    private var worker: Worker?
    private var abandonedCount = 0
    private var stopping = false
    private var nextSerial: UInt64 = 1
    // The loop's own (only `supervise` and `nextDeadline` touch it): the job in hand as the loop
    // last saw it, with its progress count and since when (loop clock) it has not moved.
    private var watched: (serial: UInt64, beats: Int, since: Double)?

    /// A runner whose first worker starts now.
    public init(name: String, mailbox: Mailbox, limit: Double, maxAbandoned: Int = 4) {
        self.name = name
        self.mailbox = mailbox
        self.limit = limit
        self.maxAbandoned = maxAbandoned
        monitor.withLock { startWorker() }
    }

    /// Workers given up on that have not come back yet.
    public var hanging: Int { monitor.withLock { abandonedCount } }

    /// Queues a job: `run` on the worker (its result is posted), or, when it is given up or cannot
    /// be run, `failed(reason)` is posted instead. `label` names it in the reason ("reading /music/x").
    public func submit(_ label: String, run: @escaping @Sendable () -> Mailbox.Result,
                       failed: @escaping @Sendable (String) -> Mailbox.Result) {
        let refused: Job? = monitor.withLock {
            let job = Job(serial: nextSerial, label: label, run: run, failed: failed)
            nextSerial += 1
            if stopping { return nil }
            if worker == nil { return job }
            queue.append(job)
            monitor.broadcast()
            return nil
        }
        if let refused { mailbox.post(result: refused.failed(stuckReason(refused.label))) }
    }

    private func stuckReason(_ label: String) -> String {
        "\(label): not started, \(maxAbandoned) earlier jobs are still stuck (a hung disk or network share?)"
    }

    /// On the loop, every pass: notes progress, and gives up the job in hand when it has made none
    /// for `limit` seconds by `now` (the loop's clock).
    public func supervise(now: Double) {
        var failures: [Mailbox.Result] = []
        monitor.withLock {
            guard let head = queue.first, let w = worker else { watched = nil; return }
            guard let seen = watched, seen.serial == head.serial, seen.beats == w.beats else {
                watched = (head.serial, w.beats, now)
                return
            }
            guard now - seen.since >= limit else { return }
            watched = nil
            queue.removeFirst()
            w.abandoned = true
            w.thread?.detach()
            abandonedCount += 1
            worker = nil
            let secs = limit == limit.rounded() ? "\(Int(limit))" : "\(limit)"
            failures.append(head.failed("\(head.label): no progress for \(secs) s, given up (a hung disk or network share?); later requests go on"))
            if abandonedCount < maxAbandoned {
                startWorker()
            } else {
                failures += queue.map { $0.failed(stuckReason($0.label)) }
                queue.removeAll()
            }
            monitor.broadcast()
        }
        for failure in failures { mailbox.post(result: failure) }
    }

    /// When `supervise` must next run to give up a job without progress; nil while none runs.
    public var nextDeadline: Double? { watched.map { $0.since + limit } }

    /// Drops what is queued and ends the worker after the job in hand; `waiting` for that (tests),
    /// or not (the player quitting: a stalled read must not hold up its exit). Abandoned workers
    /// are never waited for.
    public func finish(waiting: Bool = true) {
        let live: Worker? = monitor.withLock {
            stopping = true
            queue.removeAll()
            monitor.broadcast()
            return worker
        }
        guard let live else { return }
        if waiting { live.thread?.join() } else { live.thread?.detach() }
    }

    // Under the monitor.
    private func startWorker() {
        let w = Worker()
        worker = w
        w.thread = NativeThread(name: name) { [self] in serve(w) }
    }

    private func serve(_ w: Worker) {
        let context = Context(runner: self, worker: w)
        pthread_setspecific(Self.contextKey, Unmanaged.passUnretained(context).toOpaque())
        defer { pthread_setspecific(Self.contextKey, nil) }
        while let job = take(w) {
            let result = job.run()
            let keep: Bool = monitor.withLock {
                if w.abandoned { return false }
                if queue.first?.serial == job.serial { queue.removeFirst() }
                w.beats = 0
                return true
            }
            if keep { mailbox.post(result: result) }
        }
        withExtendedLifetime(context) {}
    }

    private func take(_ w: Worker) -> Job? {
        monitor.withLock {
            if w.abandoned {
                // Back from a job given up on: serve again if no worker does, else end.
                abandonedCount -= 1
                guard worker == nil, !stopping else { return nil }
                w.abandoned = false
                w.beats = 0
                worker = w
            }
            while queue.isEmpty && !stopping { monitor.wait() }
            return stopping ? nil : queue.first
        }
    }

    fileprivate func beat(_ w: Worker) {
        monitor.withLock { w.beats &+= 1 }
    }
}

/// What a job's code calls to tell its `JobRunner` it is still moving (a file read, a folder
/// entry): the bound is on a stall, not on a job's whole length. Does nothing on other threads.
public enum JobProgress {
    /// Notes progress of the job running on this thread, if any.
    public static func note() {
        guard let raw = pthread_getspecific(JobRunner.contextKey) else { return }
        let context = Unmanaged<JobRunner.Context>.fromOpaque(raw).takeUnretainedValue()
        context.runner.beat(context.worker)
    }
}

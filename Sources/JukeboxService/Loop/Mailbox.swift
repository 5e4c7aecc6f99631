// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc

/// Events, log lines and worker results posted from other threads (the audio engine, the shell's workers) to the loop: a short locked append plus
/// an eventfd the loop polls, so the poster never waits for the loop.
///
/// The lock is a pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer intercepts
/// pthread locks, while the standard library's futex-based Mutex is not instrumented and every
/// post/drain pair would be reported as a race (board/sanitize.sh thread).
public final class Mailbox: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var events: [Event] = []
    private var lines: [(LogLevel, String)] = []
    private var results: [Result] = []

    /// What the shell's own workers (`StateWriter`, `TagReaderThread`, `WorkerThread`) hand back to the loop.
    public enum Result: Sendable {
        /// Saves up to number `through` are on disk (or failed with `error`).
        case saved(through: UInt64, error: String?)
        /// The tracks request `id` named, and what could not be used.
        case tracksRead(id: Int, tracks: [TrackInfo], messages: [String], marked: Bool = false)
        /// Other file work request `id` asked for (`TagReaderThread.perform`) is done.
        case workDone(id: Int, result: FileWorkResult)
        /// A chunk of a file (an MPD client's cover) for request `id`, or why not (`WorkerThread`).
        case chunkRead(id: Int, result: Swift.Result<FileChunk, MPDError>)
        /// The tag reader requests an MPD library update is cut into (`MPDLibraryWalk`); nil
        /// groups with the `problem` when the listing was given up (`JobRunner`).
        case updateListed(id: Int, groups: [[String]]?, problem: String?)
        /// The cards map was read (or refused), or an assignment was written (`CardMapWorker`).
        case cards(CardMapWorker.Report)
    }
    /// The fd that becomes readable when events are waiting.
    public let fd: Int32

    /// A new, empty mailbox.
    public init() {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(fd >= 0, "eventfd failed")
        pthread_mutex_init(lock, nil)
    }

    deinit {
        close(fd)
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Posts an event; safe from any thread, never blocks on the loop.
    public func post(_ event: Event) {
        pthread_mutex_lock(lock)
        events.append(event)
        pthread_mutex_unlock(lock)
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Posts a log line from another thread (the log itself is the loop's); safe from any thread,
    /// never blocks on the loop.
    public func postLog(_ severity: LogLevel, _ message: String) {
        pthread_mutex_lock(lock)
        lines.append((severity, message))
        pthread_mutex_unlock(lock)
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Posts a worker's result; safe from any thread, never blocks on the loop.
    public func post(result: Result) {
        pthread_mutex_lock(lock)
        results.append(result)
        pthread_mutex_unlock(lock)
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Takes every waiting worker result, oldest first (loop thread).
    public func drainResults() -> [Result] {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let pending = results
        results.removeAll(keepingCapacity: true)
        return pending
    }

    /// Takes every waiting log line, oldest first (loop thread).
    public func drainLog() -> [(LogLevel, String)] {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let pending = lines
        lines.removeAll(keepingCapacity: true)
        return pending
    }

    /// Takes every waiting event, oldest first (loop thread).
    public func drain() -> [Event] {
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let pending = events
        events.removeAll(keepingCapacity: true)
        return pending
    }
}

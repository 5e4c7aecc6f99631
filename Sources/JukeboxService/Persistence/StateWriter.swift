// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// Carries out the core's saves on a thread of its own, so the loop never waits on the card.
///
/// Only the newest snapshot is written: saves handed over while one is being written replace each
/// other, and the next write takes the last. What to write is the core's decision (`persist`:
/// the queue file; `persistPlace`: the small place sidecar), with one rule kept here because only
/// the writer knows what is on disk: a place is written only against the queue file that holds
/// its queue. Until the queue file on disk is known to hold it (a failed write, or the first save
/// after a start), the queue file is written whole instead. Each finished write is posted to the
/// loop as `Mailbox.Result.saved`, numbered so the loop can answer whoever waits for it.
///
/// The bookmarks file (`Command.persistBookmarks`) is written by the same thread, coalesced the
/// same way (only the newest list), after the state save handed over with it; a failure is
/// logged. So is the podcasts file (`Command.persistPodcasts`).
public final class StateWriter: @unchecked Sendable {
    /// The store written to.
    public let store: StateStore
    private let mailbox: Mailbox
    private let clock: @Sendable () -> Double
    private let monitor = Monitor()
    private var thread: NativeThread?
    // Shared with the thread, under the monitor.
    private var latest: Snapshot?
    private var queueDirty = false
    private var queueHash: UInt64?
    private var lookedForQueueFile = false
    private var handedOver: UInt64 = 0
    private var stopping = false
    private var finished: UInt64 = 0
    private var latestBookmarks: [Bookmark]?
    private var bookmarksHandedOver: UInt64 = 0
    private var bookmarksFinished: UInt64 = 0
    private var latestPodcasts: [PodcastFeed]?
    private var podcastsHandedOver: UInt64 = 0
    private var podcastsFinished: UInt64 = 0

    /// Starts the writer's thread. `clock` times the saves (a slow one is logged); tests give
    /// their own.
    public init(store: StateStore, mailbox: Mailbox, clock: @escaping @Sendable () -> Double = monotonicNow) {
        self.store = store
        self.mailbox = mailbox
        self.clock = clock
        thread = NativeThread(name: "jukebox-state") { [self] in run() }
    }

    /// Hands over a save and returns its number (loop thread). `queueChanged`: the queue file
    /// must be rewritten (`Command.persist`), not just the place (`Command.persistPlace`).
    @discardableResult
    public func submit(_ snapshot: Snapshot, queueChanged: Bool) -> UInt64 {
        monitor.withLock {
            latest = snapshot
            if queueChanged { queueDirty = true }
            handedOver += 1
            monitor.broadcast()
            return handedOver
        }
    }

    /// Hands over the bookmarks to write (loop thread); a newer list handed over before this one
    /// is written replaces it.
    public func submitBookmarks(_ bookmarks: [Bookmark]) {
        monitor.withLock {
            latestBookmarks = bookmarks
            bookmarksHandedOver += 1
            monitor.broadcast()
        }
    }

    /// Hands over the podcasts to write (loop thread); a newer list replaces one not yet written.
    public func submitPodcasts(_ podcasts: [PodcastFeed]) {
        monitor.withLock {
            latestPodcasts = podcasts
            podcastsHandedOver += 1
            monitor.broadcast()
        }
    }

    /// The number of the last save handed over.
    public var lastNumber: UInt64 { monitor.withLock { handedOver } }

    /// Waits until every save handed over so far is finished (tests and tools; never the loop).
    public func waitUntilIdle() {
        monitor.withLock {
            while finished < handedOver || bookmarksFinished < bookmarksHandedOver || podcastsFinished < podcastsHandedOver {
                monitor.wait()
            }
        }
    }

    /// Writes what is still pending, then ends the thread (waits for it).
    public func finish() {
        monitor.withLock {
            stopping = true
            monitor.broadcast()
        }
        thread?.join()
    }

    private func run() {
        while let (job, marks, podcasts) = next() {
            if let job { save(job) }
            if let marks { saveBookmarks(marks) }
            if let podcasts { savePodcasts(podcasts) }
        }
    }

    private func savePodcasts(_ podcasts: (feeds: [PodcastFeed], number: UInt64)) {
        do { try PodcastFile.write(podcasts.feeds, to: store.podcastsPath) } catch {
            mailbox.postLog(.warning, "could not save podcasts: \(error)")
        }
        monitor.withLock {
            podcastsFinished = podcasts.number
            monitor.broadcast()
        }
    }

    private func saveBookmarks(_ marks: (bookmarks: [Bookmark], number: UInt64)) {
        do { try BookmarkFile.write(marks.bookmarks, to: store.bookmarksPath) } catch {
            mailbox.postLog(.warning, "could not save bookmarks: \(error)")
        }
        monitor.withLock {
            bookmarksFinished = marks.number
            monitor.broadcast()
        }
    }

    private func save(_ job: Job) {
        var failure: String?
        var wroteQueue: UInt64?
        let hash = job.whole ? nil : job.hash ?? lookUpQueueFile(job.snapshot)
        let started = clock()
        do {
            if let hash {
                try store.savePlace(job.snapshot, queueHash: hash)
            } else {
                wroteQueue = try store.save(job.snapshot)
            }
        } catch {
            failure = error.description
        }
        noteIfSlow(clock() - started, place: hash != nil)
        monitor.withLock {
            if let wroteQueue { queueHash = wroteQueue }
            // The queue file on disk is not this queue: the next save writes it whole again.
            if failure != nil && hash == nil { queueDirty = true; queueHash = nil }
        }
        mailbox.post(result: .saved(through: job.number, error: failure))
        monitor.withLock {
            finished = job.number
            monitor.broadcast()
        }
    }

    // Every second a save takes is position a power cut can lose beyond the save interval: a
    // card or disk that slow is worth a line in the journal (at most one every ten minutes).
    private var lastSlowNote = -Double.infinity
    private func noteIfSlow(_ seconds: Double, place: Bool) {
        let now = clock()
        guard seconds >= Self.slowSave, now - lastSlowNote >= 600 else { return }
        lastSlowNote = now
        mailbox.postLog(.warning, "saving the \(place ? "place" : "queue") took \((seconds * 10).rounded() / 10) s: "
                        + "the storage is slow; a power cut can lose that much more than the save interval")
    }

    /// A save slower than this is reported.
    static let slowSave = 1.0

    private typealias Job = (snapshot: Snapshot, whole: Bool, hash: UInt64?, number: UInt64)

    private func next() -> (Job?, (bookmarks: [Bookmark], number: UInt64)?, (feeds: [PodcastFeed], number: UInt64)?)? {
        monitor.withLock {
            while latest == nil && latestBookmarks == nil && latestPodcasts == nil && !stopping { monitor.wait() }
            if latest == nil && latestBookmarks == nil && latestPodcasts == nil { return nil }
            var job: Job?
            if let snapshot = latest {
                latest = nil
                let whole = queueDirty
                queueDirty = false
                job = (snapshot, whole, queueHash, handedOver)
            }
            let marks = latestBookmarks.map { ($0, bookmarksHandedOver) }
            latestBookmarks = nil
            let podcasts = latestPodcasts.map { ($0, podcastsHandedOver) }
            latestPodcasts = nil
            return (job, marks, podcasts)
        }
    }

    // After a start the queue file on disk is the one the core restored from (its place is
    // then saved beside it), unless the start changed the queue: checked once, by reading it.
    private func lookUpQueueFile(_ snapshot: Snapshot) -> UInt64? {
        let looked = monitor.withLock { () -> Bool in
            defer { lookedForQueueFile = true }
            return lookedForQueueFile
        }
        return looked ? nil : store.queueFileHash(matching: snapshot)
    }
}

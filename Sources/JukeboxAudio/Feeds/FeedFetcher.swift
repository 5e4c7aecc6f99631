// SPDX-License-Identifier: MIT
import JukeboxSystem

/// What one fetch of a feed came to: facts for the core (which keeps what it knew when it failed).
public struct FeedFetchOutcome: Sendable {
    /// The podcast's name, as the request gave it.
    public var name: String
    public var url: String
    public var result: Result<FeedDocument, FeedFetchError>
}

/// What one episode's download came to: the file's size, or why not.
public struct EpisodeDownloadOutcome: Sendable {
    public var name: String
    public var id: String
    public var path: String
    public var result: Result<Int64, FeedFetchError>
}

/// The feeds' own thread (`jukebox-feeds`): fetches and parses one feed at a time, and downloads
/// episodes (`EpisodeDownload`), in the order asked, and hands each outcome to `report` or
/// `reportDownload` on this thread (the wiring posts it to the loop), a download's progress to
/// `reportProgress` (at most once a second or per 5 %). A feed or an episode asked
/// for again while it waits is done once. Never the loop's thread: a feed may take up to
/// `FeedFetchSettings.totalSeconds`, a download up to `downloadSeconds`.
public final class FeedFetcher: @unchecked Sendable {
    private let monitor = Monitor()
    private enum Job: Equatable {
        case feed(name: String, url: String)
        case episode(name: String, id: String, url: String, path: String, maxBytes: Int64)
    }

    private var queue: [Job] = []
    private var stopping = false
    private var thread: NativeThread?
    private let settings: FeedFetchSettings
    private let limits: FeedLimits
    private let report: @Sendable (FeedFetchOutcome) -> Void
    private let reportDownload: @Sendable (EpisodeDownloadOutcome) -> Void
    private let reportProgress: @Sendable (_ name: String, _ id: String, _ bytes: Int64, _ total: Int64?) -> Void
    /// The whole time one episode's download may take.
    public static let downloadSeconds = 3600.0

    /// Starts the thread.
    public init(settings: FeedFetchSettings = FeedFetchSettings(), limits: FeedLimits = FeedLimits(),
                report: @escaping @Sendable (FeedFetchOutcome) -> Void,
                reportDownload: @escaping @Sendable (EpisodeDownloadOutcome) -> Void = { _ in },
                reportProgress: @escaping @Sendable (_ name: String, _ id: String, _ bytes: Int64, _ total: Int64?) -> Void = { _, _, _, _ in }) {
        self.settings = settings
        self.limits = limits
        self.report = report
        self.reportDownload = reportDownload
        self.reportProgress = reportProgress
        thread = NativeThread(name: "jukebox-feeds") { [unowned self] in self.run() }
    }

    /// Asks for `name`'s feed at `url`; returns at once.
    public func fetch(name: String, url: String) {
        add(.feed(name: name, url: url))
    }

    /// Asks for episode `id` of `name` at `url` to be downloaded to `path`, at most `maxBytes`.
    public func download(name: String, id: String, url: String, to path: String, maxBytes: Int64) {
        add(.episode(name: name, id: id, url: url, path: path, maxBytes: maxBytes))
    }

    private func add(_ job: Job) {
        monitor.withLock {
            guard !queue.contains(job) else { return }
            queue.append(job)
            monitor.broadcast()
        }
    }

    /// Drops what waits, stops the fetch in hand (within about a second) and joins the thread.
    public func finish() {
        monitor.withLock {
            stopping = true
            queue.removeAll()
            monitor.broadcast()
        }
        thread?.join()
        thread = nil
    }

    private func run() {
        while true {
            monitor.lock()
            while queue.isEmpty && !stopping { monitor.wait() }
            if stopping {
                monitor.unlock()
                return
            }
            let next = queue.removeFirst()
            monitor.unlock()
            let stop: () -> Bool = { [unowned self] in self.monitor.withLock { self.stopping } }
            switch next {
            case .feed(let name, let url):
                let result = FeedFetch.fetch(url, settings: settings, limits: limits, shouldStop: stop)
                if case .failure(.stopped) = result { return }
                report(FeedFetchOutcome(name: name, url: url, result: result))
            case .episode(let name, let id, let url, let path, let maxBytes):
                var long = settings
                long.totalSeconds = Self.downloadSeconds
                let result = EpisodeDownload.run(url, to: path, maxBytes: maxBytes, settings: long, shouldStop: stop,
                                                 progress: { [reportProgress] in reportProgress(name, id, $0, $1) })
                if case .failure(.stopped) = result { return }
                reportDownload(EpisodeDownloadOutcome(name: name, id: id, path: path, result: result))
            }
        }
    }
}

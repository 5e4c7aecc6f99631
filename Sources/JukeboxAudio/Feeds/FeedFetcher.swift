// SPDX-License-Identifier: MIT
import JukeboxSystem

/// What one fetch of a feed came to: facts for the core (which keeps what it knew when it failed).
public struct FeedFetchOutcome: Sendable {
    /// The podcast's name, as the request gave it.
    public var name: String
    public var url: String
    public var result: Result<FeedDocument, FeedFetchError>
}

/// The feeds' own thread (`jukebox-feeds`): fetches and parses one feed at a time, in the order
/// asked, and hands each outcome to `report` on this thread (the wiring posts it to the loop). A
/// feed asked for again while it waits is fetched once. Never the loop's thread: a feed may take
/// up to `FeedFetchSettings.totalSeconds`.
public final class FeedFetcher: @unchecked Sendable {
    private let monitor = Monitor()
    private var queue: [(name: String, url: String)] = []
    private var stopping = false
    private var thread: NativeThread?
    private let settings: FeedFetchSettings
    private let limits: FeedLimits
    private let report: @Sendable (FeedFetchOutcome) -> Void

    /// Starts the thread.
    public init(settings: FeedFetchSettings = FeedFetchSettings(), limits: FeedLimits = FeedLimits(),
                report: @escaping @Sendable (FeedFetchOutcome) -> Void) {
        self.settings = settings
        self.limits = limits
        self.report = report
        thread = NativeThread(name: "jukebox-feeds") { [unowned self] in self.run() }
    }

    /// Asks for `name`'s feed at `url`; returns at once.
    public func fetch(name: String, url: String) {
        monitor.withLock {
            guard !queue.contains(where: { $0.name == name && $0.url == url }) else { return }
            queue.append((name, url))
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
            let result = FeedFetch.fetch(next.url, settings: settings, limits: limits) { [unowned self] in
                self.monitor.withLock { self.stopping }
            }
            if case .failure(.stopped) = result { return }
            report(FeedFetchOutcome(name: next.name, url: next.url, result: result))
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// Runs `add`/`load` (a folder walk and a tag read per file, seconds for a large folder on an SD
/// card) on a thread of its own, one request at a time, in order; each result is posted to the
/// loop as `Mailbox.Result.tracksRead`, which turns it into `Event.add` or `Event.replaceQueue`.
public final class TagReaderThread: @unchecked Sendable {
    private let load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])
    private let mailbox: Mailbox
    private let monitor = Monitor()
    private var thread: NativeThread?
    // Shared with the thread, under the monitor.
    private var requests: [(id: Int, paths: [String])] = []
    private var stopping = false

    /// Starts the thread; `load` turns paths into tracks (`LibraryLoader.load`) and runs on it.
    public init(mailbox: Mailbox, load: @escaping @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) {
        self.mailbox = mailbox
        self.load = load
        thread = NativeThread(name: "jukebox-tags") { [self] in run() }
    }

    /// Queues a request; its result carries `id`.
    public func read(_ paths: [String], id: Int) {
        monitor.withLock {
            requests.append((id, paths))
            monitor.broadcast()
        }
    }

    /// Drops what is queued and ends the thread after the request in hand; `waiting` for that
    /// (tests), or not (the player quitting: a large folder must not hold up its exit).
    public func finish(waiting: Bool = true) {
        monitor.withLock {
            stopping = true
            requests.removeAll()
            monitor.broadcast()
        }
        if waiting { thread?.join() } else { thread?.detach() }
    }

    private func run() {
        while let request = next() {
            let (tracks, messages) = load(request.paths)
            mailbox.post(result: .tracksRead(id: request.id, tracks: tracks, messages: messages))
        }
    }

    private func next() -> (id: Int, paths: [String])? {
        monitor.withLock {
            while requests.isEmpty && !stopping { monitor.wait() }
            return stopping ? nil : requests.removeFirst()
        }
    }
}

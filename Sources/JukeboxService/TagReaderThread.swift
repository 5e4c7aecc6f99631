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
    /// One request: paths to read, or other file work (stored playlists) given the loader.
    private enum Job {
        case read([String])
        case work(@Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult)
    }
    // Shared with the thread, under the monitor.
    private var requests: [(id: Int, job: Job)] = []
    private var stopping = false

    /// Starts the thread; `load` turns paths into tracks (`LibraryLoader.load`) and runs on it.
    public init(mailbox: Mailbox, load: @escaping @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) {
        self.mailbox = mailbox
        self.load = load
        thread = NativeThread(name: "jukebox-tags") { [self] in run() }
    }

    /// Queues a request; its result carries `id`.
    public func read(_ paths: [String], id: Int) {
        enqueue(id, .read(paths))
    }

    /// Queues other file work (the MPD face's stored playlists: reads, and writes with their
    /// fsyncs), run in order with the reads, so a `save` is on disk before a later `load` of the
    /// same name is read. `work` gets the tag-reading function; its result carries `id`.
    public func perform(id: Int, _ work: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult) {
        enqueue(id, .work(work))
    }

    private func enqueue(_ id: Int, _ job: Job) {
        monitor.withLock {
            requests.append((id, job))
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
            switch request.job {
            case .read(let paths):
                let (tracks, messages) = load(paths)
                // The audiobook mark is looked for here, where the folder is read anyway.
                let marked = LibraryLoader.resumeMarked(paths)
                mailbox.post(result: .tracksRead(id: request.id, tracks: tracks, messages: messages, marked: marked))
            case .work(let work):
                mailbox.post(result: .workDone(id: request.id, result: work(load)))
            }
        }
    }

    private func next() -> (id: Int, job: Job)? {
        monitor.withLock {
            while requests.isEmpty && !stopping { monitor.wait() }
            return stopping ? nil : requests.removeFirst()
        }
    }
}

/// What file work done off the loop gives back: tracks read, reply lines, or an MPD error.
public typealias FileWorkResult = Result<FileWorkOutput, MPDError>

/// The output of file work done off the loop.
public struct FileWorkOutput: Sendable, Equatable {
    /// Tracks read (with their tags).
    public var tracks: [TrackInfo] = []
    /// Reply lines, or what could not be used.
    public var lines: [String] = []
    /// Raw bytes after the lines (an MPD binary reply: an embedded picture's chunk).
    public var bytes: [UInt8]?

    /// An output of `tracks`, `lines` and `bytes`.
    public init(tracks: [TrackInfo] = [], lines: [String] = [], bytes: [UInt8]? = nil) {
        self.tracks = tracks
        self.lines = lines
        self.bytes = bytes
    }
}

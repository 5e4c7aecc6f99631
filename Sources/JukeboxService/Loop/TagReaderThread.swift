// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// Runs `add`/`load` (a folder walk and a tag read per file, seconds for a large folder on an SD
/// card) on a thread of its own, one request at a time, in order; each result is posted to the
/// loop as `Mailbox.Result.tracksRead`, which turns it into `Event.add` or `Event.replaceQueue`.
/// A request stuck without progress for `limit` seconds (a hung share) is given up and answered
/// as failed, and later ones go on (`JobRunner`).
public final class TagReaderThread: @unchecked Sendable {
    public typealias Load = @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])
    private let load: Load
    private let runner: JobRunner

    /// Starts the thread; `load` turns paths into tracks (`LibraryLoader.load`) and runs on it.
    /// `limit`: seconds a request may go without progress before it is given up.
    public init(mailbox: Mailbox, limit: Double = JobRunner.defaultLimit, load: @escaping Load) {
        self.load = load
        runner = JobRunner(name: "jukebox-tags", mailbox: mailbox, limit: limit)
    }

    /// Queues a request; its result carries `id`.
    public func read(_ paths: [String], id: Int) {
        let load = load
        runner.submit("reading " + (paths.first ?? "") + (paths.count > 1 ? " and \(paths.count - 1) more" : ""), run: {
            let (tracks, messages) = load(paths)
            // The audiobook mark is looked for here, where the folder is read anyway.
            let marked = LibraryLoader.resumeMarked(paths)
            return .tracksRead(id: id, tracks: tracks, messages: messages, marked: marked)
        }, failed: { reason in .tracksRead(id: id, tracks: [], messages: [reason]) })
    }

    /// Queues other file work (the MPD face's stored playlists: reads, and writes with their
    /// fsyncs), run in order with the reads, so a `save` is on disk before a later `load` of the
    /// same name is read. `work` gets the tag-reading function; its result carries `id`.
    public func perform(id: Int, _ work: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult) {
        let load = load
        runner.submit("file work", run: { .workDone(id: id, result: work(load)) },
                      failed: { reason in .workDone(id: id, result: .failure(MPDError(.system, reason))) })
    }

    /// On the loop, every pass: gives up a request without progress (`JobRunner.supervise`).
    public func supervise(now: Double) { runner.supervise(now: now) }

    /// When `supervise` must next run; nil while nothing is read.
    public var nextDeadline: Double? { runner.nextDeadline }

    /// Drops what is queued and ends the thread after the request in hand; `waiting` for that
    /// (tests), or not (the player quitting: a large folder must not hold up its exit).
    public func finish(waiting: Bool = true) {
        runner.finish(waiting: waiting)
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

// SPDX-License-Identifier: MIT
import JukeboxCore

/// The loop's jobs on the tag reader's thread (tags for `add`/`load`/cards, file work for MPD and
/// sticks), never run on the loop, and what waits for each, by job id: the loop hands a job over
/// with `read` or `perform` and gives the result back (`tracksRead`, `workDone`) when the mailbox
/// brings it. The thread starts at the first job.
final class OffLoopJobs {
    typealias Load = @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])
    private let mailbox: Mailbox
    /// Seconds a job may go without progress before it is given up and answered as failed
    /// (`JobRunner`); set before the first job.
    var limit = JobRunner.defaultLimit
    /// Reads files, folders and playlists (tags are I/O); nil: this player cannot load files.
    var load: Load?
    /// Reads the picture embedded in a file's tags, on the tag reader's thread only (TagLib's C
    /// API is not thread-safe); nil: this player reads no embedded pictures.
    var readPicture: (@Sendable (String) -> (type: String, bytes: [UInt8])?)?
    /// Measures an untagged file's loudness, on the loudness worker's thread only; nil: nothing is
    /// measured (`measureLoudness` answers at once with no gain).
    var measureLoudness: LoudnessWorker.Measure?
    /// The loudness cache file; nil: none.
    var loudnessCachePath: String?
    /// The loudness worker, started by the first measurement asked for.
    private var loudness: LoudnessWorker?
    private var reader: TagReaderThread?
    private var nextID = 1
    private var readWaiters: [Int: (_ tracks: [TrackInfo], _ messages: [String], _ marked: Bool) -> Void] = [:]
    private var workWaiters: [Int: (FileWorkResult) -> Void] = [:]

    init(mailbox: Mailbox) {
        self.mailbox = mailbox
    }

    /// The tag reader, started with the first job; nil when this player cannot load files.
    private func started() -> (TagReaderThread, Int)? {
        guard let load else { return nil }
        if reader == nil { reader = TagReaderThread(mailbox: mailbox, limit: limit, load: load) }
        let id = nextID
        nextID += 1
        return reader.map { ($0, id) }
    }

    /// Reads `paths`; `then` gets the tracks, the messages and whether a folder holds
    /// `LibraryLoader.resumeMarker`, on the loop. False when this player cannot load files.
    func read(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String], _ marked: Bool) -> Void) -> Bool {
        guard let (reader, id) = started() else { return false }
        readWaiters[id] = then
        reader.read(paths, id: id)
        return true
    }

    /// Runs file work in order with the reads; `then` gets its result on the loop. False when
    /// this player cannot load files.
    func perform(_ work: @escaping @Sendable (_ load: Load) -> FileWorkResult, then: @escaping (FileWorkResult) -> Void) -> Bool {
        guard let (reader, id) = started() else { return false }
        workWaiters[id] = then
        reader.perform(id: id, work)
        return true
    }

    func tracksRead(id: Int, _ tracks: [TrackInfo], _ messages: [String], marked: Bool) {
        readWaiters.removeValue(forKey: id)?(tracks, messages, marked)
    }

    func workDone(id: Int, _ result: FileWorkResult) {
        workWaiters.removeValue(forKey: id)?(result)
    }

    /// When a job without progress is next given up (the loop wakes for it).
    var nextDeadline: Double? { reader?.nextDeadline }

    func supervise(now: Double) { reader?.supervise(now: now) }

    /// Stops the threads; `waiting`: until their current job is done (a quit does not wait for a
    /// read stuck on a dead share, nor for a scan: the loudness cache was written when its queue
    /// last emptied).
    func finish(waiting: Bool = true) {
        reader?.finish(waiting: waiting)
        loudness?.finish(waiting: waiting)
        loudness = nil
    }

    /// Asks the loudness worker (started now if need be) to measure `path`; its answer comes through
    /// the mailbox. Without a scanner, the answer at once: the event to queue.
    func measureLoudness(_ path: String) -> Event? {
        guard let measure = measureLoudness else { return .loudnessMeasured(path: path, nil) }
        if loudness == nil { loudness = LoudnessWorker(mailbox: mailbox, cachePath: loudnessCachePath, measure: measure) }
        loudness?.submit(path)
        return nil
    }
}

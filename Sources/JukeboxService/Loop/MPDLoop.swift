// SPDX-License-Identifier: MIT
import JukeboxCore

/// The one port through which the MPD face reaches the loop: it reads the state, hands the core
/// events, waits for saves and has files read off the loop. `MPDPort` is its one implementation;
/// the face never sees the runtime.
protocol MPDLoop: AnyObject {
    /// The player state (the face reads it; only `dispatch` changes it).
    var state: State { get }
    var log: Log { get }
    /// Where off-loop workers post their results.
    var mailbox: Mailbox { get }
    /// Monotonic seconds, the loop's clock.
    var clock: () -> Double { get }
    /// Seconds an off-loop job may go without progress (`JobRunner`).
    var jobLimit: Double { get }
    /// The number of the last save handed to the writer.
    var saveNumber: UInt64 { get }
    /// Reads a file's embedded picture on the tag reader's thread; nil: none can be read.
    var readPicture: (@Sendable (String) -> (type: String, bytes: [UInt8])?)? { get }
    /// Brings the core's position up to the frame heard.
    func feedHeard()
    /// Feeds one event through the core and carries out its commands.
    func dispatch(_ event: Event)
    /// Calls `then` once every save since number `since` is finished.
    func afterSaves(since: UInt64, _ then: @escaping (_ error: String?) -> Void)
    /// Reads `paths` (folders, playlists, files) on the tag reader; false when this player cannot.
    func readTracks(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String]) -> Void) -> Bool
    /// Runs file work on the tag reader's thread, in order with its reads; false when it cannot.
    func offLoop(_ work: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult,
                 then: @escaping (FileWorkResult) -> Void) -> Bool
    /// A fresh shuffle seed.
    func nextSeed() -> UInt64
}

/// The MPD face's port (`MPDLoop`): it reaches the loop only through `LoopCore`, the tag reader
/// (`OffLoopJobs`) and the saves (`SaveLedger`). The loop holds it; the face holds it weakly.
final class MPDPort: MPDLoop {
    private unowned let core: LoopCore
    let log: Log
    let mailbox: Mailbox
    let clock: () -> Double
    private let jobs: OffLoopJobs
    private let saving: SaveLedger

    init(core: LoopCore, log: Log, mailbox: Mailbox, clock: @escaping () -> Double, jobs: OffLoopJobs, saving: SaveLedger) {
        self.core = core
        self.log = log
        self.mailbox = mailbox
        self.clock = clock
        self.jobs = jobs
        self.saving = saving
    }

    var state: State { core.state }
    func feedHeard() { core.feedHeard() }
    func dispatch(_ event: Event) { core.dispatch(event) }
    func nextSeed() -> UInt64 { core.nextSeed() }
    var jobLimit: Double { jobs.limit }
    var saveNumber: UInt64 { saving.number }
    var readPicture: (@Sendable (String) -> (type: String, bytes: [UInt8])?)? { jobs.readPicture }

    func afterSaves(since: UInt64, _ then: @escaping (_ error: String?) -> Void) {
        saving.after(since: since, then)
    }

    /// Reads `paths` off the loop and calls `then` on the loop with what was found; false when
    /// this player cannot load files.
    func readTracks(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String]) -> Void) -> Bool {
        jobs.read(paths) { tracks, messages, _ in then(tracks, messages) }
    }

    /// Runs file work on the tag reader's thread, in order with its reads, and calls `then` on
    /// the loop with the result; false when this player cannot load files.
    func offLoop(_ work: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult,
                 then: @escaping (FileWorkResult) -> Void) -> Bool {
        jobs.perform(work, then: then)
    }
}

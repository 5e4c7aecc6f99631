// SPDX-License-Identifier: MIT
import JukeboxCore

/// The one port through which the MPD face reaches the loop: it reads the state, hands the core
/// events, waits for saves and has files read off the loop. `Runtime` is its one implementation;
/// the face never sees the runtime's other parts.
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

extension Runtime: MPDLoop {
    /// Reads `paths` off the loop and calls `then` on the loop with what was found; false when
    /// this player cannot load files.
    func readTracks(_ paths: [String], then: @escaping (_ tracks: [TrackInfo], _ messages: [String]) -> Void) -> Bool {
        readSource(paths) { tracks, messages, _ in then(tracks, messages) }
    }

    /// Runs file work on the tag reader's thread, in order with its reads, and calls `then` on
    /// the loop with the result; false when this player cannot load files.
    func offLoop(_ work: @escaping @Sendable (_ load: @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) -> FileWorkResult,
                 then: @escaping (FileWorkResult) -> Void) -> Bool {
        jobs.perform(work, then: then)
    }

    /// Opens the MPD face; returns one line per address it could not listen on (the player
    /// plays on without them). `musicFolders` are where relative `add` names and `file:` lines
    /// are rooted; `playlists` is the stored playlists' folder (nil: none, the commands refuse).
    public func openMPD(_ settings: MPDSettings, musicFolders: [String] = [], playlists: String? = nil) -> [String] {
        let face = MPDFace(settings: settings, loop: self, musicFolders: musicFolders, playlists: playlists)
        faces.mpd = face
        return face.listener.problems
    }

    /// Builds the MPD library index of the music folders off the loop (when the MPD face is on);
    /// call once `loadTracks` is set. Playback does not wait for it.
    public func startMPDLibrary() {
        mpd?.startLibrary()
    }

    /// Where the MPD listener listens (nil when it is off).
    public var mpdListening: [String]? { mpd?.listener.listening }
}

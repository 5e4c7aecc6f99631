// SPDX-License-Identifier: MIT

/// An order from the core to the shell. The shell carries it out through an adapter and reports
/// what happened as a new `Event`; commands never return values.
public enum Command: Equatable, Sendable {
    /// Stop whatever plays, open `path` and start at `at` seconds (or hold there, `paused`).
    /// Reports for this play carry `playID`. `next` is the gapless successor, handed over in the
    /// same order so a short track cannot end before its successor is known. `gain` is the linear
    /// factor its samples are scaled by (ReplayGain); nil leaves them untouched (bit-exact).
    /// `speed` is the playback speed with the pitch kept (`Speed`); nil: 1, no stretching
    /// (bit-exact). `at` and every position reported stay in the file's own time.
    case startTrack(playID: UInt64, path: String, at: Double, paused: Bool, next: NextPlay? = nil, gain: Double? = nil,
                    speed: Double? = nil)
    /// Decode this track ahead and continue into it without a gap when the current one ends,
    /// its samples scaled by `gain` from its first frame (nil: untouched), at `speed` (nil: 1).
    case setNext(playID: UInt64, path: String, gain: Double? = nil, speed: Double? = nil)
    /// Play `playID` (the current play, or a successor handed) at `speed` from what is not yet
    /// heard on, in place: the file stays open and the place does not move (nil: 1, the stretcher
    /// taken out, bit-exact again).
    case setSpeed(playID: UInt64, speed: Double?)
    /// Forget the track to continue with; the engine stops at the end of the current one.
    case clearNext
    /// Pause output, keeping the position.
    case pauseOutput
    /// Resume paused output.
    case resumeOutput
    /// Stop output and release the device.
    case stopOutput
    /// Stop output and close the device, then report `Event.deviceReleased(token)` (also when no
    /// device was open), so whoever waits for the device knows it is free.
    case releaseDevice(token: UInt64)
    /// Check whether the idle engine could open the device now (open and close it, nothing decoded);
    /// the answer comes back as `Event.deviceAvailable` or `Event.deviceUnavailable`.
    case probeDevice
    /// Tell the requester of interruption `id` that the device is free now.
    case grant(id: String)
    /// Move the current play to `to` seconds.
    case seekOutput(to: Double)
    /// Set the volume the samples are scaled to (0–100): the player's volume, or 100 while a
    /// Bluetooth speaker's own volume carries it (`Reduce+BluetoothVolume`).
    case setVolume(Int)
    /// Turn the speaker's PCM's soft volume off (its `Volume` becomes the speaker's own) and set
    /// it to `level` (0–127), off the loop; `Event.bluetoothVolumeControl` answers.
    case takeBluetoothVolume(level: Int)
    /// Set the speaker's volume (its PCM's `Volume`, 0–127, both channels), off the loop.
    case setBluetoothVolume(level: Int)
    /// Play through this device from the next opening on (`OutputRoute`); the core stops what
    /// plays first, so the next play opens it.
    case routeOutput(OutputRoute)
    /// Save this snapshot (atomically), queue and place: the queue (tracks, order, shuffle)
    /// changed since the last save, or nothing was saved yet. The outcome comes back as `Event.saved`.
    case persist(Snapshot)
    /// Save only this snapshot's place (current track, position, phase, repeat, volume): its queue
    /// is the one the last `persist` carried, so rewriting it would only wear the card. The
    /// outcome comes back as `Event.saved`.
    case persistPlace(Snapshot)
    /// Save these bookmarks (all of them, oldest first) atomically in the bookmarks file. Sent
    /// only when one changed, and never before `Event.bookmarksLoaded`.
    case persistBookmarks([Bookmark])
    /// Save the podcasts (episodes known and places) atomically in the podcasts file. Sent only
    /// when something changed, and never before `Event.podcastsLoaded`.
    case persistPodcasts([PodcastFeed])
    /// Fetch podcast `name`'s feed at `url` off the loop and report `Event.podcastFetched` or
    /// `Event.podcastFailed`.
    case fetchPodcast(name: String, url: String)
    /// Download episode `id` of podcast `name` from `url` to `file` (relative to the shell's
    /// downloads folder), at most `maxBytes`; report `Event.episodeDownloaded` or
    /// `Event.episodeDownloadFailed`.
    case downloadEpisode(name: String, id: String, url: String, file: String, maxBytes: Int64)
    /// Delete a downloaded episode's file (a path an `episodeDownloaded` reported).
    case deleteEpisodeFile(path: String)
    /// Show this status (terminal, display, console).
    case render(StatusView)
    /// Show this frame on the panel.
    case show(DisplayFrame)
    /// Tell the user and the log this message.
    case report(String)
    /// Fire `Event.timerFired(id, at:)` after `after` seconds, replacing a pending timer of that id.
    case startTimer(TimerID, after: Double)
    /// Cancel a pending timer (no-op when none is pending).
    case cancelTimer(TimerID)
    /// Read the level of this button's line now and report it as `Event.buttonLevel`.
    case readLevel(Button)
    /// Read these paths (folders, playlists, files) off the loop and report the tracks as
    /// `Event.cardTracks(card:)`.
    case loadCard(card: String, paths: [String])
    /// Read the stick mounted at `path` off the loop and report its tracks as `Event.usbTracks`:
    /// first its folders up to the one holding `through` (the stick's bookmarked track; nil: the
    /// first folder), so that play starts there while the rest is read.
    case loadUSB(path: String, through: String? = nil)
    /// Put card `card` on the cards map as `value` (`card assign --next`, then a swipe) and
    /// report the outcome as `Event.cardAssigned`.
    case assignCard(card: String, value: String)
    /// Measure the loudness of the file at `path` off the loop (the shell's cache first, else a
    /// scan at low priority) and report it as `Event.loudnessMeasured`. Asked only for files
    /// without gain tags while a loudness mode is on (`State.followLoudness`).
    case measureLoudness(path: String)
    /// Run this program (an argument vector, never through a shell) once the saves ordered before
    /// it are finished (it comes after its step's save: a power command finds the place on disk),
    /// and do not wait for it.
    case runProgram([String])
    /// End the Bluetooth connection of the device at `address` (`AA:BB:CC:DD:EE:FF`), off the
    /// loop; the outcome is only logged (a phone refused by `sources` `forbidden`).
    case disconnectBluetooth(address: String)
    /// End the program with this exit code (after carrying out the commands before it).
    case exit(code: Int32)
}

/// A play to continue into without a gap.
public struct NextPlay: Equatable, Sendable {
    /// The id its reports will carry.
    public var playID: UInt64
    /// The file.
    public var path: String
    /// The linear factor its samples are scaled by; nil: untouched.
    public var gain: Double?
    /// Its playback speed; nil: 1.
    public var speed: Double?

    /// Creates a successor.
    public init(playID: UInt64, path: String, gain: Double? = nil, speed: Double? = nil) {
        self.playID = playID
        self.path = path
        self.gain = gain
        self.speed = speed
    }
}

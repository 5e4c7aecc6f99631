// SPDX-License-Identifier: MIT

/// Something that happened: a person's intent, an outcome from an adapter, or time passing.
/// Events are facts; `reduce` decides what follows from them.
public enum Event: Equatable, Sendable {
    // MARK: Intents (keys, buttons, console, socket)
    /// Start or resume playback.
    case play
    /// Pause, keeping the position.
    case pause
    /// Pause when playing, else play.
    case togglePlayPause
    /// Stop and rewind the current track.
    case stop
    /// Go to the next chapter of a file with chapters, else the next track in play order.
    case next
    /// Restart the chapter (a file with chapters) or the track when more than the threshold was
    /// heard of it, else go to the previous chapter or track.
    case previous
    /// Go to the next track whatever its chapters (MPD's `next`: its clients think in songs).
    case nextFile
    /// `previous` by tracks only, whatever their chapters.
    case previousFile
    /// Go to an absolute position in the current track (seconds; clamped to the track).
    case seek(to: Double)
    /// Move by a signed number of seconds (clamped to the track).
    case seekBy(Double)
    /// Make the queue entry at this index (queue order, 0-based) current at 0 s and play it.
    case playEntry(at: Int)
    /// Go to `to` seconds in the queue entry at this index: a seek when it is the current track,
    /// else that entry plays from there (MPD's `seek` and `seekid`).
    case seekEntry(at: Int, to: Double)
    /// Set the volume (0–100, clamped to the configured range).
    case setVolume(Int)
    /// Change the volume by a signed number of points.
    case changeVolume(by: Int)
    /// Turn shuffle on or off; `seed` drives the permutation (time and randomness are inputs).
    case setShuffle(Bool, seed: UInt64)
    /// Turn shuffle on when off and off when on; `seed` is used when turning it on.
    case toggleShuffle(seed: UInt64)
    /// Set the repeat mode.
    case setRepeat(RepeatMode)
    /// Move to the next repeat mode (off → all → one → off).
    case cycleRepeat
    /// Append tracks to the queue.
    case add([TrackInfo])
    /// Replace the queue with these tracks and start playing the first.
    case replaceQueue([TrackInfo])
    /// Remove the queue entry at this index (queue order, 0-based).
    case remove(at: Int)
    /// Move the queue entry at `from` to index `to` (queue order, 0-based).
    case move(from: Int, to: Int)
    /// Move the entries in `range` (queue order, 0-based) so that the first of them is at index
    /// `to` of the resulting queue, keeping their order (MPD's `move START:END TO`).
    case moveRange(Range<Int>, to: Int)
    /// Insert tracks so that the first is at this index (queue order, 0-based; the queue's count
    /// appends). Not shuffled: they play in queue order. Shuffled: they play right after the
    /// current track (MPD's `addid URI POS`, `mpc insert`: "play these next").
    case insert([TrackInfo], at: Int)
    /// Shuffle the entries in `range` (queue order) among themselves: the queue's order changes,
    /// not the shuffle mode (MPD's `shuffle [START:END]`); `seed` drives the permutation.
    case shuffleEntries(Range<Int>, seed: UInt64)
    /// Empty the queue and stop.
    case clear
    /// Stop the sound (as a pause: the place is kept) after this many seconds or at the end of
    /// the track, chapter or folder, fading out first; nil turns the sleep timer off. A new one
    /// replaces the old (`Reduce+Sleep.swift`).
    case sleepTimer(SleepRequest?)
    /// `speed X`: the queue loaded plays at this speed with the pitch kept (within `Speed.range`);
    /// nil: back to each folder's speed (`Settings.speeds`). A new queue starts without one.
    case setSpeed(Double?)
    /// Another program or a signal line needs the sound device: release it and keep the place.
    /// `id` names the interruption (several may overlap; the player resumes after the last ends).
    /// Every begin is answered by `Command.grant(id)` once the device is free.
    case interruptBegan(id: String, reason: String)
    /// The most recent interruption with this `id` is over.
    case interruptEnded(id: String)
    /// Another program (`name`: `airplay`, `bluetooth`; `OtherSource.isValidName`) starts to play
    /// through the box; `sender` is who sends (an AirPlay sender's name, a phone's: text from
    /// anywhere, "" when not known). By the source's policy (`Settings.sources`) it is refused
    /// (`forbidden`: `message` says so, nothing is released, no grant comes) or it becomes the
    /// interruption `OtherSource.interruptionID(name)`, answered by `Command.grant` once the
    /// device is free and ended by `interruptEnded` with that id (`stay-paused`: then paused).
    case sourceBegan(name: String, sender: String)
    /// Who sends to source `name`, learnt apart from its begin (AirPlay's metadata pipe, read by
    /// `AirPlayMetadata`): text from anywhere, made inert and bounded here. Shown by the source's
    /// interruption in force, or else by its next one whose begin names no sender; forgotten
    /// when that interruption ends, so the order of the name and the begin does not matter.
    case sourceSender(name: String, sender: String)
    /// The player has just started; the shell sends it once, before anything else. The start-up
    /// volume applies whatever a state file says or lacks: `Settings.bootVolume` when set, else
    /// the current volume, kept within `volumeMin`–`volumeMax`; the engine is told.
    case started
    /// Restore a saved state at start-up (every entry of the file; a track whose file is gone is
    /// skipped when it is reached, and the music not being there is `musicMissing`).
    case restore(Snapshot)
    /// The current track's folder is not there (a USB stick or a network share not mounted yet);
    /// the payload is the outermost folder of its path that is absent, for people. Nothing is
    /// opened until `musicAppeared`: a play waits, and the queue and the place are kept.
    case musicMissing(String)
    /// The folder the player waited for (`State.awaitedMusicFolder`) is there: it resumes where it
    /// was if it wanted to play. A no-op when no music is missing.
    case musicAppeared
    /// The start had nothing saved to play and found nothing playable in these folders (the
    /// config's `music`): the player waits for music to arrive there (`State.musicAwaited`) and
    /// says so once. A no-op when the queue is not empty.
    case musicAwaited([String])
    /// The folders waited for (`State.awaitedMusicFolders`) changed and were read again, off the
    /// loop: `tracks` (none: still nothing to play, said no more), `messages` what was skipped. While nobody
    /// changed the queue meanwhile they are queued and played as the start would have done;
    /// otherwise the arrival changes nothing.
    case musicFound(folders: [String], tracks: [TrackInfo], messages: [String])
    /// The state file cannot be read (`reason`: EACCES, EIO...), or can be read again (nil).
    /// While it cannot, nothing is saved over it; the status says so.
    case stateFileUnreadable(String?)
    /// The program should end cleanly (q key, SIGTERM).
    case quit
    /// Save the state now (console `save`).
    case saveRequested
    /// The configuration was reloaded (SIGHUP): new policy, same queue and playback.
    case reconfigured(Settings)

    // MARK: Board inputs (times are the kernel's event timestamps, CLOCK_MONOTONIC seconds)
    /// A button line changed level (`pressed` after active-low is applied); bouncy, raw.
    case buttonEdge(Button, pressed: Bool, at: Double)
    /// The level of a button's line, read because the core asked (`Command.readLevel`); nil when
    /// it could not be read (no such line, the lines are closed, the read failed).
    case buttonLevel(Button, pressed: Bool?, at: Double)
    /// The rotary encoder's lines after an edge on either of them.
    case encoderEdge(a: Bool, b: Bool, at: Double)
    /// A key from a Linux input device (`value` 1 down, 2 autorepeat, 0 up).
    case mediaKey(code: Int, value: Int, at: Double)
    /// A card reader read this id (as the reader gave it: the core keeps letters and digits only).
    case cardRead(id: String, at: Double)
    /// A reader that sees cards lying on it (RC522, PN532) no longer sees this one, at the reader's time.
    case cardRemoved(id: String, at: Double)
    /// The cards map was (re)loaded (at start, when its file changed, on SIGHUP).
    case cardsLoaded(CardMap)
    /// The tracks of card `card` were read, as `Command.loadCard` asked; `messages` tell what was
    /// skipped and why; `marked`: one of its folders holds a `.jukebox-resume` file.
    case cardTracks(card: String, tracks: [TrackInfo], messages: [String], marked: Bool = false)
    /// `load PATH`: the queue becomes these tracks, read from `source` (its bookmark applies).
    case loadSource(QueueSource, tracks: [TrackInfo])
    /// The battery monitor read the battery (`Reduce+Battery`).
    case battery(BatteryReading)
    /// The low-battery pin (a PowerBoost's LBO) is asserted (`true`) or let go: sent once when the
    /// line is first read, then at each change (`Reduce+Battery`).
    case batteryPin(low: Bool)
    /// The sound card's headphone jack: headphones are in (`true`) or out. Sent once when the jack
    /// is first read, then at each change (`Reduce+Headphones`).
    case headphones(plugged: Bool)
    /// The configured Bluetooth speaker's A2DP device is there (`true`: connected) or gone. Sent
    /// once when bluez-alsa is first asked, then at each change (`Reduce+Outputs`).
    case bluetoothSpeaker(connected: Bool)
    /// The speaker's PCM's volume changed (bluez-alsa's `Volume` property, with the PCM's soft
    /// volume off the speaker's own, AVRCP absolute volume): `level` 0–127 (the louder channel),
    /// `muted` both channels' mute bits (bluez-alsa's switch on the box: AVRCP has no mute).
    /// What the player sent comes back too (`Reduce+BluetoothVolume`).
    case bluetoothVolume(level: Int, muted: Bool)
    /// The answer to `Command.takeBluetoothVolume`: the speaker's PCM carries the volume now
    /// (`taken`), or it cannot (`reason`: what bluealsa-cli said, text from outside).
    case bluetoothVolumeControl(taken: Bool, reason: String)
    /// A phone plays through the box over Bluetooth (bluez-alsa's A2DP sink PCM runs: `true`,
    /// `sender` its name or address, text from anywhere; `address` the phone's, from the PCM's
    /// path, "" when not known) or has stopped (`false`: the PCM stopped or went, or the watch on
    /// bluez-alsa ended). A fact, reported at each change: the core makes it the source
    /// `bluetooth` beginning (`sourceBegan`, by its policy; refused, the phone is disconnected)
    /// and ending (`Reduce+Interruption`).
    case bluetoothPhone(streaming: Bool, sender: String, address: String = "")
    /// A USB stick was mounted at `path` (a folder right under a watched mount root).
    case usbInserted(path: String)
    /// The stick mounted at `path` is gone (unmounted or pulled out).
    case usbRemoved(path: String)
    /// The tracks of the stick at `path` were read, as `Command.loadUSB` asked: all of them, or
    /// (`more`) its first folder in play order (through the bookmark's folder), the rest to
    /// follow as `usbMoreTracks`, so a big stick plays before it is all read.
    case usbTracks(path: String, tracks: [TrackInfo], messages: [String], more: Bool = false)
    /// The rest of the stick at `path`, after a `usbTracks` with `more`: appended to the queue
    /// while that queue is still the stick's.
    case usbMoreTracks(path: String, tracks: [TrackInfo], messages: [String])
    /// The bookmarks file was read at start (absent: none); until this arrives nothing is saved
    /// over it.
    case bookmarksLoaded([Bookmark])
    /// `card assign --next VALUE`: the next card swiped gets `value` on the map instead of
    /// playing (nil: `card assign --cancel`, the waiting assignment is dropped). `value` was
    /// checked by `Cards.parseAction` when the line was parsed.
    case cardAssignNext(String?)
    /// The shell wrote (or could not write: `error`) the assignment `Command.assignCard` asked for.
    case cardAssigned(card: String, value: String, error: String?)
    /// `bookmark reset PATH`: the bookmarks of the sources whose first path is `path` are
    /// dropped (nil: `bookmark reset --all`, every bookmark), so they start from the top.
    case resetBookmarks(path: String?)
    /// The appliance image's boot-time problems, read by the shell at start and at a reload
    /// (`SetupProblems.lines`; empty: none, or no file). The display shows a notice a while.
    case setupProblems([String])
    /// The podcasts file is being read off the loop (`podcastsLoaded` follows): a `podcast NAME`
    /// meanwhile waits for it.
    case podcastsReading
    /// The podcasts file was read at start (absent: none); until this arrives nothing is saved
    /// over it. nil: it could not be read (nothing is saved over it this run).
    case podcastsLoaded([PodcastFeed]?)
    /// Podcast `name`'s feed was fetched and read: its title and episodes in the feed's order.
    case podcastFetched(name: String, title: String, episodes: [PodcastEpisode])
    /// Podcast `name`'s feed could not be fetched or read (what was known stays).
    case podcastFailed(name: String, reason: String)
    /// `podcast NAME`: play the podcast's next episodes (`PodcastFeed.nextUp`).
    case playPodcast(name: String)
    /// MPD's `add podcast://NAME`: the podcast's next episodes appended to the queue, not played.
    case queuePodcast(name: String)
    /// Episode `id` of podcast `name` is downloaded whole to `path` (absolute), `bytes` long.
    case episodeDownloaded(name: String, id: String, path: String, bytes: Int64)
    /// Episode `id` of podcast `name` could not be downloaded.
    case episodeDownloadFailed(name: String, id: String, reason: String)
    /// Episode `id` of podcast `name` has `bytes` on disk so far of `total` (nil: the server did
    /// not say); reported at most about once a second or per 5 % (`EpisodeDownload`).
    case episodeDownloadProgress(name: String, id: String, bytes: Int64, total: Int64?)

    // MARK: Outcomes from the audio engine (`playID` is the one the start command carried)
    /// The first sample of a play was handed to the device.
    case trackStarted(playID: UInt64)
    /// A play reached its end; `next` is the play the engine went on with by itself (a gapless
    /// successor it was handed), nil when it stopped there.
    case trackFinished(playID: UInt64, next: UInt64?)
    /// A play could not be opened or decoded. `missing`: what the shell found about where the
    /// track's music went (nil: nothing is missing, the file itself is at fault); the core
    /// decides what that means.
    case trackFailed(playID: UInt64, reason: String, missing: MissingMusic? = nil)
    /// The sound device could not be had; the engine is idle and holds no device.
    case deviceUnavailable(reason: String, problem: DeviceProblem)
    /// A probe (`Command.probeDevice`) found the sound device free; a probe that could not have it
    /// reports `deviceUnavailable` instead.
    case deviceAvailable
    /// The kernel's sound devices changed (a card's device nodes appeared or changed owner): a
    /// device that was lost may be back.
    case soundDevicesChanged
    /// The engine closed the device as asked by `Command.releaseDevice(token:)`; `heard` is where
    /// the sound really stopped (a release plays out a short fade after the request).
    case deviceReleased(token: UInt64, heard: PlayPosition?)
    /// What the HTTP(S) stream of play `playID` is doing (station, title, buffering, reconnecting),
    /// pulled from the adapter with the ticks.
    case streamStatus(playID: UInt64, StreamStatus)
    /// Where the listener is: seconds into the play `playID` (the frame actually heard).
    case heard(playID: UInt64, seconds: Double)
    /// A state save finished; `error` says why it failed.
    case saved(error: String?)
    /// The file at `path` was measured as `Command.measureLoudness` asked (from the shell's cache
    /// or a scan): its track gain and peak, nil when it could not be measured (the shell logged why).
    case loudnessMeasured(path: String, Loudness?)

    // MARK: Time
    /// The monotonic clock read `now` seconds.
    case tick(now: Double)
    /// A timer the core started has expired.
    case timerFired(TimerID, at: Double)
    /// The wall clock as local time (the shell converts, so time zones and DST are its facts),
    /// and whether the kernel holds it synchronised (`adjtimex`: `STA_UNSYNC` clear). Sent with
    /// parental rules configured, at start and whenever either changes (`Reduce+Parental.swift`).
    case wallClock(LocalTime, synchronized: Bool)
}

/// Why the device could not be had: decides whether waiting can help.
public enum DeviceProblem: String, Equatable, Sendable {
    /// Another program holds it; waiting helps.
    case busy
    /// It is gone (unplugged, powered off, stalled); it may come back.
    case lost
    /// It cannot play this track's format; waiting does not help.
    case unsupported
}

/// A point in a play, as the engine reports it.
public struct PlayPosition: Equatable, Sendable {
    /// The play's id.
    public var playID: UInt64
    /// Seconds into its track.
    public var seconds: Double

    /// Creates a position.
    public init(playID: UInt64, seconds: Double) {
        self.playID = playID
        self.seconds = seconds
    }
}

/// Where a track's music went, as the shell found it when the track failed: facts about the file
/// system, looked at and not judged (both are looked for). The core decides what they mean
/// (`State.engineReport`): a stick gone is the stick's removal, else a folder gone is music to
/// wait for, never a skip; with neither the failure is the track's.
public struct MissingMusic: Equatable, Sendable {
    /// The USB stick that holds it, when that stick is gone (its mount point may still be there,
    /// empty or stale).
    public var goneStick: String?
    /// The outermost folder above it that is not there (a share gone, a folder moved).
    public var goneFolder: String?

    /// What was found (nil each: that was there).
    public init(goneStick: String? = nil, goneFolder: String? = nil) {
        self.goneStick = goneStick
        self.goneFolder = goneFolder
    }

    /// Only the stick at `path` was found gone.
    public static func stickGone(path: String) -> MissingMusic { MissingMusic(goneStick: path) }
    /// Only `folder` was found missing.
    public static func folderGone(_ folder: String) -> MissingMusic { MissingMusic(goneFolder: folder) }
}

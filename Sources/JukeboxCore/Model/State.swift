// SPDX-License-Identifier: MIT

/// A play the engine has been told about: which queue entry it is and the id its reports carry.
public struct PlayRef: Equatable, Sendable {
    /// The id carried by `startTrack`/`setNext` and by the engine's reports.
    public var playID: UInt64
    /// The queue entry being played.
    public var trackID: UInt64

    /// Creates a reference.
    public init(playID: UInt64, trackID: UInt64) {
        self.playID = playID
        self.trackID = trackID
    }
}

/// The fields whose change makes the state worth saving at once (the position alone is saved
/// at most every `saveInterval` while playing).
/// A successor replaced by the same track handed again (`State.handedBefore`).
public struct HandedBefore: Equatable, Sendable {
    /// The play first handed.
    public var ref: PlayRef
    /// The play it was to follow.
    public var after: UInt64

    public init(ref: PlayRef, after: UInt64) {
        self.ref = ref
        self.after = after
    }
}

public struct SaveMark: Equatable, Sendable {
    /// `State.queueRevision` when saved.
    public var queueRevision: Int
    /// The current track's id when saved.
    public var currentTrackID: UInt64?
    /// The persisted phase when saved.
    public var phase: SavedPhase
    /// Shuffle when saved.
    public var shuffle: Bool
    /// Repeat mode when saved.
    public var repeatMode: RepeatMode
    /// Volume when saved.
    public var volume: Int
    /// The queue's own speed when saved (`State.queueSpeed`): kept in the queue file.
    public var speed: Double? = nil
    /// The reset of the queue's source's bookmark when saved (`State.bookmarkReset`): kept in
    /// the queue file.
    public var bookmarkReset: BookmarkReset? = nil

    /// Whether only the volume differs from `other`.
    func sameExceptVolume(_ other: SaveMark) -> Bool {
        var copy = other
        copy.volume = volume
        return copy == self
    }
}

/// Everything the player knows. Owned by one loop; changed only by `reduce`.
public struct State: Equatable, Sendable {
    /// Policy knobs.
    public var settings: Settings
    /// The queue in queue order (what `queue` lists and indices in events refer to).
    public var queue: [Track] = []
    /// Track ids in play order (queue order unless shuffled).
    public var order: [UInt64] = []
    /// Index into `order` of the current track; nil when there is none.
    public var cursor: Int?
    /// The player's phase.
    public var phase: PlayerPhase = .stopped
    /// Seconds heard into the current track.
    public var position: Double = 0
    /// Volume 0–100.
    public var volume: Int = 100
    /// Whether shuffle is on.
    public var shuffle = false
    /// Seed of the current shuffle; later permutations derive from it.
    public var shuffleSeed: UInt64 = 0
    /// Repeat mode.
    public var repeatMode: RepeatMode = .off
    /// The last problem worth showing (a skipped file, a failed save); cleared by an intent.
    public var message: String?
    /// The outermost folder of the current track's path that is not there (a USB stick or a
    /// network share not mounted yet), as the shell reported it; nil when the music is there.
    /// While set nothing is opened: a play waits (`PlayerPhase.waitingForMusic`), nothing is
    /// skipped or dropped.
    public var musicMissing: String?
    /// The start's wait for music in the configured folders, which held nothing to play and
    /// nothing was saved (`MusicWait`); nil when not waiting. The shell looks at the folders
    /// (`awaitedMusicFolders`) and reads them again when they change (`Event.musicFound`).
    public var musicAwaited: MusicWait?
    /// Why the state file cannot be read, as the shell reported it; while set nothing is saved,
    /// so the file is kept as it is (see `Event.stateFileUnreadable`).
    public var stateUnreadable: String?

    /// Interruptions in force, oldest first (see `Event.interruptBegan`).
    public var interruptions: [Interruption] = []
    /// The phase to return to when the last interruption ends (`playing`, `paused` or `stopped`).
    public var afterInterruption: PlayerPhase = .stopped
    /// Senders' names learnt apart from a begin (`Event.sourceSender`), by source name, already
    /// inert and bounded: shown by that source's interruption, forgotten when it ends.
    public var sourceSenders: [String: String] = [:]
    /// Interruptions waiting for `Command.grant` until the device is released.
    public var pendingGrants: [String] = []
    /// The release the core waits for, if any.
    public var releaseToken: UInt64?
    /// The play that release let go of: its report of where the sound stopped updates `position`.
    public var releasedPlay: UInt64?
    /// Token for the next `releaseDevice`.
    public var nextReleaseToken: UInt64 = 1

    /// Whether the startup chime has had its turn.
    public var chimePlayed = false
    /// The chime's play while it sounds.
    public var chimePlay: UInt64?
    /// Where the current track starts once the chime has played.
    public var afterChime: Double?

    /// Every button's debounce and gesture state.
    public var buttons: [Button: ButtonState] = [:]
    /// The rotary encoder's decoder.
    public var encoderState = EncoderState()
    /// The cards map, the last read and the card playing.
    public var cards = CardState()
    /// The speed set for the queue loaded: by its card (`CardMap.speeds`) or by `speed X`; nil:
    /// each track at its folder's speed (`Settings.speeds`). A new queue starts without one.
    public var queueSpeed: Double?
    /// What the queue was loaded from (a card's paths, a `load`), when it keeps a bookmark under
    /// the settings; nil for a queue built by hand or one that keeps none.
    /// Saved in the snapshot, so a restart still knows whose bookmark to keep.
    public var source: QueueSource?
    /// Every source's bookmark, oldest first (see `Settings.bookmarks`).
    public var bookmarks: [Bookmark] = []
    /// Whether the bookmarks file has been read (`Event.bookmarksLoaded`); until then nothing is
    /// saved over it, so a file that could not be read is never replaced.
    public var bookmarksReady = false
    /// The stick whose tracks are being read to be played (`Command.loadUSB`); nil: none.
    public var usbLoading: String?
    /// The stick pulled out while the queue played from it, until it is back (`usbInserted`).
    /// Its mount point stays as an empty folder, so the shell's probe of the awaited folder
    /// would see music that is not there: the watcher says when it is back instead.
    public var usbGone: String?
    /// The stick whose first folder is queued and whose rest is being read (`usbMoreTracks`).
    public var usbFilling: String?
    /// Whether `bookmarks` changed since they were last handed to the shell to save.
    public var bookmarksDirty = false
    /// Whether `bookmarks` moved on since they were last handed to the shell only by the place
    /// saves of a source playing on: the state file holds that place too, so they wait for the
    /// next other save (a pause, a new track, a seek, another source, the exit) to be written.
    public var bookmarksAhead = false
    /// The place the restored state file saved (its source, playing or paused), to become that
    /// source's bookmark once the bookmarks file is read: the file may be older by the place
    /// saves it was not written at (`bookmarksAhead`), and a power cut forgot them.
    public var restoredPlace: Bookmark?
    /// The queue's own source had its bookmark reset here and has not played on since
    /// (`resetBookmarks`); saved with the queue.
    public var bookmarkReset: BookmarkReset?
    /// The configured podcasts, in the config's order: their episodes as known and places.
    public var podcasts: [PodcastFeed] = []
    /// Whether the podcasts file has been read (`Event.podcastsLoaded`); until then nothing is
    /// saved over it, as for the bookmarks.
    public var podcastsReady = false
    /// Podcasts taken out of the config, kept with their places and files (`absentStarts`) until
    /// the `podcastAbsentStarts`th start without them: a config edited by mistake loses nothing.
    public var podcastsRemoved: [PodcastFeed] = []
    /// The podcasts file is being read (`Event.podcastsReading`, until `podcastsLoaded`).
    public var podcastsReading = false
    /// A `podcast NAME` (or MPD's `add podcast://NAME`) that came while the file was read: done
    /// when it has been (the latest one).
    public var podcastWaiting: PodcastWait?
    /// Whether `podcasts` changed since they were last handed to the shell to save.
    public var podcastsDirty = false
    /// The episode being downloaded (`Command.downloadEpisode`), as (podcast, episode id); one at
    /// a time, so the budget it was given is the budget left.
    public var podcastDownloading: PodcastEpisodeKey?
    /// How far `podcastDownloading` is, as the downloader last said (nil until it says).
    public var podcastDownloadProgress: DownloadProgress?
    /// Episodes whose download failed since the last refresh: not asked for again until then.
    public var podcastDownloadsFailed: Set<PodcastEpisodeKey> = []

    /// The panel frame shown last (for panels configured in `Settings.display`).
    public var shownFrame: DisplayFrame?
    /// Until when the boot splash shows.
    public var splashUntil: Double = 0
    /// The appliance image's boot-time problems (`Event.setupProblems`, `SetupProblems`): each
    /// line inert and bounded; empty when there are none (or no file is configured).
    public var setupProblems: [String] = []
    /// When the display's notice of `setupProblems` began (after the splash) and until when it shows.
    public var setupNoticeSince: Double = 0
    /// See `setupNoticeSince`.
    public var setupNoticeUntil: Double = 0
    /// Until when the volume overlay shows (a moment after each change).
    public var volumeShownUntil: Double = 0
    /// Until when `message` shows on the panel.
    public var messageUntil: Double = 0
    /// When the shown message appeared (its scrolling starts then).
    public var messageSince: Double = 0
    /// The title scrolling on the panel and since when (a new title starts at its beginning).
    public var titleShown: String?
    /// See `titleShown`.
    public var titleSince: Double = 0
    /// The message the panel timing was set for.
    public var messageShown: String?

    /// The latest monotonic time from `tick`.
    public var now: Double = 0
    /// The last stream status and the play it is of (`Reduce+Stream.swift`).
    public var stream: PlayStreamStatus?
    /// The last stream that said it is on demand (`StreamStatus.onDemandDuration`).
    public var onDemandStream: OnDemandStream?
    /// The loaded play's first sound came (a stream is buffering until then).
    public var streamStarted = false
    /// Id for the next queue entry.
    public var nextTrackID: UInt64 = 1
    /// Id for the next play handed to the engine.
    public var nextPlayID: UInt64 = 1
    /// The play the engine holds for the current track; nil when the engine is idle.
    public var loaded: PlayRef?
    /// The play handed to the engine to continue with gaplessly.
    public var handedNext: PlayRef?
    /// A successor handed, then replaced by the same track handed again (a gain measured, a speed
    /// changed), and the play it was to follow: the engine may have continued into it in the
    /// moment before the loop heard, so its start and the end before it are still the engine
    /// going on as it was told, not a play to start again from 0. Good only while that play is
    /// the one loaded.
    public var handedBefore: HandedBefore?
    /// Consecutive tracks that failed (stops an endless skip loop over a broken queue).
    public var failuresInARow = 0
    /// Where the current run of failures began (the first failed track's order index, the
    /// position heard, and whether the player wanted sound), kept while `failuresInARow` > 0: a
    /// USB stick's removal noticed after its tracks failed explains them, and the place goes back
    /// there (`Reduce+USB.swift`).
    public var failuresFrom: FailurePlace?
    /// Delay before the next device retry.
    public var retryDelay: Double
    /// Whether the kernel announces sound devices as they come (`Event.soundDevicesChanged`, a
    /// watch on /dev/snd the shell runs for a device naming a kernel card): a lost device is then
    /// probed on the announcement, and by timer only `Settings.deviceRetryAnnouncedMax` apart.
    public var deviceReturnAnnounced = false
    /// Bumped on every change of queue contents or order.
    public var queueRevision = 0
    /// What was saved last, to save on change only.
    public var savedMark: SaveMark?
    /// Position saved last.
    public var savedPosition: Double = 0
    /// When the state was saved last (monotonic seconds).
    public var savedAt: Double = 0
    /// While playing, when the next periodic save of the place falls due (monotonic seconds).
    public var placeSaveDue: Double { savedAt + settings.placeSaveSpacing }
    /// The last save error reported (reported once until it changes).
    public var saveError: String?
    /// Delay before the next save after a failed one (`TimerID.saveRetry`).
    public var saveRetryDelay = State.saveRetryFirst
    /// The status last rendered.
    public var shown: StatusView?

    /// Whether the idle power-off timer runs (see `Settings.idlePowerOff`).
    public var idleArmed = false
    /// While idle power-off counts down: when it ends (monotonic seconds, from the timer's firing).
    public var powerOffAt: Double?
    /// The sleep timer, while one runs (`Reduce+Sleep.swift`).
    public var sleep: SleepTimer?
    /// The share of the user's volume a sleep fade has turned the output down to (the volume
    /// ordered is `volume` times it); nil: the output has the user's volume.
    public var sleepFade: Double?
    /// The battery's last reading and what was done about it (`Reduce+Battery`).
    public var battery = BatteryState()
    /// Whether headphones are in the jack, as the card last said; nil: not known (no jack watched,
    /// or before its first report).
    public var headphonesIn: Bool?
    /// Whether the configured Bluetooth speaker is connected (its A2DP device is there), as
    /// bluez-alsa last said; nil: not known (no speaker watched, or before the first report).
    public var bluetoothConnected: Bool?
    /// The sound device last routed to (`Command.routeOutput`): `.card` until the first route,
    /// as the shell's router starts. Where the sound is heard is `output`, from the facts.
    public var routedDevice: OutputRoute = .card
    /// Whether the speaker going paused the play (`BluetoothSettings.WhenGone.pause`): its
    /// return resumes. Cleared by anything that leaves the pause.
    public var pausedByBluetooth = false
    /// The speaker's own volume, as far as the player knows it (`Reduce+BluetoothVolume`).
    public var bluetoothVolume = BluetoothVolumeLink()
    /// The wall clock as last reported and the daily limit's count (`Reduce+Parental.swift`).
    public var parental = ParentalState()
    /// Untagged files' measured loudness, asked for and received (`Reduce+Loudness.swift`).
    public var loudnessScans = LoudnessScans()

    /// How long a volume knob or button must be still before the volume is saved (seconds).
    public static let volumeSaveDelay = 1.0
    /// Seconds before a failed save is tried again, doubled after each failure up to `saveRetryMax`.
    public static let saveRetryFirst = 1.0
    /// The longest wait between retries of a failing save.
    public static let saveRetryMax = 60.0

    /// An empty, stopped player.
    public init(settings: Settings = Settings()) {
        self.settings = settings
        self.retryDelay = settings.deviceRetryInitial
        self.podcasts = settings.podcasts.feeds.map { PodcastFeed(name: $0.name, order: $0.order) }
        // An empty player is what a missing state file means: nothing to write yet.
        self.savedMark = saveMark
    }

    /// The current queue entry, if any.
    public var currentTrack: Track? {
        guard let cursor, order.indices.contains(cursor) else { return nil }
        return track(id: order[cursor])
    }

    /// The queue entry with this id.
    public func track(id: UInt64) -> Track? {
        queue.first { $0.id == id }
    }

    /// The snapshot to persist.
    public var snapshot: Snapshot {
        let index = Dictionary(uniqueKeysWithValues: queue.enumerated().map { ($1.id, $0) })
        let orderIndices = order.compactMap { index[$0] }
        return Snapshot(
            tracks: queue.map(\.info),
            order: shuffle ? orderIndices : nil,
            current: currentTrack.flatMap { index[$0.id] },
            position: position,
            phase: savedPhase,
            shuffle: shuffle,
            shuffleSeed: shuffleSeed,
            repeatMode: repeatMode,
            volume: savedVolume,
            source: source,
            speed: queueSpeed,
            listening: settings.parental.dailyLimit != nil ? parental.listening : nil,
            bookmarkReset: source != nil ? bookmarkReset : nil)
    }

    /// The volume as the state file keeps it: the one a person chose, also while a parental cap
    /// holds it back only because the time of day is not known (`ParentalState.heldVolume`); a
    /// start applies the caps again before the first sample.
    public var savedVolume: Int { parental.heldVolume ?? volume }

    /// The phase as the state file keeps it; an interruption keeps the phase it goes back to.
    public var savedPhase: SavedPhase {
        var saved = SavedPhase(phase)
        if case .interrupted = phase { saved = SavedPhase(afterInterruption) }
        // While a sleep timer runs the music is on borrowed time: a restart comes back paused.
        return sleep != nil && saved == .playing ? .paused : saved
    }

    /// The folder whose appearance ends the wait for music (the current track's), while the
    /// music is missing; the shell probes it (at most once a second) and reports
    /// `Event.musicAppeared`.
    public var awaitedMusicFolder: String? {
        guard let missing = musicMissing, missing != usbGone, let track = currentTrack else { return nil }
        return Paths.directory(track.info.path)
    }

    /// The folders whose change the shell looks for (at most once a second, a stat each: a mount
    /// arrived, entries added) and then reads off the loop, while the start waits for music
    /// (`musicAwaited`); nil when it does not.
    public var awaitedMusicFolders: [String]? { musicAwaited?.folders }

    /// The fields of this state whose change triggers an immediate save.
    public var saveMark: SaveMark {
        SaveMark(queueRevision: queueRevision, currentTrackID: currentTrack?.id, phase: savedPhase,
                 shuffle: shuffle, repeatMode: repeatMode, volume: savedVolume, speed: queueSpeed,
                 bookmarkReset: bookmarkReset)
    }
}

/// One interruption in force: who asked (an id the shell chose) and why.
public struct Interruption: Equatable, Sendable {
    /// The id given with `Event.interruptBegan`.
    public var id: String
    /// Why, for the status ("phone call", "chime"; "AirPlay: Anna's phone" for a source).
    public var reason: String
    /// The other source that holds the device (`airplay`), nil for any other interruption: its
    /// policy (`Settings.sources`) decides what follows when it ends.
    public var source: String?

    /// Creates an interruption record.
    public init(id: String, reason: String, source: String? = nil) {
        self.id = id
        self.reason = reason
        self.source = source
    }
}

/// Where a run of failed tracks began: what a stick's removal noticed late puts back.
public struct FailurePlace: Equatable, Sendable {
    /// The first failed track's index in play order.
    public var cursor: Int
    /// The position heard in it when it failed.
    public var position: Double
    /// Whether the player wanted sound then (playing or waiting for it).
    public var wantedSound: Bool

    public init(cursor: Int, position: Double, wantedSound: Bool) {
        self.cursor = cursor
        self.position = position
        self.wantedSound = wantedSound
    }
}

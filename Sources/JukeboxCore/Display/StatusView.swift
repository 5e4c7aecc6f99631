// SPDX-License-Identifier: MIT

/// What a person should see about the player right now: computed from `State` by the core,
/// drawn by whichever screen the shell has (terminal line, console, display). Its text fields
/// are inert (`DisplayText.inert`): a tag or a file name cannot break a line or send escapes.
public struct StatusView: Equatable, Sendable {
    /// Playing, paused, stopped, waiting or interrupted.
    public var phase: ShownPhase
    /// Title of the current track, or "" with an empty queue.
    public var title: String
    /// Artist of the current track, if known.
    public var artist: String?
    /// Heard time as `m:ss`/`h:mm:ss`.
    public var elapsed: String
    /// Track length as `m:ss`/`h:mm:ss`, or `--:--` when unknown.
    public var duration: String
    /// 1-based position in play order, 0 without a current track.
    public var index: Int
    /// Number of tracks in the queue.
    public var count: Int
    /// Volume 0–100.
    public var volume: Int
    /// Whether shuffle is on.
    public var shuffle: Bool
    /// Repeat mode.
    public var repeatMode: RepeatMode
    /// Why the player waits, or the last problem, or that nothing is saved, if any.
    public var message: String?
    /// The chapter playing in a file with chapters: `3/40 Title`.
    public var chapter: String?
    /// The sleep timer's time left (`29 min`, `45 s`) or its end (`track`), while one runs.
    public var sleep: String?
    /// The playback speed of the track played (`1.25`) when it is not 1.
    public var speed: String?
    /// The episode being downloaded and how far (`State.podcastDownloadShown`), while one is.
    public var download: String?
    /// The output when it is not the box's own (`Bluetooth`); headphones show in `headphones`
    /// of the JSON status, not here, as before.
    public var output: String?

    /// The view of `state`.
    public init(_ state: State) {
        // A start that found nothing to play waits for music: stopped, but not for good.
        phase = state.phase == .stopped && state.musicAwaited != nil ? .waiting : state.phase.shown
        let track = state.shownCurrentInfo
        title = DisplayText.inert(track?.title ?? "")
        artist = track?.artist.map(DisplayText.inert)
        elapsed = TimeFormat.clock(track == nil ? nil : state.position)
        duration = TimeFormat.clock(track?.duration)
        index = state.cursor.map { $0 + 1 } ?? 0
        count = state.queue.count
        volume = state.volume
        shuffle = state.shuffle
        repeatMode = state.repeatMode
        chapter = state.currentChapter.map { DisplayText.inert("\($0.index + 1)/\($0.count) \($0.chapter.title)") }
        let message: String?
        let music = state.musicMissing.map(State.waitingForMusic) ?? state.musicAwaited.map { State.waitingForMusic(in: $0.folders) }
        switch state.phase {
        case .waitingForDevice(let reason): message = "waiting for audio device: \(reason)"
        case .interrupted(let reason):
            // Another source says which has the device ("AirPlay: Anna's phone").
            message = state.interruptions.last?.source != nil ? reason : "interrupted: \(reason)"
        case .waitingForMusic: message = music
        default:
            message = state.message ?? state.streamMessage ?? music
                ?? state.stateUnreadable.map { "not saving: the state file cannot be read (\($0))" }
        }
        self.message = message.map(DisplayText.inert)
        sleep = state.sleepMark
        speed = state.cursor.flatMap { state.playSpeed(at: $0) }.map(Speed.text)
        download = state.podcastDownloadShown
        output = state.output == .bluetooth ? "Bluetooth" : nil
    }

    /// One line for a terminal or console:
    /// `▶ Title – Artist  1:23 / 4:56  [3/12]  vol 80  shuffle  repeat all`.
    public var line: String {
        let glyph: String
        switch phase {
        case .playing: glyph = "▶"
        case .paused: glyph = "⏸"
        case .waiting: glyph = "…"
        case .interrupted: glyph = "⏏"
        case .stopped: glyph = "■"
        }
        let downloading = download.map { "  " + $0 } ?? ""
        if count == 0 { return "\(glyph) queue empty  vol \(volume)" + downloading + (message.map { "  (\($0))" } ?? "") }
        if index == 0 { return "\(glyph) \(count) tracks queued  vol \(volume)" + downloading + (message.map { "  (\($0))" } ?? "") }
        var s = "\(glyph) \(title)"
        if let artist { s += " – \(artist)" }
        if let chapter { s += "  ch \(chapter)" }
        s += "  \(elapsed) / \(duration)  [\(index)/\(count)]  vol \(volume)"
        if shuffle { s += "  shuffle" }
        if repeatMode != .off { s += "  repeat \(repeatMode.rawValue)" }
        if let sleep { s += "  sleep \(sleep)" }
        if let speed { s += "  speed \(speed)" }
        s += downloading
        if let output { s += "  on \(output)" }
        if let message { s += "  (\(message))" }
        return s
    }
}

// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore

/// `status --json`: the one definition of its fields, written by the runtime and read by every
/// program that drives the player through the control socket (the MQTT and Snapcast bridges, the
/// reliability tests).
///
/// Written by hand rather than by `JSONEncoder`: the field order is fixed (people read it in a
/// terminal), control characters in tags are escaped by `JSONText.quoted`, and a number that is
/// not finite is written `null`, which `JSONEncoder` refuses.
public struct PlayerStatusJSON: Decodable, Equatable, Sendable {
    /// The phase's name: `playing`, `paused`, `stopped`, `waiting`, `interrupted`.
    public var phase: String
    /// What is shown as the title (a stream: what is on air).
    public var title: String?
    /// What is shown as the artist (a stream: the station).
    public var artist: String?
    public var album: String?
    /// The current track's path or URL.
    public var path: String?
    /// Seconds into the current track; nil without one.
    public var position: Double?
    /// The track's length in seconds; nil when unknown (a live stream).
    public var duration: Double?
    /// The current track's place in the queue, from 1.
    public var index: Int?
    /// Tracks in the queue.
    public var count: Int
    /// 0...100.
    public var volume: Int
    public var shuffle: Bool
    /// `off`, `one` or `all`.
    public var `repeat`: String
    /// What the status line says besides the track (an error, "buffering 45 %"...).
    public var message: String?
    /// The last card no mapping knew (so an app can offer to map it).
    public var newCard: String?
    /// The current track is an HTTP(S) stream.
    public var stream: Bool
    /// Where the sound is heard: `card`, `headphones` or `bluetooth` (`OutputRoute`; nil from an
    /// older player).
    public var output: String?
    /// `card assign --next`: waiting for a card, or which card got it (`CardsJSON.assignment`).
    public var cardAssign: CardAssignStatus?

    /// The appliance image's boot-time problems (`State.setupProblems`: one inert line each, at
    /// most 21); absent (nil) when there are none.
    public var setupProblems: [String]?

    /// The chapter playing in a file with chapters (an audiobook); nil otherwise.
    public var chapter: ChapterStatus?

    /// The chapter as `status --json` shows it: its number from 1, of how many, its title and start.
    public struct ChapterStatus: Decodable, Equatable, Sendable {
        public var index: Int
        public var count: Int
        public var title: String
        public var start: Double
    }

    /// `card assign --next` as `status --json` shows it.
    public struct CardAssignStatus: Decodable, Equatable, Sendable {
        /// `waiting`, `writing`, `done` or `failed`.
        public var stage: String
        public var value: String
        public var card: String?
        public var error: String?
    }
    /// The battery's last reading (nil without a battery monitor, or before its first reading).
    public var battery: BatteryStatus?

    /// The battery as `status --json` shows it: percent and volts when the monitor measures them,
    /// charging when it can tell, `low` when the low-battery pin is asserted.
    public struct BatteryStatus: Decodable, Equatable, Sendable {
        public var percent: Double?
        public var volts: Double?
        public var charging: Bool?
        public var low: Bool
    }

    /// The volume limits of the config (`volumeMin`, `volumeMax`; the headphones' cap while they are
    /// in): a slider's range. Optional so an older player's status still reads.
    public var volumeMin: Int?
    public var volumeMax: Int?
    /// The sleep timer while one runs (nil: none; optional so an older player's status still reads).
    public var sleep: SleepStatus?
    /// Whether headphones are in the jack (nil: no jack watched, or not read yet).
    public var headphones: Bool?
    /// The playback speed of the current track (1: as recorded); nil with nothing current.
    public var speed: Double?
    /// What the parental rules hold now (nil, and absent from the text: none configured).
    public var parental: ParentalStatus?
    /// The episode being downloaded and how far, as the status line says it
    /// (`downloading "Episode 4" 41%`; nil, and absent from the text: none reported).
    public var download: String?
    /// Whether the configured Bluetooth speaker is connected, as bluez-alsa last said (nil, and
    /// absent from the text: no speaker watched, or not reported yet). `output` says whether it
    /// plays: headphones in the jack win over it.
    public var speakerConnected: Bool?

    /// The parental rules as `status --json` shows them: whether the wall clock is synchronised,
    /// whether it is quiet hours (nil: quiet hours configured, the time not known), the whole
    /// minutes of listening left today, rounded up (nil: no limit), and when the day starts again.
    /// The cap that holds is in `volumeMax`.
    public struct ParentalStatus: Decodable, Equatable, Sendable {
        public var clockSynchronized: Bool
        public var quiet: Bool?
        public var limitLeft: Int?
        public var resetAt: String?
    }

    /// The sleep timer as `status --json` shows it: `minutes`, `track`, `chapter` or `folder`, the
    /// whole seconds left (nil: not known, a track without a length), and the minutes asked for
    /// (`minutes` mode only).
    public struct SleepStatus: Decodable, Equatable, Sendable {
        public var mode: String
        public var left: Int?
        public var minutes: Double?
    }

    /// What `state` shows; `now`: the monotonic clock, which the sleep timer's time left is counted
    /// from (nil: the latest time the core was given).
    init(_ state: State, now: Double? = nil) {
        let track = state.currentTrack
        // A stream shows its station as the artist and what is on air as the title.
        let shown = state.shownCurrentInfo
        phase = state.phase.name
        // What is shown: the escaped bytes of a name that is not UTF-8 as U+FFFD (controls are
        // escaped by the JSON itself).
        func view(_ s: String?) -> String? {
            guard let s, s.unicodeScalars.contains(where: DisplayText.isEscapedByte) else { return s }
            return String(String.UnicodeScalarView(s.unicodeScalars.map { DisplayText.isEscapedByte($0) ? DisplayText.replacement : $0 }))
        }
        title = view(shown?.title)
        artist = view(shown?.artist)
        album = view(track?.info.album)
        path = view(track?.info.path)
        position = track == nil ? nil : state.position
        duration = track?.info.duration
        index = state.cursor.map { $0 + 1 }
        count = state.queue.count
        volume = state.volume
        shuffle = state.shuffle
        self.repeat = state.repeatMode.rawValue
        message = StatusView(state).message
        newCard = state.cards.lastUnknown
        stream = track.map { Library.isStreamURL($0.info.path) } ?? false
        if let info = track?.info, let chapters = info.chapters, let i = info.chapterIndex(at: state.position) {
            chapter = ChapterStatus(index: i + 1, count: chapters.count, title: view(chapters[i].title) ?? "", start: chapters[i].start)
        }
        cardAssign = state.cards.assignNext.map { CardAssignStatus(stage: $0.stage.rawValue, value: $0.value, card: $0.card, error: $0.error) }
        volumeMin = state.settings.volumeMin
        volumeMax = state.volumeMax
        headphones = state.headphonesIn
        output = state.output.rawValue
        speakerConnected = state.bluetoothConnected
        speed = state.cursor.map { state.playSpeed(at: $0) ?? 1 }
        download = state.podcastDownloadShown
        if !state.settings.parental.isEmpty {
            let rules = state.settings.parental
            parental = ParentalStatus(clockSynchronized: state.parental.clockSynchronized, quiet: state.quietNow,
                                      limitLeft: state.listeningLeft.map { Int(($0 / 60).rounded(.up)) },
                                      resetAt: rules.dailyLimit == nil ? nil : LocalTime.text(rules.resetAt))
        }
        setupProblems = state.setupProblems.isEmpty ? nil : state.setupProblems
        battery = state.battery.reading.map { BatteryStatus(percent: $0.percent, volts: $0.volts, charging: $0.charging, low: $0.low) }
        if let timer = state.sleep {
            let left = state.sleepLeft(now: max(now ?? state.now, timer.seenAt))
            var minutes: Double?
            if case .after(let seconds) = timer.request { minutes = seconds / 60 }
            sleep = SleepStatus(mode: timer.request.mode, left: left.map { Int($0.rounded(.up)) }, minutes: minutes)
        }
    }

    /// Decodes `text` (the answer after `ok `); nil when it is not this object.
    public init?(text: some StringProtocol) {
        guard let decoded = try? JSONDecoder().decode(PlayerStatusJSON.self, from: Data(String(text).utf8)) else { return nil }
        self = decoded
    }

    /// The JSON object, one line, fields in declaration order; absent values are `null`.
    public var text: String {
        let q = JSONText.quoted
        func num(_ d: Double?) -> String { d.map { $0.isFinite ? String($0) : "null" } ?? "null" }
        func str(_ s: String?) -> String { s.map(q) ?? "null" }
        var batteryText = "null"
        if let b = battery {
            let charging: String = b.charging.map { String($0) } ?? "null"
            batteryText = "{\"percent\":" + num(b.percent) + ",\"volts\":" + num(b.volts) + ",\"charging\":" + charging + ",\"low\":\(b.low)}"
        }
        let fields: [String] = [
            "\"phase\":" + q(phase), "\"title\":" + str(title), "\"artist\":" + str(artist), "\"album\":" + str(album),
            "\"path\":" + str(path), "\"position\":" + num(position), "\"duration\":" + num(duration),
            "\"index\":" + (index.map { String($0) } ?? "null"), "\"count\":\(count)", "\"volume\":\(volume)",
            "\"shuffle\":\(shuffle)", "\"repeat\":" + q(self.repeat), "\"message\":" + str(message),
            "\"newCard\":" + str(newCard), "\"stream\":\(stream)", "\"output\":" + str(output),
            "\"cardAssign\":" + (cardAssign.map { c in
                "{\"stage\":" + q(c.stage) + ",\"value\":" + q(CardsJSON.view(c.value)) + ",\"card\":" + str(c.card) + ",\"error\":" + str(c.error.map(CardsJSON.view)) + "}"
            } ?? "null"),
            "\"volumeMin\":" + (volumeMin.map { String($0) } ?? "null"), "\"volumeMax\":" + (volumeMax.map { String($0) } ?? "null"),
            "\"chapter\":" + (chapter.map { c in
                "{\"index\":\(c.index),\"count\":\(c.count),\"title\":" + q(c.title) + ",\"start\":" + num(c.start) + "}"
            } ?? "null"),
            "\"battery\":" + batteryText,
            "\"sleep\":" + (sleep.map { s in
                "{\"mode\":" + q(s.mode) + ",\"left\":" + (s.left.map { String($0) } ?? "null") + (s.minutes.map { ",\"minutes\":" + CardsJSON.number($0) } ?? "") + "}"
            } ?? "null"),
            "\"headphones\":" + (headphones.map { String($0) } ?? "null"),
            "\"speed\":" + num(speed),
        ]
        var all = fields
        if let p = parental {
            let quiet: String = p.quiet.map { String($0) } ?? "null"
            let left: String = p.limitLeft.map { String($0) } ?? "null"
            all.append("\"parental\":{\"clockSynchronized\":\(p.clockSynchronized),\"quiet\":" + quiet + ",\"limitLeft\":" + left
                       + ",\"resetAt\":" + str(p.resetAt) + "}")
        }
        if let download { all.append("\"download\":" + q(download)) }
        if let setupProblems { all.append("\"setupProblems\":[" + setupProblems.map(q).joined(separator: ",") + "]") }
        if let speakerConnected { all.append("\"speakerConnected\":\(speakerConnected)") }
        return "{" + all.joined(separator: ",") + "}"
    }
}

// SPDX-License-Identifier: MIT

/// What a card stands for, as the cards map says (`Cards.parseAction` reads one entry).
public enum CardAction: Equatable, Sendable {
    /// A folder, a playlist or a list of files: the shell reads them (`Command.loadCard`) and
    /// they replace the queue and play.
    case play([String])
    /// A command, spelled as on the card map and carried out like the button action it names.
    case command(ButtonAction)
    /// `sleep MINUTES|track|chapter|folder` / `sleep off`: the sleep timer (nil: off), as `Event.sleepTimer`.
    case sleep(SleepRequest?)
    /// `podcast NAME` / `{"podcast": NAME}`: the podcast's next episodes, as `Event.playPodcast`.
    case podcast(String)
}

/// Card id → what the card does. Ids are normalised (`Cards.normalisedID`).
public struct CardMap: Equatable, Sendable {
    /// The entries, by normalised id.
    public var entries: [String: CardAction]
    /// Card id → the speed its tracks play at (`{"play": PATH, "speed": 1.25}` in the map).
    public var speeds: [String: Double]

    /// Creates a map; ids are taken as they are (normalise them first).
    public init(_ entries: [String: CardAction] = [:], speeds: [String: Double] = [:]) {
        self.entries = entries
        self.speeds = speeds
    }
}

/// What a swipe of the card whose tracks are playing does (config `rfid.secondSwipe`).
public enum SecondSwipe: String, Equatable, Sendable, CaseIterable {
    /// Pause when playing, else play.
    case toggle
    /// Start the card's tracks again from the first.
    case restart
    /// Go to the next track.
    case next
    /// Nothing.
    case none
}

/// What taking the playing card off a reader that sees removal does (config `rfid.onRemove`).
public enum OnRemove: String, Equatable, Sendable, CaseIterable {
    /// Pause; putting the same card back resumes.
    case pause
    /// Nothing: the card is a swipe, as on a reader that cannot tell.
    case none
}

/// Card policy (config `rfid`).
public struct CardSettings: Equatable, Sendable {
    /// What a second swipe of the card already playing does.
    public var secondSwipe: SecondSwipe = .toggle
    /// Reads of the same id less than this many seconds after the previous read of it are the
    /// same swipe (readers repeat while a card lies on them).
    public var sameCardDelay: Double = 1
    /// What taking the playing card away does (readers that see it: RC522, PN532).
    public var onRemove: OnRemove = .none

    /// The defaults.
    public init() {}
}

/// The card whose tracks make up (part of) the queue.
public struct ActiveCard: Equatable, Sendable {
    /// Its id.
    public var id: String
    /// The queue entry ids its load gave out; the card stays active while any of them is queued.
    public var tracks: Range<UInt64>

    /// Creates a record.
    public init(id: String, tracks: Range<UInt64>) {
        self.id = id
        self.tracks = tracks
    }
}

/// What the core knows about cards.
public struct CardState: Equatable, Sendable {
    /// The map in force (the shell loads it; a bad file leaves the previous one).
    public var map = CardMap()
    /// The last read: its id and the reader's time of it.
    public var lastRead: (id: String, at: Double)? {
        get { lastReadID.map { ($0, lastReadAt) } }
        set { lastReadID = newValue?.id; lastReadAt = newValue?.at ?? 0 }
    }
    /// See `lastRead`.
    public var lastReadID: String?
    /// See `lastRead`.
    public var lastReadAt: Double = 0
    /// The card whose tracks were loaded last, while they are queued.
    public var active: ActiveCard?
    /// The card whose tracks the shell is reading; a result for any other card is stale.
    public var loading: String?
    /// The card whose removal paused the player (`onRemove: pause`): putting it back resumes.
    public var pausedByRemoval: String?
    /// The last card read that the map does not know (`jukebox ctl card assign` takes it by default).
    public var lastUnknown: String?
    /// `card assign --next`: the assignment waiting for the next card swiped, then how it went
    /// (kept until the next one, or `--cancel`, so a page can show which card got it).
    public var assignNext: NextCardAssignment?

    /// Nothing known.
    public init() {}
}

/// `card assign --next VALUE`: what the next card swiped gets, and how far that went.
public struct NextCardAssignment: Equatable, Sendable {
    /// How far the assignment went.
    public enum Stage: String, Equatable, Sendable {
        /// No card swiped yet (a swipe now is mapped, not played).
        case waiting
        /// A card was swiped; the map is being written.
        case writing
        /// The map on disk has it.
        case done
        /// The map could not be written (`error` says why); the map is as it was.
        case failed
    }
    /// What the card gets: a path or a command, as `Cards.parseAction` accepts it.
    public var value: String
    /// The card swiped (nil while waiting).
    public var card: String?
    public var stage: Stage
    /// Why it failed.
    public var error: String?

    /// Creates a record.
    public init(value: String, card: String? = nil, stage: Stage = .waiting, error: String? = nil) {
        self.value = value
        self.card = card
        self.stage = stage
        self.error = error
    }
}

/// The card vocabulary: ids and the map's entries.
public enum Cards {
    /// Longest id accepted (a 7-byte UID in hex is 14; readers print up to 20 decimal digits).
    public static let maxIDLength = 32

    /// `raw` with everything but ASCII letters and digits dropped and letters upper-cased (a hex
    /// id typed in lower case and the same id on the map in upper case are the same card); nil
    /// when nothing is left or it is longer than `maxIDLength`.
    public static func normalisedID(_ raw: String) -> String? {
        var id = ""
        for scalar in raw.unicodeScalars {
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A: id.unicodeScalars.append(scalar)
            case 0x61...0x7A: id.unicodeScalars.append(Unicode.Scalar(scalar.value - 0x20)!)
            default: continue
            }
            if id.unicodeScalars.count > maxIDLength { return nil }
        }
        return id.isEmpty ? nil : id
    }

    /// The command words of the map and what they do.
    public static let commands: [String: ButtonAction] = [
        "play": .play, "pause": .pause, "toggle": .togglePlay, "stop": .stop, "next": .next,
        "previous": .previous, "prev": .previous, "vol+": .volumeUp, "vol-": .volumeDown,
        "shuffle": .shuffle, "repeat": .cycleRepeat, "seek+": .seekForward, "seek-": .seekBack,
        "poweroff": .power,
    ]

    /// One entry's text: an absolute path (a folder or a playlist, read when the card is swiped),
    /// an `http(s)://` stream URL (a station) or a command word; the error says what is wrong, for the person editing the map.
    public static func parseAction(_ text: String) -> Result<CardAction, CardMapError> {
        let trimmed = text[...].trimmingSpaces()
        if trimmed.hasPrefix("/") || Library.isStreamURL(trimmed) { return .success(.play([trimmed])) }
        let word = trimmed.lowercased()
        if let action = commands[word] { return .success(.command(action)) }
        if word.split(separator: " ").first == "podcast" {
            // The control language's words, the name as written (not lower-cased).
            switch ControlCommand.parse(String(trimmed), seed: 0) {
            case .success(.intent(.playPodcast(let name))): return .success(.podcast(name))
            case .failure(let e): return .failure(CardMapError(e.message))
            default: return .failure(CardMapError("usage: podcast NAME"))
            }
        }
        if word.split(separator: " ").first == "sleep" {
            // The control language's words, so a card and `jukebox ctl` say the same thing.
            switch ControlCommand.parse(word, seed: 0) {
            case .success(.intent(.sleepTimer(let request))): return .success(.sleep(request))
            case .failure(let e): return .failure(CardMapError(e.message))
            default: return .failure(CardMapError(ControlCommand.sleepUsage))
            }
        }
        // The quoted input bounded in bytes: a reply line stays short whatever the input's characters.
        return .failure(CardMapError("\"\(DisplayText.inert(trimmed, maxBytes: 32))\" is neither an absolute path, a stream URL nor a command ("
                                     + commands.keys.sorted().joined(separator: ", ") + ")"))
    }

    /// A list of absolute paths, played in this order.
    public static func parseAction(paths: [String]) -> Result<CardAction, CardMapError> {
        let trimmed = paths.map { $0[...].trimmingSpaces() }
        guard !trimmed.isEmpty else { return .failure(CardMapError("an empty list of paths")) }
        if let bad = trimmed.first(where: { !$0.hasPrefix("/") }) {
            return .failure(CardMapError("\"\(DisplayText.inert(bad, maxBytes: 64))\" is not an absolute path"))
        }
        return .success(.play(trimmed))
    }
}

/// Why a cards map entry was refused.
public struct CardMapError: Error, Equatable, Sendable {
    /// The message.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
}

// SPDX-License-Identifier: MIT

/// The persisted part of the player, as written to the JSON state file.
///
/// Versioned; decoding is lenient: an unknown field (from a newer version) is ignored, and a
/// field with an unexpected value falls back to its default instead of failing the whole file.
public struct Snapshot: Equatable, Sendable, Codable {
    /// The format version this build writes.
    public static let currentVersion = 1

    /// Format version of the file.
    public var version: Int
    /// The queue in queue order.
    public var tracks: [TrackInfo]
    /// Play order as indices into `tracks`; nil means queue order.
    public var order: [Int]?
    /// Index into `tracks` of the current track, if any.
    public var current: Int?
    /// Seconds heard into the current track.
    public var position: Double
    /// Playing, paused or stopped (playing also while waiting for the device); the file's text
    /// is its raw value.
    public var phase: SavedPhase
    /// Whether shuffle is on.
    public var shuffle: Bool
    /// The seed of the current shuffle (so the order can be extended the same way after restart).
    public var shuffleSeed: UInt64
    /// Repeat mode.
    public var repeatMode: RepeatMode
    /// Volume 0–100.
    public var volume: Int
    /// What the queue was loaded from (for its bookmark); nil for a queue built by hand.
    public var source: QueueSource?
    /// The queue's own speed (a card's, or `speed X`; `State.queueSpeed`); nil: the folders'.
    public var speed: Double?
    /// The daily listening limit's count (nil: no limit configured, or an older file).
    public var listening: Listening?
    /// Where the source was when its bookmark was reset, while it has not played on since
    /// (`State.bookmarkReset`; nil: no such reset, or an older file).
    public var bookmarkReset: BookmarkReset?

    /// Creates a snapshot; the defaults describe an empty, stopped player at full volume.
    public init(version: Int = Snapshot.currentVersion, tracks: [TrackInfo] = [], order: [Int]? = nil,
                current: Int? = nil, position: Double = 0, phase: SavedPhase = .stopped, shuffle: Bool = false,
                shuffleSeed: UInt64 = 0, repeatMode: RepeatMode = .off, volume: Int = 100,
                source: QueueSource? = nil, speed: Double? = nil, listening: Listening? = nil,
                bookmarkReset: BookmarkReset? = nil) {
        self.version = version
        self.tracks = tracks
        self.order = order
        self.current = current
        self.position = position
        self.phase = phase
        self.shuffle = shuffle
        self.shuffleSeed = shuffleSeed
        self.repeatMode = repeatMode
        self.volume = volume
        self.source = source
        self.speed = speed
        self.listening = listening
        self.bookmarkReset = bookmarkReset
    }

    enum CodingKeys: String, CodingKey {
        case version, tracks, order, current, position, phase, shuffle, shuffleSeed
        case repeatMode = "repeat"
        case volume, source, speed, listening, bookmarkReset
    }

    /// Decodes leniently; only `version` and `tracks` must be readable (see `SnapshotFile`).
    public init(from decoder: any Decoder) throws {
        self = try SnapshotFile(from: decoder).snapshot
    }

    /// The snapshot with only the entries at the indices for which `keep` is true; order and
    /// current follow. When the current entry goes, the next kept one in play order becomes
    /// current at 0 s.
    public func keepingTracks(at keep: (Int) -> Bool) -> Snapshot {
        var kept: [Int: Int] = [:]  // old index -> new index
        var result = self
        result.tracks = []
        for (i, t) in tracks.enumerated() where keep(i) {
            kept[i] = result.tracks.count
            result.tracks.append(t)
        }
        let oldOrder = order ?? Array(tracks.indices)
        result.order = order.map { $0.compactMap { kept[$0] } }
        if let cur = current, let newCur = kept[cur] {
            result.current = newCur
        } else if let cur = current, let at = oldOrder.firstIndex(of: cur) {
            let after = oldOrder[at...].lazy.compactMap { kept[$0] }.first
            result.current = after ?? oldOrder.lazy.compactMap { kept[$0] }.first
            result.position = 0
        }
        var ignored: [String] = []
        result.normalise(&ignored)
        return result
    }

    // Repairs what a hand-edited or damaged file can hold, so the core never sees an
    // index out of range; says what it repaired in `problems`.
    mutating func normalise(_ problems: inout [String]) {
        // A permutation: as many entries as tracks (duplicates would play a track twice), all distinct, all in range.
        if let o = order, o.count != tracks.count || Set(o).count != tracks.count || o.contains(where: { !tracks.indices.contains($0) }) {
            order = nil
            problems.append("order: not a play order of the \(tracks.count) tracks")
        }
        if let c = current, !tracks.indices.contains(c) {
            current = nil
            problems.append("current: \(c) is not one of the \(tracks.count) tracks")
        }
        if !position.isFinite || position < 0 {
            position = 0
            problems.append("position: not a number of seconds")
        }
        // A length below zero would let a seek clamp the position below zero: unknown instead.
        for i in tracks.indices where tracks[i].duration.map({ !$0.isFinite || $0 < 0 }) == true {
            tracks[i].duration = nil
            problems.append("tracks[\(i)].duration: not a length")
        }
        if let s = source, !Bookmark(paths: s.paths, track: "/", position: 0).isValid {
            source = nil
            problems.append("source: not a list of 1-\(Bookmark.maxPaths) paths")
        }
        if let s = speed, !Speed.range.contains(s) {
            speed = nil
            problems.append("speed: not 0.75 to 2")
        }
        if let r = bookmarkReset, r.track.isEmpty || !r.position.isFinite || r.position < 0 {
            bookmarkReset = nil
            problems.append("bookmarkReset: not a track and a number of seconds")
        }
        if let l = listening, !l.seconds.isFinite || l.seconds < 0 {
            listening = nil
            problems.append("listening: not a number of seconds")
        }
        if !(0...100).contains(volume) {
            volume = min(max(volume, 0), 100)
            problems.append("volume: not 0 to 100")
        }
    }
}

/// A state file as read: the snapshot that can be used and what could not be.
///
/// A field with a wrong type or an out-of-range value falls back to its default, an entry of
/// `tracks` that is not a track is left out, and indexes (`current`, `order`) keep pointing at the
/// same tracks; each such repair is listed in `problems`. Unknown fields are ignored. In a file
/// from a newer version nothing counts as a problem: its values may be new ones.
public struct SnapshotFile: Decodable, Sendable {
    /// Everything valid in the file.
    public var snapshot: Snapshot
    /// What was repaired or left out, one item per field or entry (`"tracks[1]: not a track"`).
    public var problems: [String]

    /// Decodes leniently; only `version` and `tracks` must be readable.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Snapshot.CodingKeys.self)
        var problems: [String] = []
        // Absent or null: the default, silently. Present with a wrong type: the default, noted.
        func field<T: Decodable>(_ key: Snapshot.CodingKeys, _ expected: String) -> T? {
            guard c.contains(key), (try? c.decodeNil(forKey: key)) != true else { return nil }
            if let value = try? c.decode(T.self, forKey: key) { return value }
            problems.append("\(key.stringValue): not \(expected)")
            return nil
        }
        // A text that is no saved phase is stopped, noted (the same words as a wrong type).
        func phase(_ text: String?) -> SavedPhase {
            guard let text else { return .stopped }
            if let phase = SavedPhase(rawValue: text) { return phase }
            problems.append("phase: not playing, paused or stopped")
            return .stopped
        }
        let version = try c.decode(Int.self, forKey: .version)
        let entries = try c.decode([LenientTrack].self, forKey: .tracks).map(\.info)
        for (i, entry) in entries.enumerated() where entry == nil { problems.append("tracks[\(i)]: not a track") }
        var snapshot = Snapshot(
            version: version,
            // A stand-in keeps the indexes of the file until the entries that are not tracks go.
            tracks: entries.map { $0 ?? TrackInfo(path: "/") },
            order: field(.order, "a list of track indexes"),
            current: field(.current, "a track index"),
            position: field(.position, "a number of seconds") ?? 0,
            phase: phase(field(.phase, "playing, paused or stopped")),
            shuffle: field(.shuffle, "true or false") ?? false,
            shuffleSeed: field(.shuffleSeed, "a seed") ?? 0,
            repeatMode: field(.repeatMode, "off, one or all") ?? .off,
            volume: field(.volume, "a volume") ?? 100,
            source: field(.source, "a source"),
            speed: field(.speed, "a speed"),
            listening: field(.listening, "a listening count"),
            bookmarkReset: field(.bookmarkReset, "a track and a number of seconds"))
        snapshot.normalise(&problems)
        if entries.contains(nil) { snapshot = snapshot.keepingTracks { entries[$0] != nil } }
        self.snapshot = snapshot
        self.problems = version > Snapshot.currentVersion ? [] : problems
    }
}

// A track entry that does not decode (say, a path that is not a string) is dropped rather than
// failing the whole queue.
private struct LenientTrack: Decodable {
    var info: TrackInfo?
    init(from decoder: any Decoder) throws {
        info = try? TrackInfo(from: decoder)
    }
}

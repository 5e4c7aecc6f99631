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
    /// "playing", "paused" or "stopped" ("playing" also while waiting for the device).
    public var phase: String
    /// Whether shuffle is on.
    public var shuffle: Bool
    /// The seed of the current shuffle (so the order can be extended the same way after restart).
    public var shuffleSeed: UInt64
    /// Repeat mode.
    public var repeatMode: RepeatMode
    /// Volume 0–100.
    public var volume: Int

    /// Creates a snapshot; the defaults describe an empty, stopped player at full volume.
    public init(version: Int = Snapshot.currentVersion, tracks: [TrackInfo] = [], order: [Int]? = nil,
                current: Int? = nil, position: Double = 0, phase: String = "stopped", shuffle: Bool = false,
                shuffleSeed: UInt64 = 0, repeatMode: RepeatMode = .off, volume: Int = 100) {
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
    }

    enum CodingKeys: String, CodingKey {
        case version, tracks, order, current, position, phase, shuffle, shuffleSeed
        case repeatMode = "repeat"
        case volume
    }

    /// Decodes leniently; only `version` and `tracks` must be readable.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        tracks = try c.decode([LenientTrack].self, forKey: .tracks).compactMap(\.info)
        order = (try? c.decodeIfPresent([Int].self, forKey: .order)) ?? nil
        current = (try? c.decodeIfPresent(Int.self, forKey: .current)) ?? nil
        position = (try? c.decodeIfPresent(Double.self, forKey: .position)) ?? 0
        phase = (try? c.decodeIfPresent(String.self, forKey: .phase)) ?? "stopped"
        shuffle = (try? c.decodeIfPresent(Bool.self, forKey: .shuffle)) ?? false
        shuffleSeed = (try? c.decodeIfPresent(UInt64.self, forKey: .shuffleSeed)) ?? 0
        repeatMode = (try? c.decodeIfPresent(RepeatMode.self, forKey: .repeatMode)) ?? .off
        volume = (try? c.decodeIfPresent(Int.self, forKey: .volume)) ?? 100
        normalise()
    }

    /// The snapshot with only the tracks for which `keep` is true; order and current follow.
    /// When the current track is dropped, the next kept one in play order becomes current at 0 s.
    public func keepingTracks(where keep: (TrackInfo) -> Bool) -> Snapshot {
        var kept: [Int: Int] = [:]  // old index -> new index
        var result = self
        result.tracks = []
        for (i, t) in tracks.enumerated() where keep(t) {
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
        result.normalise()
        return result
    }

    // Repairs what a hand-edited or damaged file can hold, so the core never sees an
    // index out of range.
    mutating func normalise() {
        // A permutation: as many entries as tracks (duplicates would play a track twice), all distinct, all in range.
        if let o = order, o.count != tracks.count || Set(o).count != tracks.count || o.contains(where: { !tracks.indices.contains($0) }) {
            order = nil
        }
        if let c = current, !tracks.indices.contains(c) { current = nil }
        if tracks.isEmpty { current = nil }
        if !position.isFinite || position < 0 { position = 0 }
        // A length below zero would let a seek clamp the position below zero: unknown instead.
        for i in tracks.indices where tracks[i].duration.map({ !$0.isFinite || $0 < 0 }) == true { tracks[i].duration = nil }
        if !["playing", "paused", "stopped"].contains(phase) { phase = "stopped" }
        volume = min(max(volume, 0), 100)
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

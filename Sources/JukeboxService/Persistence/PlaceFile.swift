// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore

/// The place sidecar (`FILE.place`): the part of the state that changes while music plays, small
/// enough (~150 bytes) to write every few seconds, and tied to the queue file it indexes into.
///
/// `{"current":3,"phase":"playing","position":61.5,"queue":"9c1e…","repeat":"off","seq":41,"version":1,"volume":60}`
/// `queue` is `StateStore.hash` of the queue file's bytes, in hex; `current` indexes its `tracks`;
/// `seq` numbers the records of the slotted sidecar (`PlaceSlots`; absent in the first layout,
/// a file of one such line).
struct PlaceFile: Codable, Equatable {
    /// The format version this build writes.
    static let currentVersion = 1

    var version: Int
    var queue: String
    var current: Int?
    var position: Double
    /// The saved phase's text (`SavedPhase.rawValue`): a sidecar with another is damaged (`fits`),
    /// as before the type, not skipped for the other slot.
    var phase: String
    var repeatMode: RepeatMode
    var volume: Int
    /// The record's number in the slotted sidecar (`PlaceSlots`): the higher, the newer.
    var sequence: UInt64?
    /// The daily limit's count (`Snapshot.listening`): it grows while playing, so it is saved
    /// with the place; absent without a limit.
    var listened: Double?
    var listenDay: Int?

    enum CodingKeys: String, CodingKey {
        case version, queue, current, position, phase
        case repeatMode = "repeat"
        case volume
        case sequence = "seq"
        case listened, listenDay
    }

    init(_ snapshot: Snapshot, queueHash: UInt64) {
        version = Self.currentVersion
        queue = Self.hex(queueHash)
        current = snapshot.current
        position = snapshot.position
        phase = snapshot.phase.rawValue
        repeatMode = snapshot.repeatMode
        volume = snapshot.volume
        sequence = nil
        listened = snapshot.listening?.seconds
        listenDay = snapshot.listening?.day
    }

    static func hex(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// One line of JSON, keys sorted (as `JSONEncoder` with `.sortedKeys` wrote it; `decode` reads
    /// both). Written by hand: this runs every few seconds while playing, and `JSONEncoder` would
    /// keep about a megabyte of its code resident for it (issue 13). A position that is not
    /// finite gives the empty line `JSONEncoder` gave, which no reader takes for a place.
    func bytes() -> [UInt8] {
        guard position.isFinite else { return [0x0A] }
        var out = "{"
        if let current { out += "\"current\":\(current)," }
        if let listenDay { out += "\"listenDay\":\(listenDay)," }
        if let listened, listened.isFinite { out += "\"listened\":\(listened)," }
        out += "\"phase\":" + Self.quoted(phase) + ",\"position\":\(position),\"queue\":" + Self.quoted(queue)
            + ",\"repeat\":" + Self.quoted(repeatMode.rawValue) + (sequence.map { ",\"seq\":\($0)" } ?? "")
            + ",\"version\":\(version),\"volume\":\(volume)}\n"
        return Array(out.utf8)
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The sidecar in `bytes` when it is whole; nil when it is not (torn, hand-edited, from
    /// another format). Unknown fields (a newer version's) are ignored.
    static func decode(_ bytes: [UInt8]) -> PlaceFile? {
        guard JSONText.problem(bytes) == nil else { return nil }
        return try? JSONDecoder().decode(PlaceFile.self, from: Data(bytes))
    }

    /// Whether its values can be used with a queue of `tracks` entries (only meaningful for the
    /// queue file it names: another queue may be shorter).
    func fits(tracks: Int) -> Bool {
        (current.map { (0..<tracks).contains($0) } ?? true) && position.isFinite && position >= 0
            && SavedPhase(rawValue: phase) != nil && (0...100).contains(volume)
            && (listened.map { $0.isFinite && $0 >= 0 } ?? true)
    }

    func apply(to snapshot: inout Snapshot) {
        snapshot.current = current
        snapshot.position = position
        snapshot.phase = SavedPhase(rawValue: phase) ?? .stopped
        snapshot.repeatMode = repeatMode
        snapshot.volume = volume
        if let listened { snapshot.listening = Listening(seconds: listened, day: listenDay) }
    }
}

/// What the queue file holds: the snapshot's fields and `writeID`, a random number new with each
/// write, so that no two writes of the queue file have the same bytes (see `StateStore`).
struct QueueFile: Encodable {
    var snapshot: Snapshot
    var writeID: UInt64

    private enum Key: String, CodingKey { case writeID }

    func encode(to encoder: any Encoder) throws {
        try snapshot.encode(to: encoder)
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(writeID, forKey: .writeID)
    }
}

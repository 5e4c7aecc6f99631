// SPDX-License-Identifier: MIT
import JukeboxCore

/// The card reader and the cards map (the config's `"rfid"` object). The reader and the map's
/// file are the shell's; what a swipe does (`secondSwipe`, `sameCardDelay`) goes to the core's
/// `Settings.cards`.
public struct RFIDSettings: Equatable, Sendable {
    /// The kinds of reader.
    public enum Reader: String, Equatable, Sendable {
        /// A USB reader that types the id as a keyboard (evdev).
        case keyboard
    }
    /// The reader's kind.
    public var reader: Reader = .keyboard
    /// The reader's evdev device: a path (`/dev/input/by-id/…-event-kbd`), else a name (or part
    /// of one, any case, as `input` names devices).
    public var device: String?
    /// See `device`.
    public var name: String?
    /// The cards map (JSON); by default `cards.json` beside the configuration file.
    public var cards: String

    /// A keyboard reader with the map at `cards`.
    public init(cards: String) {
        self.cards = cards
    }
}

/// The `"rfid"` object as written; `Config.parse` checks the values.
struct RawRFID: Decodable {
    var reader: String?
    var device: String?
    var name: String?
    var cards: String?
    var secondSwipe: String?
    var sameCardDelay: Double?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey, CaseIterable { case reader, device, name, cards, secondSwipe, sameCardDelay }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            .filter { Keys(rawValue: $0) == nil }.sorted()
        let c = try decoder.container(keyedBy: Keys.self)
        reader = try c.decodeIfPresent(String.self, forKey: .reader)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        cards = try c.decodeIfPresent(String.self, forKey: .cards)
        secondSwipe = try c.decodeIfPresent(String.self, forKey: .secondSwipe)
        sameCardDelay = try c.decodeIfPresent(Double.self, forKey: .sameCardDelay)
    }

    /// The reader's settings and the core's card policy, or the first key that is wrong.
    /// `configPath` places the default map beside the configuration.
    func settings(configPath: String) -> Result<(RFIDSettings, CardSettings), RFIDKeyError> {
        let folder = Paths.directory(configPath)
        var s = RFIDSettings(cards: (folder == "/" ? "" : folder) + "/cards.json")
        var policy = CardSettings()
        if let reader {
            guard let kind = RFIDSettings.Reader(rawValue: reader) else { return .failure(RFIDKeyError(key: "reader")) }
            s.reader = kind
        }
        if let device {
            guard device.hasPrefix("/"), !device.contains("\0") else { return .failure(RFIDKeyError(key: "device")) }
            s.device = device
        }
        if let name {
            guard !name.isEmpty else { return .failure(RFIDKeyError(key: "name")) }
            s.name = name
        }
        guard s.device != nil || s.name != nil else { return .failure(RFIDKeyError(key: "device")) }
        if let cards {
            guard !cards.isEmpty, !cards.hasSuffix("/"), !cards.contains("\0") else { return .failure(RFIDKeyError(key: "cards")) }
            // Relative to the configuration's folder, like the default.
            s.cards = Paths.resolve(cards, against: folder)
        }
        if let secondSwipe {
            guard let mode = SecondSwipe(rawValue: secondSwipe) else { return .failure(RFIDKeyError(key: "secondSwipe")) }
            policy.secondSwipe = mode
        }
        if let sameCardDelay {
            guard sameCardDelay >= 0, sameCardDelay <= 60 else { return .failure(RFIDKeyError(key: "sameCardDelay")) }
            policy.sameCardDelay = sameCardDelay
        }
        return .success((s, policy))
    }

    static func expectation(_ key: String) -> String {
        switch key {
        case "reader": return "must be \"keyboard\" (a USB reader that types the id)"
        case "device": return "must be the reader's evdev path such as \"/dev/input/by-id/usb-…-event-kbd\" (or give \"name\")"
        case "name": return "must be (part of) the reader's device name, as jukebox probe input lists it"
        case "cards": return "must be the path of the cards map file, such as \"/etc/jukebox/cards.json\" (relative: beside the config)"
        case "secondSwipe": return "must be \"toggle\", \"restart\", \"next\" or \"none\""
        case "sameCardDelay": return "must be seconds from 0 to 60"
        default: return "must be an object such as {\"reader\": \"keyboard\", \"name\": \"RFID\"}"
        }
    }
}

/// The `"rfid"` key that is wrong.
struct RFIDKeyError: Error {
    var key: String
}

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
        /// An MFRC522 (RC522 board) on SPI (`device`: its spidev node); sees removal.
        case rc522
        /// A PN532 on I2C (`bus`, `address`); sees removal.
        case pn532
    }
    /// The reader's kind.
    public var reader: Reader = .keyboard
    /// The reader's evdev device: a path (`/dev/input/by-id/…-event-kbd`), else a name (or part
    /// of one, any case, as `input` names devices). For `rc522`: its spidev node
    /// (`/dev/spidev0.0` by default).
    public var device: String?
    /// For `pn532`: the I2C bus (`/dev/i2c-1` by default).
    public var bus: String?
    /// For `pn532`: its 7-bit address (0x24 = 36 by default).
    public var address: UInt8 = 0x24
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
    var onRemove: String?
    var bus: String?
    var address: Int?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey, CaseIterable { case reader, device, name, cards, secondSwipe, sameCardDelay, onRemove, bus, address }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        reader = try c.decodeIfPresent(String.self, forKey: .reader)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        cards = try c.decodeIfPresent(String.self, forKey: .cards)
        secondSwipe = try c.decodeIfPresent(String.self, forKey: .secondSwipe)
        sameCardDelay = try c.decodeIfPresent(Double.self, forKey: .sameCardDelay)
        onRemove = try c.decodeIfPresent(String.self, forKey: .onRemove)
        bus = try c.decodeIfPresent(String.self, forKey: .bus)
        address = try c.decodeIfPresent(Int.self, forKey: .address)
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
        switch s.reader {
        case .keyboard:
            guard s.device != nil || s.name != nil else { return .failure(RFIDKeyError(key: "device")) }
        case .rc522:
            s.device = s.device ?? "/dev/spidev0.0"
        case .pn532:
            break
        }
        if let bus {
            guard bus.hasPrefix("/"), !bus.contains("\0") else { return .failure(RFIDKeyError(key: "bus")) }
            s.bus = bus
        }
        if s.reader == .pn532 { s.bus = s.bus ?? "/dev/i2c-1" }
        if let address {
            guard (0x08...0x77).contains(address) else { return .failure(RFIDKeyError(key: "address")) }
            s.address = UInt8(address)
        }
        if let onRemove {
            guard let mode = OnRemove(rawValue: onRemove) else { return .failure(RFIDKeyError(key: "onRemove")) }
            policy.onRemove = mode
        }
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
        case "reader": return "must be \"keyboard\" (a USB reader that types the id), \"rc522\" (SPI) or \"pn532\" (I2C)"
        case "device": return "must be the reader's evdev path such as \"/dev/input/by-id/usb-…-event-kbd\" (or give \"name\"); for \"rc522\" its spidev node such as \"/dev/spidev0.0\""
        case "name": return "must be (part of) the reader's device name, as jukebox probe input lists it"
        case "cards": return "must be the path of the cards map file, such as \"/etc/jukebox/cards.json\" (relative: beside the config)"
        case "secondSwipe": return "must be \"toggle\", \"restart\", \"next\" or \"none\""
        case "sameCardDelay": return "must be seconds from 0 to 60"
        case "onRemove": return "must be \"pause\" or \"none\""
        case "bus": return "must be the PN532's I2C bus such as \"/dev/i2c-1\""
        case "address": return "must be the PN532's 7-bit I2C address, 8 to 119 (36 = 0x24 by default)"
        default: return "must be an object such as {\"reader\": \"keyboard\", \"name\": \"RFID\"}"
        }
    }
}

/// The `"rfid"` key that is wrong.
struct RFIDKeyError: Error {
    var key: String
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `headphones`: which sound card's jack control to watch, and the rules the core
/// applies (`HeadphoneSettings`). See docs/BOX.md "Headphones".
public struct HeadphoneJackSettings: Equatable, Sendable {
    /// The card whose controls hold the jack: an ALSA control device (`hw:0`, `hw:CARD=Headphones`,
    /// `default`).
    public var card: String
    /// The jack control's name as `amixer -c N controls` lists it (`Headphone Jack`).
    public var control: String
    /// The headphones' own sound device (an ALSA PCM), when they have one: the output follows the
    /// jack. nil: one device for both (the card switches by itself, as most codecs do).
    public var device: String?

    public init(card: String, control: String, device: String? = nil) {
        self.card = card
        self.control = control
        self.device = device
    }
}

struct RawHeadphones: Decodable {
    var card: String?
    var control: String?
    var pauseOnUnplug: Bool?
    var volumeMax: Int?
    var device: String?
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey { case card, control, pauseOnUnplug, volumeMax, device }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        card = try c.decodeIfPresent(String.self, forKey: .card)
        control = try c.decodeIfPresent(String.self, forKey: .control)
        pauseOnUnplug = try c.decodeIfPresent(Bool.self, forKey: .pauseOnUnplug)
        volumeMax = try c.decodeIfPresent(Int.self, forKey: .volumeMax)
        device = try c.decodeIfPresent(String.self, forKey: .device)
    }

    static let expectation = "must be {\"card\": an ALSA card such as \"hw:0\" or \"default\", \"control\": the jack control's name "
        + "(\"Headphone Jack\"), \"pauseOnUnplug\": true or false, \"volumeMax\": 0-100, not below volumeMin, "
        + "\"device\": the headphones' own ALSA PCM such as \"hw:CARD=Headphones\"}"

    /// The jack and the core's rules, or nil when a value is out of its range.
    func settings(volumeMin: Int) -> (HeadphoneJackSettings, HeadphoneSettings)? {
        let card = self.card ?? "default", control = self.control ?? "Headphone Jack"
        func text(_ s: String) -> Bool { !s.isEmpty && s.utf8.count <= 128 && !s.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }
        guard text(card), text(control), device.map(text) ?? true,
              volumeMax.map({ (volumeMin...100).contains($0) }) ?? true else { return nil }
        return (HeadphoneJackSettings(card: card, control: control, device: device),
                HeadphoneSettings(pauseOnUnplug: pauseOnUnplug ?? true, volumeMax: volumeMax, routes: device != nil))
    }
}

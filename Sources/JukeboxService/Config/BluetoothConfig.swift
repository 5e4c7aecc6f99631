// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `bluetooth`: the speaker's address, the ALSA device that plays to it through
/// bluez-alsa, and the rules the core applies (`BluetoothSettings`). See docs/BLUETOOTH.md.
public struct BluetoothSpeakerSettings: Equatable, Sendable {
    /// The speaker's Bluetooth address, upper case (`AA:BB:CC:DD:EE:FF`).
    public var address: String
    /// The ALSA PCM that plays to it (by default bluez-alsa's `bluealsa:DEV=ADDRESS,PROFILE=a2dp`).
    public var device: String

    public init(address: String, device: String? = nil) {
        self.address = address
        self.device = device ?? BluetoothSpeakerSettings.defaultDevice(address)
    }

    /// bluez-alsa's PCM for the speaker's A2DP sink.
    public static func defaultDevice(_ address: String) -> String { "bluealsa:DEV=\(address),PROFILE=a2dp" }

    /// `address` upper-cased when it is six pairs of hex digits joined by `:`; nil otherwise.
    public static func address(_ text: String) -> String? { BluetoothAddress.normalised(text) }
}

struct RawBluetooth: Decodable {
    var speaker: String?
    var device: String?
    var whenGone: String?
    var volumeMax: Int?
    var phone: Bool?
    var adapter: String?
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey { case speaker, device, whenGone, volumeMax, phone, adapter }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        speaker = try c.decodeIfPresent(String.self, forKey: .speaker)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        whenGone = try c.decodeIfPresent(String.self, forKey: .whenGone)
        volumeMax = try c.decodeIfPresent(Int.self, forKey: .volumeMax)
        phone = try c.decodeIfPresent(Bool.self, forKey: .phone)
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
    }

    static let expectation = "must be {\"speaker\": its address such as \"AA:BB:CC:DD:EE:FF\", \"device\": an ALSA PCM "
        + "(default \"bluealsa:DEV=ADDRESS,PROFILE=a2dp\"), \"whenGone\": \"card\" or \"pause\", \"volumeMax\": 0-100, not below volumeMin, \"phone\": true or false "
        + "(whether a phone playing through the box is watched for; with it \"speaker\" may be left out), "
        + "\"adapter\": the address of the box's adapter `bluetooth pair` uses (alone, or with either)}"

    /// The section as read: the speaker (nil: none) with the core's rules for it, and whether a
    /// phone playing through the box is watched for.
    struct Parsed: Equatable {
        var speaker: BluetoothSpeakerSettings?
        var rules: BluetoothSettings?
        var phone: Bool
        /// The box's adapter a pair uses (its address, upper case); nil: BlueZ's default.
        var adapter: String? = nil
    }

    /// The section, or the reason it cannot be (a sentence without the key). A section with
    /// `"phone": true` alone watches for a phone only; the speaker's keys need the speaker.
    func parsed(volumeMin: Int) -> Result<Parsed, Reason> {
        let phone = self.phone ?? false
        var chosen: String?
        if let adapter {
            // An address, not `hciN`: the kernel numbers adapters in the order they appear, which
            // a USB dongle can change from one boot to the next; bluetoothctl's `select` takes it.
            guard let address = BluetoothAddress.normalised(adapter) else {
                return .failure(Reason("\"adapter\" must be the address of one of the box's adapters (`bluetoothctl list`), six pairs of hex digits such as \"00:1A:7D:DA:71:13\", not \""
                                       + DisplayText.inert(adapter, maxBytes: 40) + "\""))
            }
            chosen = address
        }
        if speaker == nil, phone || chosen != nil, device == nil, whenGone == nil, volumeMax == nil {
            return .success(Parsed(speaker: nil, rules: nil, phone: phone, adapter: chosen))
        }
        return settings(volumeMin: volumeMin).map { Parsed(speaker: $0.0, rules: $0.1, phone: phone, adapter: chosen) }
    }

    /// The speaker and the core's rules, or the reason they cannot be (a sentence without the key).
    func settings(volumeMin: Int) -> Result<(BluetoothSpeakerSettings, BluetoothSettings), Reason> {
        guard let speaker else { return .failure(Reason("\"speaker\" is missing; " + Self.expectation)) }
        guard let address = BluetoothSpeakerSettings.address(speaker) else {
            return .failure(Reason("\"speaker\" must be an address of six pairs of hex digits such as \"AA:BB:CC:DD:EE:FF\", not \""
                                   + DisplayText.inert(speaker, maxBytes: 40) + "\""))
        }
        if let device, device.isEmpty || device.utf8.count > 128 || device.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return .failure(Reason("\"device\" must be an ALSA PCM name of 1 to 128 printable bytes"))
        }
        let gone: BluetoothSettings.WhenGone
        if let whenGone {
            guard let g = BluetoothSettings.WhenGone(rawValue: whenGone) else {
                return .failure(Reason("\"whenGone\" must be \"card\" or \"pause\""))
            }
            gone = g
        } else {
            gone = .card
        }
        if let volumeMax, !(volumeMin...100).contains(volumeMax) {
            return .failure(Reason("\"volumeMax\" must be \(volumeMin) to 100 (not below volumeMin)"))
        }
        return .success((BluetoothSpeakerSettings(address: address, device: device), BluetoothSettings(whenGone: gone, volumeMax: volumeMax)))
    }

    /// Why a `bluetooth` section is refused.
    struct Reason: Error, Equatable {
        var text: String
        init(_ text: String) { self.text = text }
    }
}

// SPDX-License-Identifier: MIT

/// Where the sound is heard: the box's own sound card, headphones (in the card's jack, or on a
/// device of their own), or a Bluetooth speaker (`Reduce+Outputs.swift` chooses).
public enum OutputRoute: String, Equatable, Sendable, CaseIterable {
    case card, headphones, bluetooth
}

/// What a Bluetooth speaker does (`bluetooth` in the config). Whether it is connected comes from
/// bluez-alsa as `Event.bluetoothSpeaker`; these are the rules.
public struct BluetoothSettings: Equatable, Sendable {
    /// What happens when the speaker goes while it plays.
    public enum WhenGone: String, Equatable, Sendable, CaseIterable {
        /// Play on through the card, from where the speaker was heard.
        case card
        /// Pause; the speaker's return resumes (unless a person played or paused meanwhile).
        case pause
    }

    public var whenGone: WhenGone
    /// The highest volume while the speaker plays (nil: the same as the card's,
    /// `Settings.volumeMax`). Moving to the speaker turns a louder volume down to it.
    public var volumeMax: Int?

    public init(whenGone: WhenGone = .card, volumeMax: Int? = nil) {
        self.whenGone = whenGone
        self.volumeMax = volumeMax
    }
}

/// A Bluetooth device's address as typed in the config and the control language.
public enum BluetoothAddress {
    /// `text` upper-cased when it is six pairs of hex digits joined by `:`; nil otherwise.
    public static func normalised(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard text.utf8.count == 17, parts.count == 6,
              parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isHexDigit } }) else { return nil }
        return text.uppercased()
    }
}

/// A PIN for `bluetooth pair ADDRESS pin PIN`: what a speaker asking for one (legacy pairing,
/// or a passkey) is answered.
public enum BluetoothPIN {
    /// The most digits: a legacy PIN code is at most 16 bytes (the Core specification's
    /// HCI_PIN_Code_Request_Reply); a passkey is 6 digits, checked where one is asked.
    public static let maxDigits = 16
    /// `text` when it is 1 to `maxDigits` ASCII digits; nil otherwise (a PIN of letters is
    /// possible in the specification, but speakers print digits, and digits cannot smuggle
    /// anything into bluetoothctl's input).
    public static func checked(_ text: String) -> String? {
        guard (1...maxDigits).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return text
    }
}

/// What `bluetooth ACTION ADDRESS` asks of BlueZ (`bluetoothctl`).
public enum BluetoothAction: String, Equatable, Sendable, CaseIterable {
    /// Pair with the device (discovering it first when BlueZ does not know it).
    case pair
    /// Trust it: it may connect by itself.
    case trust
    /// Remove it from BlueZ: pairing and trust undone.
    case forget
    /// End its connection (a phone that may not play through the box: `sources` `forbidden`).
    case disconnect
}

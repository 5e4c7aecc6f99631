// SPDX-License-Identifier: MIT

/// What the player does when another program plays through the box (config `sources`):
/// `resume` gives the device back and plays on where it was when that program stops,
/// `stayPaused` gives it back and stays paused, `forbidden` keeps the device (the source is refused).
public enum SourcePolicy: String, Equatable, Sendable, CaseIterable {
    case resume
    case stayPaused = "stay-paused"
    case forbidden
}

/// The config's `sources`: a policy per source name, and one for every source not named.
public struct SourceSettings: Equatable, Sendable {
    /// Policies by source name (`airplay`, `bluetooth`).
    public var named: [String: SourcePolicy] = [:]
    /// The policy of a source not in `named` (config key `other`).
    public var other: SourcePolicy = .resume

    public init(named: [String: SourcePolicy] = [:], other: SourcePolicy = .resume) {
        self.named = named
        self.other = other
    }

    /// The policy for the source called `name`.
    public func policy(for name: String) -> SourcePolicy { named[name] ?? other }
}

/// Another program that plays through the box (AirPlay through shairport-sync, a phone through
/// bluez-alsa): its name's rules, how it is shown, and the interruption id it holds.
public enum OtherSource {
    /// Longest source name, in bytes.
    public static let maxNameLength = 32
    /// Longest sender's name kept, in bytes of UTF-8 (it comes from the network: bounded and inert).
    public static let maxSenderBytes = 64

    /// Whether `name` can name a source: 1–32 of `a`–`z`, `0`–`9` and `-` (it becomes a config
    /// key and part of an interruption id, so nothing else is let in).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameLength
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// The interruption id a source holds while it plays (`source-airplay`).
    public static func interruptionID(_ name: String) -> String { "source-" + name }

    /// How a person reads the source's name: `AirPlay`, `Bluetooth`, else the name itself.
    public static func label(_ name: String) -> String {
        switch name {
        case "airplay": return "AirPlay"
        case "bluetooth": return "Bluetooth"
        default: return name
        }
    }

    /// What the status and the display say while the source plays: "AirPlay: Anna's phone", or
    /// the label alone without a sender. The sender is made inert and bounded here, once.
    public static func shown(_ name: String, sender: String) -> String {
        let who = inertSender(sender)
        return who.isEmpty ? label(name) : label(name) + ": " + who
    }

    /// A sender's name as kept and shown: spaces trimmed, control characters inert, at most
    /// `maxSenderBytes` (applying it again changes nothing).
    public static func inertSender(_ sender: String) -> String {
        DisplayText.inert(sender[...].trimmingSpaces(), maxBytes: maxSenderBytes)
    }
}

// SPDX-License-Identifier: MIT

/// Whether a phone plays through the box over Bluetooth, from what bluez-alsa's `bluealsa-cli`
/// prints (pure; `BluetoothSpeakerSource` runs the programs). A phone that plays to the box is
/// an A2DP sink PCM of bluez-alsa, `/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source`,
/// whose `Running` property is true while the phone streams (bluez-alsa's transport thread runs:
/// from the phone's AVDTP start to its suspend). `bluealsa-cli monitor --properties=Running`
/// prints `PropertyChanged PATH Running true|false` at each change (bluez-alsa 4.1–4.3,
/// `utils/cli/cmd-monitor.c`), `PCMRemoved PATH` when it goes, `ServiceStopped org.bluealsa`
/// when bluez-alsa does; `bluealsa-cli --verbose list-pcms` prints each PCM's path and, among
/// its properties, `Running: true|false`, so a phone that streamed before the monitor ran is
/// seen. As with `BluealsaPresence`, what the monitor said after the list was asked for wins
/// over the list.
///
/// Reported are the changes only: a stream began (`started`, with the phone's address: the
/// sender's name shown) or every stream ended (`stopped`).
public struct BluealsaPhoneStreams: Equatable, Sendable {
    /// A change of whether any phone streams.
    public enum Change: Equatable, Sendable {
        /// A phone streams now, none did before; the phone's address (`AA:BB:CC:DD:EE:FF`).
        case started(sender: String)
        /// No phone streams any more.
        case stopped
    }

    /// The sink PCMs running now.
    private var running: Set<String> = []
    /// PCMs the monitor reported since the list was asked for.
    private var touched: Set<String> = []
    /// Whether a stream was last reported.
    public private(set) var streaming = false

    public init() {}

    /// The phone's address when `path` is an A2DP sink PCM of bluez-alsa (a phone plays to the
    /// box through it), else nil: `/org/bluealsa/hciN/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source`.
    public static func phone(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 7, parts[0].isEmpty, parts[1] == "org", parts[2] == "bluealsa",
              parts[3].hasPrefix("hci"), (4...8).contains(parts[3].utf8.count),
              parts[3].utf8.dropFirst(3).allSatisfy({ (0x30...0x39).contains($0) }),
              parts[5] == "a2dpsnk", parts[6] == "source", parts[4].hasPrefix("dev_") else { return nil }
        let pairs = parts[4].dropFirst(4).split(separator: "_", omittingEmptySubsequences: false)
        guard pairs.count == 6, pairs.allSatisfy({ $0.utf8.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return pairs.joined(separator: ":").uppercased()
    }

    /// Applies a monitor line: the change, if any, and whether to ask for the list now (the
    /// service runs).
    public mutating func monitor(_ line: String) -> (change: Change?, list: Bool) {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        switch words.first.map(String.init) ?? "" {
        case "PropertyChanged":
            guard words.count == 4, words[2] == "Running", words[3] == "true" || words[3] == "false" else { return (nil, false) }
            let path = String(words[1])
            guard Self.phone(path) != nil else { return (nil, false) }
            if words[3] == "true" { running.insert(path) } else { running.remove(path) }
            touched.insert(path)
        case "PCMRemoved":
            guard words.count == 2, Self.phone(String(words[1])) != nil else { return (nil, false) }
            running.remove(String(words[1]))
            touched.insert(String(words[1]))
        case "ServiceRunning":
            return (nil, words.count == 2)
        case "ServiceStopped":
            // Every PCM goes with the service.
            running.removeAll()
        default:
            return (nil, false)
        }
        return (report(), false)
    }

    /// The list is being asked for: what the monitor says from now on wins over it.
    public mutating func listStarted() { touched.removeAll() }

    /// `bluealsa-cli --verbose list-pcms`'s lines: each PCM's path alone on a line, then its
    /// properties (`Running: true`), a blank line between PCMs. The change, if any.
    public mutating func listed(_ lines: [String]) -> Change? {
        var listed: Set<String> = []
        var current: String?
        for line in lines {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if words.count == 1, words[0].hasPrefix("/") {
                current = String(words[0])
            } else if words.count == 2, words[0] == "Running:", let path = current {
                if words[1] == "true", Self.phone(path) != nil { listed.insert(path) }
                current = nil
            }
        }
        for path in running.subtracting(listed) where !touched.contains(path) { running.remove(path) }
        for path in listed.subtracting(touched) { running.insert(path) }
        return report()
    }

    /// The monitor ended: whatever played is taken as stopped (nothing is known of it any more;
    /// the list after the monitor's return says again what plays).
    public mutating func forget() -> Change? {
        running.removeAll()
        touched.removeAll()
        return report()
    }

    private mutating func report() -> Change? {
        let now = !running.isEmpty
        guard now != streaming else { return nil }
        streaming = now
        // The lowest path: the same phone named whatever the order of the lines.
        return now ? running.min().flatMap(Self.phone).map { .started(sender: $0) } : .stopped
    }
}

// SPDX-License-Identifier: MIT

/// Whether one Bluetooth speaker's A2DP sink is there, from what bluez-alsa's `bluealsa-cli`
/// prints (pure; `BluetoothSpeakerSource` runs the programs). `bluealsa-cli monitor` prints, one
/// a line and flushed at each, `ServiceRunning org.bluealsa` or `ServiceStopped org.bluealsa` at
/// its start and when the service comes or goes, `PCMAdded PATH` and `PCMRemoved PATH` as devices
/// connect and go (and other lines: `RFCOMMAdded`, `PropertyChanged`, which say nothing of it);
/// `bluealsa-cli list-pcms` prints the PCMs there now, one PATH a line. A speaker's playback PCM
/// is `/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink` (we are its A2DP source).
///
/// The list is asked for when the monitor says the service runs; a PCM the monitor reported
/// after the list was asked for is the monitor's to say, so a late list never brings back a
/// speaker that went meanwhile.
public struct BluealsaPresence: Equatable, Sendable {
    /// What one monitor line says.
    public enum Line: Equatable, Sendable {
        case added(String), removed(String), serviceRunning, serviceStopped, other
    }

    /// The longest line read; beyond it a line is cut (and then matches no PCM).
    public static let maxLine = 512

    /// The speaker's part of a PCM path, upper case: `/DEV_AA_BB_CC_DD_EE_FF/A2DPSRC/SINK`.
    private let suffix: String
    /// The speaker's PCMs there now (one per adapter that holds it).
    private var present: Set<String> = []
    /// PCMs the monitor reported since the list was asked for.
    private var touched: Set<String> = []
    /// The state last reported; nil before the first.
    public private(set) var reported: Bool?

    /// Watches the speaker at `address` (`AA:BB:CC:DD:EE:FF`, any case).
    public init(address: String) {
        suffix = "/DEV_" + address.uppercased().split(separator: ":").joined(separator: "_") + "/A2DPSRC/SINK"
    }

    /// One line of `bluealsa-cli monitor`.
    public static func parse(_ line: String) -> Line {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 2 else { return .other }
        let word = String(words[1])
        switch words[0] {
        case "PCMAdded": return .added(word)
        case "PCMRemoved": return .removed(word)
        case "ServiceRunning": return .serviceRunning
        case "ServiceStopped": return .serviceStopped
        default: return .other
        }
    }

    /// Whether `path` is the speaker's playback PCM.
    public func isSpeaker(_ path: String) -> Bool {
        path.hasPrefix("/org/bluealsa/") && path.uppercased().hasSuffix(suffix) && !path.contains("\u{0}")
    }

    /// Applies a monitor line: the connection when it changed (or is first known), and whether
    /// to ask for the list now (the service runs).
    public mutating func monitor(_ line: String) -> (connected: Bool?, list: Bool) {
        switch Self.parse(line) {
        case .added(let path) where isSpeaker(path):
            present.insert(path)
            touched.insert(path)
        case .removed(let path) where isSpeaker(path):
            present.remove(path)
            touched.insert(path)
        case .serviceRunning:
            return (nil, true)
        case .serviceStopped:
            // Every PCM goes with the service.
            present.removeAll()
            return (report(), false)
        default:
            return (nil, false)
        }
        // Before the first list the state is not known as a whole; an added PCM is news all the same.
        return (reported == nil && present.isEmpty ? nil : report(), false)
    }

    /// The speaker's PCM paths there now, sorted (the first is the one its volume is set on).
    public var paths: [String] { present.sorted() }

    /// The list is being asked for: what the monitor says from now on wins over it.
    public mutating func listStarted() { touched.removeAll() }

    /// `list-pcms`'s lines: the connection when it changed (or is first known).
    public mutating func listed(_ lines: [String]) -> Bool? {
        let words = lines.compactMap { line -> String? in
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            return parts.count == 1 ? String(parts[0]) : nil
        }
        let paths = Set(words.filter(isSpeaker))
        for path in present.subtracting(paths) where !touched.contains(path) { present.remove(path) }
        for path in paths.subtracting(touched) { present.insert(path) }
        return report()
    }

    /// The monitor ended: nothing is known until it runs again and lists.
    public mutating func forget() {
        touched.removeAll()
    }

    private mutating func report() -> Bool? {
        let now = !present.isEmpty
        guard now != reported else { return nil }
        reported = now
        return now
    }
}

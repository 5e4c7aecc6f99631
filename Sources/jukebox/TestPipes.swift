// SPDX-License-Identifier: MIT
import Glibc
import JukeboxApp
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// Simulated readers for the tests that drive the binary: with `JUKEBOX_TEST_CARD_PIPE=PATH` each
/// line written to the FIFO at PATH is a card read (`Event.cardRead`, at the monotonic clock), as a
/// keyboard reader's id and Enter would be; with `JUKEBOX_TEST_BATTERY_PIPE=PATH` each line is a
/// battery reading (`Event.battery`: a percentage, and the words `charging`, `discharging`, `low`);
/// with `JUKEBOX_TEST_WALL_CLOCK_PIPE=PATH` each line is the wall clock (`Event.wallClock`: days
/// since 1970, the minute of the day, and `synced` or `unsynced`) in place of the system's; with
/// `JUKEBOX_TEST_BLUETOOTH_PIPE=PATH` each line is one `bluealsa-cli monitor` would print
/// (`PCMAdded /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink`, `PCMRemoved …`,
/// `ServiceStopped org.bluealsa`), read by the same `BluealsaPresence` as the real monitor's,
/// in place of bluealsa-cli.
/// Real readers need `/dev/input` or an I2C chip (the VM has those); these seams let the end-to-end
/// and browser tests swipe, drain a battery and move the clock without one. Not documented for
/// users; nothing opens them without the variables.
enum TestPipes {
    static func sources(log: Log, bluetooth: BluetoothSpeakerSettings?) -> [EventSource] {
        let cards = TestPipe.source("JUKEBOX_TEST_CARD_PIPE", "card reader", log: log) { line in .cardRead(id: line, at: monotonicNow()) }
        let battery = TestPipe.source("JUKEBOX_TEST_BATTERY_PIPE", "battery", log: log, battery)
        let clock = TestPipe.source("JUKEBOX_TEST_WALL_CLOCK_PIPE", "wall clock", log: log, wallClock)
        let speaker: [EventSource] = bluetooth.map { settings in
            let presence = PresenceBox(BluealsaPresence(address: settings.address))
            return TestPipe.source(bluetoothVariable, "bluetooth speaker", log: log) { line in
                presence.value.monitor(line).connected.map { .bluetoothSpeaker(connected: $0) }
            }
        } ?? []
        return cards + battery + clock + speaker
    }

    /// The variable naming the Bluetooth speaker's simulated monitor.
    static let bluetoothVariable = "JUKEBOX_TEST_BLUETOOTH_PIPE"

    /// Whether the Bluetooth speaker comes from the test's pipe (bluealsa-cli is then not run).
    static var drivesBluetooth: Bool { getenv(bluetoothVariable).map { $0.pointee != 0 } ?? false }

    /// Whether the wall clock comes from the test's pipe (the system's is then not read).
    static var drivesWallClock: Bool { getenv("JUKEBOX_TEST_WALL_CLOCK_PIPE").map { $0.pointee != 0 } ?? false }

    /// `20423 1170 synced`: nil for another line.
    static func wallClock(_ line: String) -> Event? {
        let words = line.split(separator: " ")
        guard words.count == 3, let day = Int(words[0]), let minute = Int(words[1]), (0..<1440).contains(minute),
              words[2] == "synced" || words[2] == "unsynced" else { return nil }
        return .wallClock(LocalTime(day: day, minute: minute), synchronized: words[2] == "synced")
    }

    /// `54.5`, `12 charging`, `low`: nil for a line with another word.
    static func battery(_ line: String) -> Event? {
        var reading = BatteryReading()
        for word in line.split(separator: " ") {
            switch word {
            case "charging": reading.charging = true
            case "discharging": reading.charging = false
            case "low": reading.low = true
            default:
                guard let percent = Double(word), percent.isFinite else { return nil }
                reading.percent = percent
            }
        }
        return .battery(reading)
    }
}

/// The simulated monitor's reader, kept between its lines.
final class PresenceBox {
    var value: BluealsaPresence
    init(_ value: BluealsaPresence) { self.value = value }
}

/// One FIFO whose lines become events.
final class TestPipe: EventSource {
    private let fd: Int32
    private let event: (String) -> Event?
    private var buffer: [UInt8] = []

    /// The source when `variable` names a FIFO, else none.
    static func source(_ variable: String, _ what: String, log: Log, _ event: @escaping (String) -> Event?) -> [EventSource] {
        guard let path = getenv(variable).map({ String(cString: $0) }), !path.isEmpty else { return [] }
        // Read-write: the FIFO never reports an end when a writer closes it.
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            if fd >= 0 { close(fd) }
            log.warning("\(variable): \(path) is no FIFO; no simulated \(what)")
            return []
        }
        log.info("\(what): simulated by the FIFO \(path)")
        return [TestPipe(fd: fd, event: event)]
    }

    private init(fd: Int32, event: @escaping (String) -> Event?) {
        self.fd = fd
        self.event = event
    }
    deinit { close(fd) }

    var fds: [Int32] { [fd] }
    var needsMaintenance: Bool { false }
    func maintain() {}

    func read(fd: Int32) -> [Event] {
        var chunk = [UInt8](repeating: 0, count: 512)
        let n = Glibc.read(fd, &chunk, chunk.count)
        guard n > 0 else { return [] }
        buffer += chunk[0..<n]
        var events: [Event] = []
        while let end = buffer.firstIndex(of: 0x0A) {
            let line = String(decoding: buffer[..<end].prefix(128), as: UTF8.self)
            buffer.removeSubrange(...end)
            if let e = event(line) { events.append(e) }
        }
        if buffer.count > 128 { buffer.removeAll() }
        return events
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// Simulated readers for the tests that drive the binary: with `JUKEBOX_TEST_CARD_PIPE=PATH` each
/// line written to the FIFO at PATH is a card read (`Event.cardRead`, at the monotonic clock), as a
/// keyboard reader's id and Enter would be; with `JUKEBOX_TEST_BATTERY_PIPE=PATH` each line is a
/// battery reading (`Event.battery`: a percentage, and the words `charging`, `discharging`, `low`).
/// Real readers need `/dev/input` or an I2C chip (the VM has those); these seams let the end-to-end
/// and browser tests swipe and drain a battery without one. Not documented for users; nothing
/// opens them without the variables.
enum TestPipes {
    static func sources(log: Log) -> [EventSource] {
        TestPipe.source("JUKEBOX_TEST_CARD_PIPE", "card reader", log: log) { line in .cardRead(id: line, at: monotonicNow()) }
            + TestPipe.source("JUKEBOX_TEST_BATTERY_PIPE", "battery", log: log, battery)
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
            let line = String(decoding: buffer[..<end].prefix(64), as: UTF8.self)
            buffer.removeSubrange(...end)
            if let e = event(line) { events.append(e) }
        }
        if buffer.count > 64 { buffer.removeAll() }
        return events
    }
}

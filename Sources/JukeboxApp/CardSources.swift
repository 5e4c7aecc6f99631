// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// A USB card reader that types ids as a keyboard, as an event source: its evdev device (by path
/// or name) is grabbed so the ids reach no console, its keys are assembled into ids by
/// `CardKeys` (key codes, so the layout does not matter), and each id becomes `Event.cardRead`
/// at the kernel's time of its Enter. Unplugged, it is reported and looked for once a second;
/// plugged in again, it is grabbed again. What a card does is the core's.
public final class CardReaderSource: EventSource {
    private let devices: InputDevices
    private let log: Log
    private var keys = CardKeys()
    private var grabProblems: [String] = []

    /// The reader `rfid` names; nothing is opened that does not match.
    public convenience init(_ rfid: RFIDSettings, log: Log) {
        let selector: InputSelector = rfid.device.map(InputSelector.path) ?? .name(rfid.name ?? "")
        self.init(devices: InputDevices([selector], grab: true), log: log)
        if self.devices.opened.isEmpty { log.info("card reader: no \(selector) yet; watching for it") }
    }

    /// Over devices already chosen (tests adopt pipes into them).
    public init(devices: InputDevices, log: Log) {
        self.devices = devices
        self.log = log
        maintain()
    }

    public var fds: [Int32] { devices.fds }

    public func read(fd: Int32) -> [Event] {
        let batch = devices.read()
        var events: [Event] = []
        for key in batch.keys {
            for output in keys.feed(key) {
                switch output {
                case .card(let id, let at): events.append(.cardRead(id: id, at: at))
                case .refused(let why): log.info("card reader: " + why)
                }
            }
        }
        for gone in batch.lost {
            log.info("card reader: \(DisplayText.inert(gone.name)) went away (\(gone.error ?? "closed"))")
            // An id torn by the unplug must not prefix the first one after the replug.
            keys.reset()
        }
        return events
    }

    public func maintain() {
        for added in devices.rescan() { log.info("card reader: \(DisplayText.inert(added.name)) (\(added.path)), grabbed") }
        let problems = devices.grabFailures.map { "card reader: \($0.path): \($0.error ?? "cannot grab it")" }
        if problems != grabProblems { for p in problems { log.warning(p) } }
        grabProblems = problems
    }

    /// While the reader is not open.
    public var needsMaintenance: Bool { !devices.missing.isEmpty }
}

/// A reader that sees cards lying on it (RC522 on SPI, PN532 on I2C), polled on a thread of its
/// own (`jukebox-rfid`, `PollingThread`) at most every `interval` seconds (0.1 s). Placements
/// become `Event.cardRead`, removals `Event.cardRemoved`, at the thread's clock; the chip's
/// problems are logged on the loop (`Log` is its). A chip that fails is started again at every
/// later poll. `close()` stops the thread.
public final class PolledCardSource: EventSource {
    /// The watch, owned by the thread once it runs (the class is not Sendable).
    private final class Owned: @unchecked Sendable {
        let watch: CardWatch
        init(_ watch: CardWatch) { self.watch = watch }
    }

    private let polling: PollingThread<CardWatch.Output>
    private let log: Log
    private let name: String

    /// Starts polling `watch` at once. `name` prefixes log lines ("card reader (rc522 /dev/spidev0.0)").
    public init(_ watch: CardWatch, name: String, log: Log, interval: Double = 0.1,
                clock: @escaping @Sendable () -> Double = monotonicNow) {
        self.log = log
        self.name = name
        let owned = Owned(watch)
        polling = PollingThread(name: "jukebox-rfid", interval: interval, clock: clock) { owned.watch.poll() }
    }

    deinit { close() }

    public var fds: [Int32] { polling.running ? [polling.fd] : [] }

    public func read(fd: Int32) -> [Event] {
        var events: [Event] = []
        for (output, at) in polling.take() {
            switch output {
            case .placed(let id): events.append(.cardRead(id: id, at: at))
            case .removed(let id): events.append(.cardRemoved(id: id, at: at))
            case .problem(let why): log.warning("\(name): \(why)")
            case .recovered(let what): log.info("\(name): \(what)")
            }
        }
        return events
    }

    public func maintain() {}
    public var needsMaintenance: Bool { false }

    /// Stops and joins the polling thread (within one look); safe to call twice.
    public func close() { polling.close() }
}

// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The battery's chip, read on a thread of its own (`jukebox-battery`, `PollingThread`) every
/// `interval` seconds: each reading becomes `Event.battery` (the core decides what it means); a chip
/// that fails is logged once, then again when it answers. `close()` stops the thread.
public final class BatterySource: EventSource {
    /// What one look found.
    enum Look: Sendable {
        case reading(BatteryReading)
        case problem(String)
    }
    /// The chip, owned by the thread once it runs.
    private final class Owned: @unchecked Sendable {
        let chip: BatteryMonitor
        init(_ chip: BatteryMonitor) { self.chip = chip }
    }

    private let polling: PollingThread<Look>
    private let log: Log
    private let name: String
    private var failing: String?

    /// Starts reading `chip` at once. `name` prefixes log lines ("battery (max17048 /dev/i2c-1)").
    public init(_ chip: BatteryMonitor, name: String, log: Log, interval: Double,
                clock: @escaping @Sendable () -> Double = monotonicNow) {
        self.log = log
        self.name = name
        let owned = Owned(chip)
        polling = PollingThread(name: "jukebox-battery", interval: interval, clock: clock) {
            do throws(DeviceError) { return [.reading(try owned.chip.read())] } catch { return [.problem(error.message)] }
        }
    }

    deinit { close() }

    public var fds: [Int32] { polling.running ? [polling.fd] : [] }

    public func read(fd: Int32) -> [Event] {
        var events: [Event] = []
        for (look, _) in polling.take() {
            switch look {
            case .reading(let reading):
                if failing != nil { log.info("\(name): answering again") }
                failing = nil
                events.append(.battery(reading))
            case .problem(let why):
                if failing != why { log.warning("\(name): \(why)") }
                failing = why
            }
        }
        return events
    }

    public func maintain() {}
    public var needsMaintenance: Bool { false }

    /// Stops and joins the reading thread; safe to call twice.
    public func close() { polling.close() }
}

// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The low-battery pin the config's `battery.lowPin` names (a PowerBoost's LBO), as an event
/// source: the line is requested with both edges and polled with the loop's other descriptors; at
/// each edge its level is read from the line (the kernel may drop edges, the level is the fact) and
/// a change becomes `Event.batteryPin` (the core decides what it means). When the line is opened
/// (at start, and again after it went away) its level is reported once, through an eventfd of its
/// own, so a box that boots with an empty battery knows it. A line that cannot be had is logged
/// once and tried again every 5 seconds; no wake-up while nothing changes.
public final class BatteryPinSource: EventSource {
    private let spec: GPIOLineSpec
    private let log: Log
    private let open: (GPIOLineSpec) throws(DeviceError) -> GPIOLines
    private var lines: GPIOLines?
    /// Readable while the opened line's level is still to be reported.
    private var wake: Int32
    /// The last level reported (an edge that changes nothing is not an event).
    private var reported: Bool?
    private var problem: String?
    private var lastAttempt = -1e9

    /// Opens the line at once (or keeps trying). `open` opens a spec's line (tests give fed lines).
    public init(_ spec: GPIOLineSpec, log: Log,
                open: @escaping (GPIOLineSpec) throws(DeviceError) -> GPIOLines = { spec throws(DeviceError) in
                    try GPIOLines.open([spec], consumer: "jukebox-battery")
                }) {
        self.spec = spec
        self.log = log
        self.open = open
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        tryOpen()
    }

    deinit { close() }

    public var fds: [Int32] { (lines?.fds ?? []) + (wake >= 0 ? [wake] : []) }

    public func read(fd: Int32) -> [Event] {
        guard let lines else { return [] }
        do throws(DeviceError) {
            if fd == wake {
                var count: UInt64 = 0
                _ = Glibc.read(wake, &count, 8)
            } else {
                // Drained only to clear the descriptor: the line's level says where it is now.
                _ = try lines.readEdges()
            }
            let low = try lines.level(0)
            guard low != reported else { return [] }
            reported = low
            log.info("battery: low-battery pin \(spec.label) " + (low ? "asserted" : "released"))
            return [.batteryPin(low: low)]
        } catch {
            log.warning("battery: low-battery pin \(spec.label): \(error); trying again")
            lines.close()
            self.lines = nil
            return []
        }
    }

    public func maintain() {
        if lines == nil && monotonicNow() - lastAttempt >= 5 { tryOpen() }
    }

    public var needsMaintenance: Bool { lines == nil }

    private func tryOpen() {
        lastAttempt = monotonicNow()
        do throws(DeviceError) {
            lines = try open(spec)
            problem = nil
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, 8)
        } catch {
            // Said once, not at every look.
            if problem != error.description { log.warning("battery: low-battery pin \(spec.label): \(error)") }
            problem = error.description
        }
    }

    /// Releases the line and closes the eventfd; safe to call twice.
    public func close() {
        lines?.close()
        lines = nil
        if wake >= 0 { _ = Glibc.close(wake) }
        wake = -1
    }
}

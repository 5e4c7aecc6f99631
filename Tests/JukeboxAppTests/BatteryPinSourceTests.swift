// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// The low-battery pin watched by the loop (a line fed through libgpiod's own read path,
/// `GPIOEventFeed`): its level at start and each change reach the core as `Event.batteryPin`, the
/// level read from the line, not from the last edge; asserted, the place is saved and the power
/// command runs (here `true`).
final class BatteryPinSourceTests: XCTestCase {
    private func runtime(_ source: BatteryPinSource, log: Log) -> (Runtime, RecordingStatus) {
        var state = State()
        state.settings.battery = BatterySettings(warnPercent: 15, criticalPercent: 5)
        state.settings.powerCommand = ["true"]
        let status = RecordingStatus()
        let runtime = Runtime(state: state, audio: RecordingAudio(), store: nil, status: status,
                              log: log, sources: [source], clock: ManualClock().read)
        runtime.start(initial: [])
        return (runtime, status)
    }

    func testTheLevelAtStartAndEachChangeReachTheCore() throws {
        // LBO: active low, released (high) at start.
        let spec = GPIOSource.lineSpec("GPIO4", gpio: nil, activeLow: true)
        let feed = try GPIOEventFeed([spec])
        try feed.setLevel(line: 0, high: true)
        let log = Log(level: .info)
        let source = BatteryPinSource(spec, log: log, open: { _ throws(DeviceError) in feed.lines })
        defer { source.close() }
        let (runtime, status) = runtime(source, log: log)
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.battery.reading != nil })
        XCTAssertEqual(runtime.state.battery.pinLow, false)
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac", duration: 60)]))
        XCTAssertEqual(runtime.state.phase, .playing)
        // Pulled low: the box pauses, saves and runs the power command.
        try feed.feed([(line: 0, rising: false, timestampNs: 1_000_000)])
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.battery.pinLow })
        XCTAssertEqual(runtime.state.phase, .paused)
        XCTAssertTrue(runtime.state.battery.poweringOff)
        XCTAssertEqual(status.reports.last, "battery empty: saving and powering off (low-battery pin): running true")
        XCTAssertTrue(log.recent.contains { $0.contains("battery: low-battery pin GPIO4 asserted") }, "\(log.recent)")
        // A burst longer than the kernel's queue that ends released: the level, not the last edge
        // kept, is what counts.
        var burst: [(line: Int, rising: Bool, timestampNs: UInt64)] = []
        for i in 0..<40 { burst.append((line: 0, rising: i % 2 == 0, timestampNs: UInt64(2_000_000 + i * 1000))) }
        burst.append((line: 0, rising: true, timestampNs: 3_000_000))
        try feed.feed(burst, kernelQueue: 16)
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return !runtime.state.battery.pinLow })
        XCTAssertFalse(runtime.state.battery.poweringOff)
        XCTAssertEqual(log.recent.filter { $0.contains("low-battery pin GPIO4") }.count, 3, "\(log.recent)")
    }

    func testALineThatCannotBeHadIsSaidOnceAndNothingIsReported() {
        let log = Log(level: .info)
        var attempts = 0
        let source = BatteryPinSource(GPIOSource.lineSpec("GPIO4", gpio: nil), log: log, open: { _ throws(DeviceError) in
            attempts += 1
            throw DeviceError(kind: .busy, message: "GPIO4 is used by \"other\"")
        })
        defer { source.close() }
        XCTAssertTrue(source.needsMaintenance)
        XCTAssertEqual(source.fds.count, 1)  // the eventfd only, never readable
        source.maintain()
        XCTAssertEqual(attempts, 1, "tried again within 5 s")
        XCTAssertEqual(log.recent.filter { $0.contains("battery: low-battery pin GPIO4: GPIO4 is used by \"other\"") }.count, 1, "\(log.recent)")
    }
}

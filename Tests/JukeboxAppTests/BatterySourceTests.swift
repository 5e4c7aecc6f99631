// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// The battery's chip read on its own thread into the loop (the MAX17048's registers simulated
/// beneath the I2C transport): readings become `Event.battery`; a chip that stops answering is
/// logged once and its readings come back when it answers again.
final class BatterySourceTests: XCTestCase {
    /// The simulator behind a lock: the test changes registers while the thread reads.
    final class Locked: I2CTransport, @unchecked Sendable {
        let sim = RegisterChipSimulator(address: 0x36, registers: [0x02: 0xB400, 0x04: 0x3200, 0x08: 0x0012, 0x16: 0xFFF0])
        let monitor = Monitor()
        /// Register reads that failed (the chip gone).
        var failedReads = 0
        func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
            monitor.lock()
            defer { monitor.unlock() }
            try sim.write(address: address, bytes: bytes)
        }
        func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8] {
            monitor.lock()
            defer { monitor.unlock() }
            return try sim.read(address: address, count: count)
        }
        // One register read at a time: the test's changes never land between its two halves.
        func readRegister16(address: UInt8, register: UInt8) throws(DeviceError) -> UInt16 {
            monitor.lock()
            defer { monitor.unlock() }
            if sim.failure != nil { failedReads += 1 }
            try sim.write(address: address, bytes: [register])
            let bytes = try sim.read(address: address, count: 2)
            return UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        }
        func with(_ body: (RegisterChipSimulator) -> Void) { monitor.withLock { body(sim) } }
    }

    func testReadingsReachTheCoreAndAFailingChipIsLoggedOnce() {
        let i2c = Locked()
        let log = Log(level: .info)
        let source = BatterySource(MAX17048(bus: i2c), name: "battery (max17048 test)", log: log, interval: 0.01)
        defer { source.close() }
        var state = State()
        state.settings.battery = BatterySettings(warnPercent: 15, criticalPercent: 5)
        let runtime = Runtime(state: state, audio: RecordingAudio(), store: nil, status: RecordingStatus(),
                              log: log, sources: [source], clock: ManualClock().read)
        runtime.start(initial: [])
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.battery.reading?.percent == 50 })
        XCTAssertEqual(runtime.state.battery.reading?.charging, false)
        // Down to 12 %: the core warns.
        i2c.with { $0.registers[0x04] = 0x0C00 }
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.message == "battery low: 12 %" })
        // Gone: one log line however many failed reads, then back.
        i2c.with { $0.failure = DeviceError(kind: .noDevice, message: "0x36: nothing acknowledged") }
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return log.recent.contains { $0.contains("battery (max17048 test): 0x36: nothing acknowledged") } })
        // Ten more failed reads: still one line.
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return i2c.monitor.withLock { i2c.failedReads } >= 10 })
        _ = runtime.step(wait: false)
        XCTAssertEqual(log.recent.filter { $0.contains("nothing acknowledged") }.count, 1, "\(log.recent)")
        i2c.with {
            $0.failure = nil
            $0.registers[0x04] = 0x1400
        }
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.battery.reading?.percent == 20 })
        XCTAssertTrue(log.recent.contains { $0.contains("battery (max17048 test): answering again") }, "\(log.recent)")
        source.close()
        XCTAssertEqual(source.fds, [], "closed: the thread is joined")
    }
}

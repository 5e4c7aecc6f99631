// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// A real panel is driven from a thread of its own: the loop hands over frames and never waits on
/// the I2C bus (a full OLED frame is ~92 ms at 100 kHz).
final class PanelSinkTests: XCTestCase {
    /// An HD44780 behind a bus whose writes wait until the test lets them go (a slow or stuck bus).
    final class HeldBus: I2CTransport, @unchecked Sendable {
        let sim = HD44780Simulator()
        private let monitor = Monitor()
        private var held = true
        private(set) var writesStarted = 0

        func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
            monitor.withLock {
                writesStarted += 1
                while held { monitor.wait() }
            }
            // The simulator under the lock too: the test reads its rows from its own thread.
            let result: Result<Void, DeviceError> = monitor.withLock {
                do throws(DeviceError) { try sim.write(address: address, bytes: bytes); return .success(()) } catch { return .failure(error) }
            }
            try result.get()
        }

        /// The simulator's rows, read under the lock its writes take.
        var rows: [String] { monitor.withLock { sim.rows } }

        func release() {
            monitor.withLock {
                held = false
                monitor.broadcast()
            }
        }

        var started: Int { monitor.withLock { writesStarted } }
    }

    func testTheLoopNeverWaitsOnTheBusAndTheNewestFrameIsShown() throws {
        let bus = HeldBus()
        let sink = PanelSink(link: DisplayLink(driver: HD44780(transport: bus)), log: Log(level: .error), threaded: true)
        defer { bus.release(); sink.close() }
        // The loop's side runs on a thread of its own, so that a sink that waits for the bus
        // fails this test instead of hanging it.
        let steps = Shared(0)
        let loop = NativeThread(name: "test-loop") {
            sink.show(DisplayFrame(rows: ["first           ", "                "]))
            steps.withLock { $0 = 1 }
            // As the loop does: ticks until the panel's first write has begun (the init sequence
            // starts with a wait).
            _ = waitFor(5) {
                sink.tick(now: monotonicNow())
                return bus.started >= 1
            }
            // The bus is stuck inside a write: what the loop calls must still return.
            sink.show(DisplayFrame(rows: ["second          ", "                "]))
            sink.tick(now: monotonicNow())
            _ = sink.summary
            _ = sink.nextDeadline
            steps.withLock { $0 = 2 }
        }
        let free = waitFor(5) { steps.withLock { $0 } == 2 }
        XCTAssertTrue(free, "show/tick/summary waited for the bus (step \(steps.withLock { $0 }))")
        XCTAssertGreaterThanOrEqual(bus.started, 1, "the panel thread never wrote")
        XCTAssertNil(sink.nextDeadline, "the loop has no panel deadline to wake for")
        bus.release()
        loop.join()
        // The panel thread finishes the init sequence (its waits are its own) and shows the newest frame.
        XCTAssertTrue(waitFor(5) { bus.rows.first == "second          " }, "shown: \(bus.rows)")
        sink.close()
        let summary = sink.summary
        XCTAssertEqual(summary.state, .connected)
        XCTAssertGreaterThanOrEqual(summary.framesSent, 1)
        XCTAssertEqual(summary.errorCount, 0)
    }

    func testAFailureOnThePanelThreadIsLoggedByTheLoopOnce() throws {
        let sim = HD44780Simulator()
        sim.failure = DeviceError(kind: .noDevice, message: "no device answers at 0x27")
        let lines = Shared<[String]>([])
        let log = Log(level: .warning)
        log.observer = { _, line in lines.withLock { $0.append(line) } }
        let sink = PanelSink(link: DisplayLink(driver: HD44780(transport: sim)), log: log, threaded: true)
        defer { sink.close() }
        sink.show(DisplayFrame(rows: ["a               ", "                "]))
        XCTAssertTrue(waitFor(5) {
            sink.tick(now: monotonicNow())
            return !lines.withLock { $0 }.isEmpty
        }, "no report reached the log")
        XCTAssertEqual(lines.withLock { $0 }, ["display: no device answers at 0x27 (playback goes on; retrying with back-off)"])
        if case .failed = sink.summary.state {} else { XCTFail("\(sink.summary)") }
    }
}

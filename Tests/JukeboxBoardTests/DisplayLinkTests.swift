// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import JukeboxCore
import XCTest

/// The link the runtime drives: throttling, back-off, one report per failure and recovery.
final class DisplayLinkTests: XCTestCase {
    func testAMissingPanelIsReportedOnceRetriedWithBackoffAndRecovers() {
        let sim = SSD1306Simulator()
        sim.failure = DeviceError(kind: .noDevice, message: "/dev/i2c-1: no device answers at 0x3c")
        let link = DisplayLink(driver: SSD1306(transport: sim), minInterval: 0.2)
        let frame = DisplayFrame(rows: ["Hello"])
        XCTAssertEqual(link.show(frame, now: 0), .failed(sim.failure!))
        XCTAssertEqual(link.nextDeadline, 1)
        XCTAssertNil(link.tick(now: 0.5))
        XCTAssertEqual(link.errorCount, 1)
        XCTAssertNil(link.tick(now: 1))
        XCTAssertEqual(link.errorCount, 2)
        XCTAssertEqual(link.nextDeadline, 3)
        XCTAssertNil(link.show(DisplayFrame(rows: ["Hello again"]), now: 2))
        XCTAssertEqual(link.errorCount, 2)
        for now in [3.0, 7, 15, 31, 61] { _ = link.tick(now: now) }
        XCTAssertEqual(link.errorCount, 7)
        XCTAssertEqual(link.nextDeadline, 91) // capped at 30 s
        sim.failure = nil
        XCTAssertEqual(link.tick(now: 91), .recovered)
        XCTAssertEqual(link.state, .connected)
        XCTAssertTrue(sim.displayOn)
        XCTAssertNil(link.tick(now: 95))
    }

    func testFramesFasterThanTheLimitAreDroppedAndTheLatestShown() throws {
        let sim = HD44780Simulator()
        let link = DisplayLink(driver: HD44780(transport: sim), minInterval: 0.1)
        XCTAssertNil(link.show(DisplayFrame(rows: ["0:00"]), now: 0))
        // Initialisation: each wait comes back as the next deadline.
        var now = 0.0
        while let next = link.nextDeadline, sim.rows[0] != "0:00            " {
            now = next
            XCTAssertNil(link.tick(now: now))
        }
        XCTAssertEqual(link.state, .connected)
        XCTAssertEqual(link.framesSent, 1)
        XCTAssertNil(link.show(DisplayFrame(rows: ["0:01"]), now: now + 0.01))
        XCTAssertNil(link.show(DisplayFrame(rows: ["0:02"]), now: now + 0.02))
        XCTAssertNil(link.show(DisplayFrame(rows: ["0:03"]), now: now + 0.03))
        XCTAssertEqual(sim.rows[0], "0:00            ")
        XCTAssertEqual(link.framesDropped, 2)
        XCTAssertEqual(link.nextDeadline!, now + 0.1, accuracy: 1e-9)
        XCTAssertNil(link.tick(now: now + 0.1))
        XCTAssertEqual(sim.rows[0], "0:03            ")
        XCTAssertEqual(link.framesSent, 2)
    }

    func testAnIdleScreenIsStillReinitialisedPeriodically() {
        let sim = HD44780Simulator()
        let lcd = HD44780(transport: sim)
        let link = DisplayLink(driver: lcd)
        _ = link.show(DisplayFrame(rows: ["Idle"]), now: 0)
        var now = 0.0
        while let next = link.nextDeadline, now < 130 {
            now = next
            _ = link.tick(now: now)
        }
        // Two re-inits (60 s, 120 s): each sends the init and a full redraw.
        let inits = sim.writes.filter { $0.count == 2 }.count // the first nibble 3 of each init
        XCTAssertEqual(inits, 3 * 2) // two single-nibble writes per init
        XCTAssertEqual(sim.rows[0], "Idle            ")
    }

    func testI2CBusErrorsNameWhatToDo() {
        XCTAssertThrowsError(try I2CBus(path: "/dev/i2c-97")) { error in
            let error = error as! DeviceError
            XCTAssertEqual(error.kind, .notFound)
            XCTAssertTrue(error.message.contains("/dev/i2c-97"), error.message)
        }
        XCTAssertEqual(I2CErrno.transferError(ENXIO, path: "/dev/i2c-1", address: 0x27).message, "/dev/i2c-1: no device answers at 0x27")
        XCTAssertEqual(I2CErrno.openError(EACCES, path: "/dev/i2c-1").kind, .permissionDenied)
        XCTAssertTrue(I2CErrno.openError(EACCES, path: "/dev/i2c-1").message.contains("group i2c"))
        // Adapters come from sysfs; a fake tree stands in for a board.
        let root = NSTemporaryDirectory() + "i2c-sysfs-" + UUID().uuidString
        for (name, adapter) in [("i2c-1", "bcm2835 (i2c@7e804000)"), ("i2c-20", "fef04500.i2c")] {
            try? FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: root + "/" + name + "/name", contents: Data((adapter + "\n").utf8))
        }
        defer { try? FileManager.default.removeItem(atPath: root) }
        XCTAssertEqual(I2CBus.adapters(sysfs: root), [.init(number: 1, name: "bcm2835 (i2c@7e804000)"), .init(number: 20, name: "fef04500.i2c")])
    }
}

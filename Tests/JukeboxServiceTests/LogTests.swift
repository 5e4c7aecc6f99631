// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
import JukeboxSystem
import XCTest

final class LogTests: XCTestCase {
    static func unstamped(_ line: String) -> String { String(line.drop { $0 != "]" }.dropFirst(2)) }

    func testKeptLinesAreStampedWithTheLocalWallClockTime() {
        let wall = 1_764_564_463.75  // not the monotonic clock, which counts from boot
        let log = Log(level: .info, keep: 10, clock: { 5 }, wallClock: { wall })
        log.info("hello")
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = .current
        format.dateFormat = "yyyy-MM-dd HH:mm:ss"
        XCTAssertEqual(log.recent, ["[\(format.string(from: Date(timeIntervalSince1970: wall)))] info: hello"])
    }

    func testARepeatedErrorIsLoggedOnceWithACount() {
        var now = 100.0
        let log = Log(level: .info, keep: 10) { now }
        for _ in 0..<50 { log.warning("device busy") }
        XCTAssertEqual(log.recent.count, 1)
        log.info("device free")
        XCTAssertEqual(log.recent.map(Self.unstamped), [
            "warning: device busy", "warning: previous message repeated 49 more times", "info: device free",
        ])
        // A message that keeps repeating for minutes is summarised once a minute.
        for _ in 0..<3 { log.warning("device lost"); now += 30 }
        log.warning("device lost")
        XCTAssertTrue(log.recent.last!.hasSuffix("warning: device lost (repeated 2 times in 60 s)"), log.recent.last!)
    }

    func testTheRingKeepsTheLastLinesAndTheLevelFilters() {
        let log = Log(level: .warning, keep: 3) { 0 }
        for i in 0..<5 { log.error("e\(i)") }
        log.info("hidden")
        XCTAssertEqual(log.recent.map(Self.unstamped), ["error: e2", "error: e3", "error: e4"])
    }
}

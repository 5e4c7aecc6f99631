// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The battery's level on the panel (issue 30): its whole percent on the status row, `+` while
/// charging, `low` from the pin alone; when the row is full, a low battery's mark is kept.
final class BatteryDisplayTests: XCTestCase {
    private func state(_ layout: PanelLayout = .lcd16x2, _ reading: BatteryReading? = nil) -> State {
        var settings = Settings()
        settings.battery = BatterySettings(warnPercent: 15, criticalPercent: 5)
        settings.display = layout
        var s = playing(2, settings: settings)
        s.position = 83
        s.battery.reading = reading
        return s
    }

    func testTheLevelOnTheStatusRow() {
        XCTAssertEqual(DisplayFrame.make(state(.lcd16x2, nil), layout: .lcd16x2).rows[1], "▶ 1:23/1:40     ", "no reading yet: no mark")
        XCTAssertEqual(DisplayFrame.make(state(.lcd16x2, BatteryReading(percent: 54.4, charging: false)), layout: .lcd16x2).rows[1], "▶ 1:23/1:40  54%")
        XCTAssertEqual(DisplayFrame.make(state(.lcd16x2, BatteryReading(percent: 54.6, charging: true)), layout: .lcd16x2).rows[1], "▶ 1:23/1:40 +55%")
        XCTAssertEqual(DisplayFrame.make(state(.lcd16x2, BatteryReading(low: true)), layout: .lcd16x2).rows[1], "▶ 1:23/1:40  low")
        XCTAssertEqual(DisplayFrame.make(state(.lcd16x2, BatteryReading(low: false)), layout: .lcd16x2).rows[1], "▶ 1:23/1:40     ", "a pin let go: nothing to say")
        var shuffled = state(.lcd20x4, BatteryReading(percent: 80))
        shuffled.shuffle = true
        XCTAssertEqual(DisplayFrame.make(shuffled, layout: .lcd20x4).rows[3], "▶ 1:23/1:40    80% 🔀")
        XCTAssertEqual(DisplayFrame.make(state(.oled128x64, BatteryReading(percent: 80)), layout: .oled128x64).rows[7], "▶ 1:23/1:40   80% 100")
        // Without a battery in the config, a reading (a test pipe's) shows nothing.
        var none = state(.lcd16x2, BatteryReading(percent: 80))
        none.settings.battery = nil
        XCTAssertNil(none.batteryPanelMark)
    }

    func testWhenTheRowIsFullALowBatteryIsKept() {
        var s = state(.lcd16x2, BatteryReading(percent: 60))
        s.shuffle = true
        s.sleep = SleepTimer(request: .after(1800), endsAt: 1800, seenAt: 60)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40     ", "60% z29🔀 does not fit, not low: dropped")
        s.battery.reading = BatteryReading(percent: 12)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40  12%", "low: kept alone")
        // A track of ten minutes or more leaves no room for it (the warning's message says it).
        s.queue[0].info.duration = 754
        s.position = 683
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 11:23/12:34   ")
    }
}

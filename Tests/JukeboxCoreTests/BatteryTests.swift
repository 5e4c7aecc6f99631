// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The battery (issue 30): one warning at the low level, re-armed only well above it or by
/// charging; at the critical level (or the low pin) the place is saved and the power command
/// runs, once; charging cancels both. Readings are facts; every decision is the core's.
final class BatteryTests: XCTestCase {
    /// Two tracks, the first at 0:30 (its status not rendered yet: the first step renders it).
    private func box(playing: Bool = true, rules: Bool = true) -> CoreHarness {
        var settings = Settings()
        settings.battery = rules ? BatterySettings(warnPercent: 15, criticalPercent: 5) : nil
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.position = 30
        if !playing { state.phase = .paused }
        state.shown = nil
        return CoreHarness(state)
    }

    private let playingShown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30")
    private let empty = "battery empty: saving and powering off"

    func testTheLowWarningComesOnceAndAgainOnlyWellAboveIt() {
        let h = box()
        h.send(.battery(BatteryReading(percent: 40, volts: 3.9, charging: false)), {
            $0.shown = self.playingShown
            $0.battery = BatteryState(reading: BatteryReading(percent: 40, volts: 3.9, charging: false, low: false), warned: false, poweringOff: false)
        }, commands: [.render(playingShown)])
        h.send(.battery(BatteryReading(percent: 15)), {
            $0.message = "battery low: 15 %"
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 15 %")
            $0.battery = BatteryState(reading: BatteryReading(percent: 15), warned: true, poweringOff: false)
        }, commands: [
            .report("battery low: 15 %: charge the box soon"),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 15 %")),
        ])
        // Lower, or wavering up to the margin: no second warning.
        h.send(.battery(BatteryReading(percent: 14)), { $0.battery.reading = BatteryReading(percent: 14) }, commands: [])
        h.send(.battery(BatteryReading(percent: 18)), { $0.battery.reading = BatteryReading(percent: 18) }, commands: [])
        // Above it (15 + 3): re-armed, the message goes.
        h.send(.battery(BatteryReading(percent: 18.5)), {
            $0.message = nil
            $0.shown = self.playingShown
            $0.battery = BatteryState(reading: BatteryReading(percent: 18.5), warned: false, poweringOff: false)
        }, commands: [.render(playingShown)])
        h.send(.battery(BatteryReading(percent: 14)), {
            $0.message = "battery low: 14 %"
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 14 %")
            $0.battery = BatteryState(reading: BatteryReading(percent: 14), warned: true, poweringOff: false)
        }, commands: [
            .report("battery low: 14 %: charge the box soon"),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 14 %")),
        ])
    }

    func testTheCriticalLevelSavesThePlaceAndPowersOffOnce() {
        let h = box()
        h.send(.battery(BatteryReading(percent: 5)), {
            $0.phase = .paused
            $0.message = self.empty
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 30
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: self.empty)
            $0.battery = BatteryState(reading: BatteryReading(percent: 5), warned: true, poweringOff: true)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("battery empty: saving and powering off (5 %): running systemctl poweroff"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused)),
            .runProgram(["systemctl", "poweroff"]),
            .render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: empty)),
        ])
        // The command ran (or failed): it does not run again at every reading.
        h.send(.battery(BatteryReading(percent: 4)), { $0.battery.reading = BatteryReading(percent: 4) }, commands: [])
    }

    func testTheLowPinIsEmptyWhateverThePercentSays() {
        let h = box(playing: false)
        h.send(.battery(BatteryReading(percent: 60, low: true)), {
            $0.message = self.empty
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 30
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: self.empty)
            $0.battery = BatteryState(reading: BatteryReading(percent: 60, low: true), warned: true, poweringOff: true)
        }, commands: [
            .report("battery empty: saving and powering off (low-battery pin): running systemctl poweroff"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused)),
            .runProgram(["systemctl", "poweroff"]),
            .render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: empty)),
        ])
    }

    func testThePinPowersOffAndLettingItGoReArmsIt() {
        let h = box()
        // Read once at start: let go, nothing to do but know it.
        h.send(.batteryPin(low: false), {
            $0.shown = self.playingShown
            $0.battery = BatteryState(reading: BatteryReading(low: false))
        }, commands: [.render(playingShown)])
        let paused = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: empty)
        h.send(.batteryPin(low: true), {
            $0.phase = .paused
            $0.message = self.empty
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 30
            $0.shown = paused
            $0.battery = BatteryState(reading: BatteryReading(low: true), warned: true, poweringOff: true, pinLow: true)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("battery empty: saving and powering off (low-battery pin): running systemctl poweroff"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused)),
            .runProgram(["systemctl", "poweroff"]),
            .render(paused),
        ])
        // A gauge's reading does not undo the pin, nor run the command again.
        h.send(.battery(BatteryReading(percent: 50, charging: false)), {
            $0.battery.reading = BatteryReading(percent: 50, charging: false, low: true)
        }, commands: [])
        // A charger: the PowerBoost lets LBO go. The power-off that did not happen is over (and
        // at 50 % the low warning is re-armed too).
        h.send(.batteryPin(low: false), {
            $0.message = nil
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30")
            $0.battery = BatteryState(reading: BatteryReading(percent: 50, charging: false), warned: false, poweringOff: false)
        }, commands: [.render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:30"))])
        // Low again: the place is saved and the command runs again.
        h.send(.batteryPin(low: true), {
            $0.message = self.empty
            $0.shown = paused
            $0.battery = BatteryState(reading: BatteryReading(percent: 50, charging: false, low: true), warned: true, poweringOff: true, pinLow: true)
        }, commands: [
            .report("battery empty: saving and powering off (low-battery pin): running systemctl poweroff"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused)),
            .runProgram(["systemctl", "poweroff"]),
            .render(paused),
        ])
    }

    func testChargingCancelsTheWarningAndAPowerOffThatDidNotHappen() {
        let h = box()
        h.send(.battery(BatteryReading(percent: 12)), {
            $0.message = "battery low: 12 %"
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 12 %")
            $0.battery = BatteryState(reading: BatteryReading(percent: 12), warned: true, poweringOff: false)
        }, commands: [
            .report("battery low: 12 %: charge the box soon"),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: "battery low: 12 %")),
        ])
        h.send(.battery(BatteryReading(percent: 12, charging: true)), {
            $0.message = nil
            $0.shown = self.playingShown
            $0.battery = BatteryState(reading: BatteryReading(percent: 12, charging: true), warned: false, poweringOff: false)
        }, commands: [.render(playingShown)])
        h.send(.battery(BatteryReading(percent: 3)), {
            $0.phase = .paused
            $0.message = self.empty
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 30
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: self.empty)
            $0.battery = BatteryState(reading: BatteryReading(percent: 3), warned: true, poweringOff: true)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("battery empty: saving and powering off (3 %): running systemctl poweroff"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused)),
            .runProgram(["systemctl", "poweroff"]),
            .render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: empty)),
        ])
        // Plugged in before the power went: the box stays paused (nobody asked it to play), ready.
        h.send(.battery(BatteryReading(percent: 3, charging: true)), {
            $0.message = nil
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30")
            $0.battery = BatteryState(reading: BatteryReading(percent: 3, charging: true), warned: false, poweringOff: false)
        }, commands: [.render(status("paused", song: 1, index: 1, of: 2, elapsed: "0:30"))])
    }

    func testWithoutRulesReadingsAreOnlyKept() {
        let h = box(rules: false)
        h.send(.battery(BatteryReading(percent: 1, low: true)), {
            $0.shown = self.playingShown
            $0.battery.reading = BatteryReading(percent: 1, low: true)
        }, commands: [.render(playingShown)])
    }
}

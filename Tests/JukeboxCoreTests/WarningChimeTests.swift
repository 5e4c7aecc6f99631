// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// A warning's chime (`warningChime`, issue 30): while a track plays, a warning (the battery low,
/// the day's listening nearly over) stops it where it is heard, sounds the chime and goes on from
/// there; a box that is quiet only shows the message; a stop or a new play replaces the chime.
final class WarningChimeTests: XCTestCase {
    private static let chime = "/usr/share/jukebox/warning.wav"
    private let low = "battery low: 12 %"

    /// Two tracks, the first heard at 0:30, a battery rule and the warning chime.
    private func box(playing: Bool = true) -> CoreHarness {
        var settings = Settings()
        settings.battery = BatterySettings(warnPercent: 15, criticalPercent: 5)
        settings.warningChime = WarningChimeTests.chime
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.position = 30
        state.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30")
        if !playing {
            state.phase = .paused
            state.savedMark = mark(revision: 1, current: 1, phase: .paused)
            state.savedPosition = 30
            state.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30")
        }
        return CoreHarness(state)
    }

    /// The battery's warning at 12 % while track 1 plays: the chime as play 3, track 1 to follow at 0:30.
    private func warnWhilePlaying(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", message: low)
        h.send(.battery(BatteryReading(percent: 12)), file: file, line: line, {
            $0.message = self.low
            $0.battery = BatteryState(reading: BatteryReading(percent: 12), warned: true)
            $0.chimePlay = 3
            $0.afterChime = 30
            $0.nextPlayID = 4
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = shown
        }, commands: [
            .report(low + ": charge the box soon"),
            .startTrack(playID: 3, path: WarningChimeTests.chime, at: 0, paused: false),
            .render(shown),
        ])
    }

    func testTheChimeStandsInTheTrackWhichGoesOnWhereItWas() {
        let h = box()
        warnWhilePlaying(h)
        // The chime's own reports are not the track's.
        h.send(.trackStarted(playID: 3), commands: [])
        h.send(.heard(playID: 3, seconds: 0.4), commands: [])
        XCTAssertEqual(h.state.position, 30)
        h.send(.trackFinished(playID: 3, next: nil), {
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.nextPlayID = 6
            $0.loaded = PlayRef(playID: 4, trackID: 1)
            $0.handedNext = PlayRef(playID: 5, trackID: 2)
        }, commands: [
            .startTrack(playID: 4, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 5, path: "/music/2.flac")),
        ])
    }

    func testAQuietBoxOnlyShowsTheMessage() {
        let h = box(playing: false)
        let shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", message: low)
        h.send(.battery(BatteryReading(percent: 12)), {
            $0.message = self.low
            $0.battery = BatteryState(reading: BatteryReading(percent: 12), warned: true)
            $0.shown = shown
        }, commands: [.report(low + ": charge the box soon"), .render(shown)])
    }

    func testAStopDuringTheChimeStopsItAndItsEndStartsNothing() {
        let h = box()
        warnWhilePlaying(h)
        h.send(.stop, {
            $0.phase = .stopped
            $0.position = 0
            $0.message = nil
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .stopped)
            $0.shown = status("stopped", song: 1, index: 1, of: 2)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0)),
            .render(status("stopped", song: 1, index: 1, of: 2)),
        ])
        h.send(.trackFinished(playID: 3, next: nil), commands: [])
        XCTAssertNil(h.state.loaded)
    }

    func testANextDuringTheChimeReplacesIt() {
        let h = box()
        warnWhilePlaying(h)
        h.send(.next, {
            $0.cursor = 1
            $0.position = 0
            $0.message = nil
            $0.chimePlay = nil
            $0.afterChime = nil
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 4, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 2)
        }, commands: [
            .startTrack(playID: 4, path: "/music/2.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 2)),
        ])
        h.send(.trackFinished(playID: 3, next: nil), commands: [])
        XCTAssertEqual(h.state.loaded, PlayRef(playID: 4, trackID: 2))
    }

    func testTheDailyLimitsWarningChimesToo() {
        var settings = Settings()
        settings.parental = ParentalSettings(dailyLimit: 600, warnBefore: 120)
        settings.warningChime = WarningChimeTests.chime
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.parental.clock = LocalTime(day: 100, minute: 600)
        state.parental.clockSynchronized = true
        state.parental.listening = Listening(seconds: 470, day: 100)
        state.parental.countedAt = 1000
        state.now = 1000
        var copy = state
        let commands = reduce(&copy, .tick(now: 1020))
        XCTAssertEqual(copy.chimePlay, 3)
        XCTAssertTrue(commands.contains(.startTrack(playID: 3, path: WarningChimeTests.chime, at: 0, paused: false)), "\(commands)")
        XCTAssertEqual(copy.message, "2 min of listening left today")
    }
}

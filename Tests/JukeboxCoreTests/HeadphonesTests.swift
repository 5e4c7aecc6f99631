// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The headphone jack (issue 30): pulling the headphones out while sound plays pauses it, as a
/// phone does; plugged in, the volume is held to the headphones' cap. The card reports the jack;
/// the rules are the core's.
final class HeadphonesTests: XCTestCase {
    /// Two tracks, the first playing at 0:00 at `volume` (its status rendered).
    private func box(_ rules: HeadphoneSettings? = HeadphoneSettings(volumeMax: 50), volume: Int = 80) -> CoreHarness {
        var settings = Settings()
        settings.headphones = rules
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.volume = volume
        state.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: volume)
        state.shown = status("playing", song: 1, index: 1, of: 2, volume: volume)
        return CoreHarness(state)
    }

    private func pausedByThePull(_ h: CoreHarness, volume: Int, file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("paused", song: 1, index: 1, of: 2, volume: volume)
        h.send(.headphones(plugged: false), file: file, line: line, {
            $0.headphonesIn = false
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, volume: volume)
            $0.shown = shown
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("headphones unplugged: paused"),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused, volume: volume)),
            .render(shown),
        ])
    }

    func testPluggingInTurnsALouderVolumeDownToTheCapAndPullingOutPauses() {
        let h = box()
        h.setVolume(50, playingTrack1Of: 2, by: .headphones(plugged: true), also: { $0.headphonesIn = true })
        XCTAssertEqual(h.state.volumeMax, 50)
        // Up is held at the cap while they are in.
        h.send(.changeVolume(by: 5), commands: [])
        pausedByThePull(h, volume: 50)
        // Out, the speaker's limit is back; the volume stays where the headphones had it.
        XCTAssertEqual(h.state.volumeMax, 100)
        XCTAssertEqual(h.state.volume, 50)
    }

    func testAStartWithoutHeadphonesPlaysOnAndAQuieterVolumeIsKept() {
        let h = box(volume: 30)
        // The first report is no pull: the box started without headphones.
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])
        // In at 30 (under the cap): nothing to turn down.
        h.send(.headphones(plugged: true), { $0.headphonesIn = true }, commands: [])
        // The same state again changes nothing.
        h.send(.headphones(plugged: true), commands: [])
        pausedByThePull(h, volume: 30)
        // A second pull notice while paused: nothing more.
        h.send(.headphones(plugged: false), commands: [])
    }

    func testPausedAPullChangesNothing() {
        let h = box(HeadphoneSettings(), volume: 100)
        h.send(.headphones(plugged: true), { $0.headphonesIn = true }, commands: [])
        h.pauseTrack1(of: 2)
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])

    }

    func testWithoutPauseOnUnplugAPullOnlyLiftsTheCap() {
        let h = box(HeadphoneSettings(pauseOnUnplug: false, volumeMax: 60), volume: 60)
        h.send(.headphones(plugged: true), { $0.headphonesIn = true }, commands: [])
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])
        h.setVolume(90, playingTrack1Of: 2)
    }

    func testWithoutAJackInTheConfigTheStateIsOnlyKept() {
        let h = box(nil)
        h.send(.headphones(plugged: true), { $0.headphonesIn = true }, commands: [])
        XCTAssertEqual(h.state.volumeMax, 100, "no cap without the config's headphones")
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])
    }

    func testTheCapNeverGoesBelowTheLowestVolume() {
        var settings = Settings()
        settings.volumeMin = 20
        settings.headphones = HeadphoneSettings(volumeMax: 10)
        var state = State(settings: settings)
        state.headphonesIn = true
        XCTAssertEqual(state.volumeMax, 20)
        state.settings.volumeMax = 15
        XCTAssertEqual(state.volumeMax, 15, "the config's own limit is never raised")
    }
}

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

/// Headphones with a device of their own (`routes`, issue 30): the output follows the jack; what
/// plays goes on through the new device from where it was heard, a paused play opens it when it
/// resumes, and nothing stays open on the old one.
final class HeadphoneRoutingTests: XCTestCase {
    /// Two tracks, the first heard at 0:30 at volume 40 (under every cap).
    private func box(pauseOnUnplug: Bool = true) -> CoreHarness {
        var settings = Settings()
        settings.headphones = HeadphoneSettings(pauseOnUnplug: pauseOnUnplug, routes: true)
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.volume = 40
        state.position = 30
        state.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 40)
        state.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", volume: 40)
        return CoreHarness(state)
    }

    /// Plugged in while track 1 plays: routed, the old device let go, track 1 again at 0:30.
    private func plugWhilePlaying(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.headphones(plugged: true), file: file, line: line, {
            $0.headphonesIn = true
            $0.routedDevice = .headphones
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
        }, commands: [
            .stopOutput,
            .routeOutput(.headphones),
            .startTrack(playID: 3, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
        ])
    }

    func testPlayingFollowsTheJackFromWhereItWasHeard() {
        let h = box(pauseOnUnplug: false)
        plugWhilePlaying(h)
        // Out, with no pause asked: back to the speaker, on from where it was.
        h.send(.heard(playID: 3, seconds: 42), { $0.position = 42; $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:42", volume: 40) },
               commands: [.render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:42", volume: 40))])
        h.send(.headphones(plugged: false), {
            $0.headphonesIn = false
            $0.routedDevice = .card
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.nextPlayID = 7
        }, commands: [
            .stopOutput,
            .routeOutput(.card),
            .startTrack(playID: 5, path: "/music/1.flac", at: 42, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
        ])
    }

    func testAPullPausesLetsTheHeadphonesDeviceGoAndResumeOpensTheSpeaker() {
        let h = box()
        plugWhilePlaying(h)
        let shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:30", volume: 40)
        h.send(.headphones(plugged: false), {
            $0.headphonesIn = false
            $0.routedDevice = .card
            $0.phase = .paused
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, volume: 40)
            $0.savedPosition = 30
            $0.shown = shown
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("headphones unplugged: paused"),
            .stopOutput,
            .routeOutput(.card),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .paused, volume: 40)),
            .render(shown),
        ])
        h.send(.play, {
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.nextPlayID = 7
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 40)
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", volume: 40)
        }, commands: [
            .startTrack(playID: 5, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing, volume: 40)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", volume: 40)),
        ])
    }

    func testTheFirstReportRoutesAndAStoppedBoxOnlyRoutes() {
        var settings = Settings()
        settings.headphones = HeadphoneSettings(routes: true)
        var state = State(settings: settings)
        state.shown = status("stopped")
        let h = CoreHarness(state)
        h.send(.headphones(plugged: true), { $0.headphonesIn = true; $0.routedDevice = .headphones }, commands: [.routeOutput(.headphones)])
        h.send(.headphones(plugged: false), { $0.headphonesIn = false; $0.routedDevice = .card }, commands: [.routeOutput(.card)])
    }

    func testWithoutADeviceOfTheirOwnNothingIsRouted() {
        var settings = Settings()
        settings.headphones = HeadphoneSettings()
        var state = State(settings: settings)
        state.shown = status("stopped")
        let h = CoreHarness(state)
        h.send(.headphones(plugged: true), { $0.headphonesIn = true }, commands: [])
    }
}

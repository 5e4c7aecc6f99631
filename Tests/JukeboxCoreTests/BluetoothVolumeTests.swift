// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The speaker's own volume (issue 31): once its PCM's soft volume is off, the player's volume
/// is sent to the speaker (capped by its `volumeMax`) and the samples pass untouched; the
/// speaker's keys set the player's volume; what the player sent, coming back, changes nothing;
/// back on the card the samples are scaled again; a speaker whose soft volume cannot be turned
/// off keeps the samples scaled and says so once.
final class BluetoothVolumeTests: XCTestCase {
    private func box(_ rules: BluetoothSettings = BluetoothSettings(), headphones: HeadphoneSettings? = nil) -> CoreHarness {
        speakerBox(rules, volume: 40, headphones: headphones)
    }

    private func shown(_ volume: Int, on output: String? = "Bluetooth") -> StatusView {
        status("playing", song: 1, index: 1, of: 2, elapsed: "0:30", volume: volume, output: output)
    }

    /// Connected at volume 40: the play moves, and the speaker's PCM is asked to carry 40 (51/127).
    private func connect(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.bluetoothSpeaker(connected: true), file: file, line: line, {
            $0.bluetoothConnected = true
            $0.routedDevice = .bluetooth
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.nextPlayID = 5
            $0.bluetoothVolume.level = 51
            $0.bluetoothVolume.inFlight = [51]
            $0.shown = shown(40)
        }, commands: [
            .takeBluetoothVolume(level: 51),
            .stopOutput,
            .routeOutput(.bluetooth),
            .startTrack(playID: 3, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .render(shown(40)),
        ])
    }

    /// Connected and answered: the speaker carries the volume, the samples go to 100.
    private func carrying(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        connect(h, file: file, line: line)
        h.send(.bluetoothVolumeControl(taken: true, reason: ""), file: file, line: line, {
            $0.bluetoothVolume.taken = true
            $0.bluetoothVolume.carries = true
        }, commands: [.setVolume(100)])
    }

    func testThePlayersVolumeGoesToTheSpeakerAndItsKeysComeBack() {
        let h = box()
        carrying(h)
        // The player's volume: to the speaker, the samples untouched.
        h.send(.setVolume(60), {
            $0.volume = 60
            $0.bluetoothVolume.level = 76
            $0.bluetoothVolume.inFlight = [51, 76]
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 60)
            $0.savedPosition = 30
            $0.shown = shown(60)
        }, commands: [
            .setBluetoothVolume(level: 76),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing, volume: 60)),
            .render(shown(60)),
        ])
        // Its echo changes nothing (and the older one, late, neither).
        h.send(.bluetoothVolume(level: 76, muted: false), { $0.bluetoothVolume.inFlight = [] }, commands: [])
        h.send(.bluetoothVolume(level: 76, muted: false), commands: [])
        // The speaker's keys: 38/127 is 30 %, shown and saved, nothing sent back.
        h.send(.bluetoothVolume(level: 38, muted: false), {
            $0.volume = 30
            $0.bluetoothVolume.level = 38
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
            $0.shown = shown(30)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing, volume: 30)),
            .render(shown(30)),
        ])
        XCTAssertEqual(StatusView(h.state).volume, 30)
    }

    /// A knob turned quickly: three levels sent, their echoes arriving after the last one went
    /// never pull the volume back.
    func testLateEchoesOfAKnobTurnedQuicklyChangeNothing() {
        let h = box()
        carrying(h)
        var s = h.state
        var sent: [Command] = []
        for v in [50, 52, 54] { sent += reduce(&s, .setVolume(v)).filter { if case .setBluetoothVolume = $0 { true } else { false } } }
        XCTAssertEqual(sent, [.setBluetoothVolume(level: 64), .setBluetoothVolume(level: 66), .setBluetoothVolume(level: 69)])
        let h2 = CoreHarness(s)
        h2.send(.bluetoothVolume(level: 64, muted: false), { $0.bluetoothVolume.inFlight = [66, 69] }, commands: [])
        h2.send(.bluetoothVolume(level: 66, muted: false), { $0.bluetoothVolume.inFlight = [69] }, commands: [])
        h2.send(.bluetoothVolume(level: 69, muted: false), { $0.bluetoothVolume.inFlight = [] }, commands: [])
        XCTAssertEqual(h2.state.volume, 54)
    }

    /// The speaker's keys above its cap: the player's volume stops at the cap and the speaker is
    /// set back to it (its level is the only one heard); that echo changes nothing.
    func testTheSpeakersKeysAboveItsCapAreSetBack() {
        let h = box(BluetoothSettings(volumeMax: 50))
        carrying(h)
        h.send(.bluetoothVolume(level: 127, muted: false), {
            $0.volume = 50
            $0.bluetoothVolume.level = 64
            $0.bluetoothVolume.inFlight = [51, 64]
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 50)
            $0.savedPosition = 30
            $0.shown = shown(50)
        }, commands: [
            .setBluetoothVolume(level: 64),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing, volume: 50)),
            .render(shown(50)),
        ])
        h.send(.bluetoothVolume(level: 64, muted: false), { $0.bluetoothVolume.inFlight = [] }, commands: [])
    }

    /// Back on the card the samples are scaled again, before the play starts there; the
    /// speaker's return asks again.
    func testBackOnTheCardTheSamplesAreScaledAgain() {
        let h = box()
        carrying(h)
        h.send(.bluetoothSpeaker(connected: false), {
            $0.bluetoothConnected = false
            $0.routedDevice = .card
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.nextPlayID = 7
            $0.bluetoothVolume = BluetoothVolumeLink()
            $0.shown = shown(40, on: nil)
        }, commands: [
            .stopOutput,
            .routeOutput(.card),
            .setVolume(40),
            .startTrack(playID: 5, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .render(shown(40, on: nil)),
        ])
        // A late answer for the speaker that went is nobody's.
        h.send(.bluetoothVolumeControl(taken: true, reason: ""), commands: [])
        h.send(.bluetoothVolume(level: 10, muted: false), commands: [])
    }

    /// Headphones plugged while the speaker carries the volume: the samples carry it again; out,
    /// the speaker carries it again (the level it has is the player's).
    func testHeadphonesTakeTheVolumeBackToTheSamples() {
        let h = box(headphones: HeadphoneSettings(pauseOnUnplug: false))
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])
        carrying(h)
        h.send(.headphones(plugged: true), {
            $0.headphonesIn = true
            $0.routedDevice = .card
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.nextPlayID = 7
            $0.bluetoothVolume.carries = false
            $0.shown = shown(40, on: nil)
        }, commands: [
            .stopOutput,
            .routeOutput(.card),
            .setVolume(40),
            .startTrack(playID: 5, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .render(shown(40, on: nil)),
        ])
        // The speaker's keys while headphones play change nothing heard.
        h.send(.bluetoothVolume(level: 100, muted: false), { $0.bluetoothVolume.level = 100 }, commands: [])
        h.send(.headphones(plugged: false), {
            $0.headphonesIn = false
            $0.routedDevice = .bluetooth
            $0.loaded = PlayRef(playID: 7, trackID: 1)
            $0.handedNext = PlayRef(playID: 8, trackID: 2)
            $0.nextPlayID = 9
            $0.bluetoothVolume.carries = true
            $0.bluetoothVolume.level = 51
            $0.bluetoothVolume.inFlight = [51, 51]
            $0.shown = shown(40)
        }, commands: [
            .stopOutput,
            .routeOutput(.bluetooth),
            .setBluetoothVolume(level: 51),
            .setVolume(100),
            .startTrack(playID: 7, path: "/music/1.flac", at: 30, paused: false, next: NextPlay(playID: 8, path: "/music/2.flac")),
            .render(shown(40)),
        ])
    }

    /// Old bluez-alsa (no soft-volume switch): the samples stay scaled, said once a run.
    func testASpeakerWhoseSoftVolumeStaysOnKeepsTheSamplesScaledAndSaysSoOnce() {
        let h = box()
        connect(h)
        let said = "bluetooth: the speaker's own volume is not used (Invalid command: soft-volume); the samples are scaled instead"
        h.send(.bluetoothVolumeControl(taken: false, reason: "Invalid command: soft-volume"), {
            $0.bluetoothVolume.taken = false
            $0.bluetoothVolume.refusalSaid = true
        }, commands: [.report(said)])
        h.send(.setVolume(60), {
            $0.volume = 60
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 60)
            $0.savedPosition = 30
            $0.shown = shown(60)
        }, commands: [
            .setVolume(60),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 30, phase: .playing, volume: 60)),
            .render(shown(60)),
        ])
        // Reports of a PCM that does not carry the volume are not the speaker's keys.
        h.send(.bluetoothVolume(level: 10, muted: false), commands: [])
        var s = h.state
        _ = reduce(&s, .bluetoothSpeaker(connected: false))
        _ = reduce(&s, .bluetoothSpeaker(connected: true))
        XCTAssertEqual(reduce(&s, .bluetoothVolumeControl(taken: false, reason: "again")), [], "said once a run")
        XCTAssertEqual(reduce(&s, .setVolume(50)).first, .setVolume(50))
    }

    /// bluez-alsa's mute switch (set on the box; AVRCP has no mute) is said, never a volume.
    func testAMuteIsSaidAndNotAVolume() {
        let h = box()
        carrying(h)
        h.send(.bluetoothVolume(level: 51, muted: true), {
            $0.bluetoothVolume.muted = true
            $0.bluetoothVolume.inFlight = []
        }, commands: [.report("bluetooth speaker muted (bluez-alsa's mute switch)")])
        h.send(.bluetoothVolume(level: 51, muted: false), { $0.bluetoothVolume.muted = false }, commands: [.report("bluetooth speaker unmuted")])
        XCTAssertEqual(h.state.volume, 40)
    }

    /// Levels and percentages: the ends meet, and every percentage survives the round trip.
    func testLevelsAndPercentages() {
        XCTAssertEqual(BluetoothVolumeLink.level(percent: 0), 0)
        XCTAssertEqual(BluetoothVolumeLink.level(percent: 100), 127)
        XCTAssertEqual(BluetoothVolumeLink.level(percent: 500), 127)
        XCTAssertEqual(BluetoothVolumeLink.percent(level: 127), 100)
        XCTAssertEqual(BluetoothVolumeLink.percent(level: -3), 0)
        for p in 0...100 { XCTAssertEqual(BluetoothVolumeLink.percent(level: BluetoothVolumeLink.level(percent: p)), p, "\(p)") }
        var link = BluetoothVolumeLink()
        for l in 0..<40 { link.send(l) }
        XCTAssertEqual(link.inFlight.count, BluetoothVolumeLink.maxInFlight, "bounded")
    }
}

// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import Foundation
import JukeboxTestSupport
import XCTest

/// ReplayGain: which gain a play gets (track, album, auto, off), the preamps and the peak limit,
/// carried by `startTrack` and `setNext` (nil: samples untouched), and the tags kept in the state file.
final class LoudnessTests: XCTestCase {
    // Linear factors as literals (10^(dB/20)); `testLinearMatchesLibm` holds the core's to libm's.
    private let minus8 = 0.3981071705534972
    private let minus6 = 0.5011872336272722
    private let minus3 = 0.707945784384138
    private let plus4 = 1.5848931924611134

    /// Tracks 1 and 2 of album "A" (track gains -6 and +4 dB, peaks 0.3 and 0.8; album -8 dB,
    /// peak 0.9), track 3 of album "B" with only a track gain of -3 dB, track 4 untagged.
    private func tagged() -> [TrackInfo] {
        var infos = infos(4)
        infos[0].album = "A"
        infos[0].loudness = Loudness(trackGain: -6, trackPeak: 0.3, albumGain: -8, albumPeak: 0.9)
        infos[1].album = "A"
        infos[1].loudness = Loudness(trackGain: 4, trackPeak: 0.8, albumGain: -8, albumPeak: 0.9)
        infos[2].album = "B"
        infos[2].loudness = Loudness(trackGain: -3)
        return infos
    }

    private func queue(_ rules: LoudnessSettings) -> State {
        var settings = Settings()
        settings.loudness = rules
        // The tags alone: measuring untagged files is `LoudnessScanTests`'.
        settings.loudness.scan = false
        var s = queued(4, settings: settings)
        for (i, info) in tagged().enumerated() { s.queue[i].info = info }
        return s
    }

    /// `play` on `queue(rules)`: track 1 starts at `gain` with track 2 handed at `nextGain`.
    private func play(_ h: CoreHarness, gain: Double?, nextGain: Double?, file: StaticString = #filePath, line: UInt = #line) {
        h.playFromStopped(4, tracks: tagged(), gain: gain, nextGain: nextGain, file: file, line: line)
    }

    /// Track 2 ends into its handed successor (play 2): track 3 is handed at `nextGain`.
    private func track2Continues(_ h: CoreHarness, nextGain: Double?, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.trackFinished(playID: 1, next: 2), file: file, line: line, {
            $0.cursor = 1
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = PlayRef(playID: 3, trackID: 3)
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 4)
        }, commands: [
            .setNext(playID: 3, path: "/music/3.flac", gain: nextGain),
            .persistPlace(Snapshot(tracks: tagged(), current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 4)),
        ])
    }

    func testOffSendsNoGainWhateverTheTags() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .off, preamp: 6, untaggedPreamp: -6)))
        play(h, gain: nil, nextGain: nil)
        track2Continues(h, nextGain: nil)
    }

    func testTrackModeUsesTrackGainsHeldUnderThePeak() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track)))
        // Track 2: +4 dB would take its 0.8 peak past full scale: held at 1 / 0.8.
        play(h, gain: minus6, nextGain: 1.25)
        track2Continues(h, nextGain: minus3)
    }

    func testAlbumModeUsesTheAlbumGainAndTheTrackGainWithoutOne() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .album)))
        play(h, gain: minus8, nextGain: minus8)
        track2Continues(h, nextGain: minus3)
    }

    func testPreampsAddAndClippingPreventionCanBeTurnedOff() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track, preamp: -2, untaggedPreamp: -6, preventClipping: false)))
        // -6 - 2 = -8 dB; track 2 at +4 - 2 = +2 dB, unclipped (0.8 × 1.26 > 1).
        play(h, gain: minus8, nextGain: 1.2589254117941673)
        XCTAssertEqual(h.state.playGain(at: 3), minus6, "the untagged track 4 gets the untagged preamp only")
        XCTAssertEqual(h.state.playGain(at: 2), 0.5623413251903491, "track 3: -3 - 2 dB")
    }

    func testAutoTakesTheAlbumGainInOrderAndTheTrackGainShuffledOrAlone() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .auto)))
        play(h, gain: minus8, nextGain: minus8)
        // Track 3 is alone on its album between A and an untagged file: its track gain.
        track2Continues(h, nextGain: minus3)
        var shuffled = queue(LoudnessSettings(mode: .auto))
        shuffled.shuffle = true
        XCTAssertEqual(shuffled.playGain(at: 0), minus6)
        XCTAssertEqual(shuffled.playGain(at: 1), 1.25)
    }

    func testAGainOfExactlyOneIsNoGain() {
        var s = queue(LoudnessSettings(mode: .track))
        s.queue[0].info.loudness = Loudness(trackGain: 0)
        s.queue[1].info.loudness = Loudness(trackGain: 6, trackPeak: 1)
        XCTAssertNil(s.playGain(at: 0))
        XCTAssertNil(s.playGain(at: 1), "held to 1 by a full-scale peak")
        XCTAssertNil(s.playGain(at: 3), "untagged with no untagged preamp")
        XCTAssertNil(s.playGain(at: 9), "out of the queue")
    }

    func testLinearMatchesLibm() {
        var db = -60.0
        while db <= 30 {
            let expected = pow(10, db / 20)
            XCTAssertEqual(Loudness.linear(decibels: db), expected, accuracy: expected * 1e-14, "\(db) dB")
            db += 0.37
        }
        XCTAssertEqual(Loudness.linear(decibels: 0), 1)
    }

    func testTagsAreKeptInTheStateFileAndLeftOutWithoutThem() throws {
        let tagged = tagged()
        let data = try JSONEncoder().encode(tagged)
        XCTAssertEqual(try JSONDecoder().decode([TrackInfo].self, from: data), tagged)
        let plain = String(decoding: try JSONEncoder().encode(info(1)), as: UTF8.self)
        XCTAssertFalse(plain.contains("loudness"), plain)
        let old = #"{"path":"/music/1.flac","title":"Song 1","artist":"Band","duration":100}"#
        XCTAssertEqual(try JSONDecoder().decode(TrackInfo.self, from: Data(old.utf8)), info(1))
    }
}

// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Untagged files measured by the shell: when the core asks (`measureLoudness`: the current
/// track and the next four, or the first five while there is none, without gain tags, a mode
/// on, `scan` on, never a stream, once per file), and what an answer changes (the successor handed again with its gain, the
/// track playing kept as it started, the next start of it with the gain).
final class LoudnessScanTests: XCTestCase {
    private let minus6 = 0.5011872336272722
    private let minus8 = 0.3981071705534972

    private func queue(_ rules: LoudnessSettings, _ n: Int = 3) -> State {
        var settings = Settings()
        settings.loudness = rules
        return queued(n, settings: settings)
    }

    /// `play` on three untagged tracks: track 1 starts with the untagged preamp, track 2 handed
    /// with it, and all three are asked for.
    private func playAsking(_ h: CoreHarness, gain: Double? = nil) {
        h.send(.play, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.loudnessScans.pending = ["/music/1.flac", "/music/2.flac", "/music/3.flac"]
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                        next: NextPlay(playID: 2, path: "/music/2.flac", gain: gain), gain: gain),
            .measureLoudness(path: "/music/1.flac"),
            .measureLoudness(path: "/music/2.flac"),
            .measureLoudness(path: "/music/3.flac"),
            .persistPlace(Snapshot(tracks: infos(3), current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
    }

    /// Track 2, the successor handed as play 2, measured at -6 dB: handed again as play 3 with
    /// its gain, play 2 kept in mind (the engine may already be in it).
    private func measureSuccessor(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        let measured = Loudness(trackGain: -6, trackPeak: 0.25)
        h.send(.loudnessMeasured(path: "/music/2.flac", measured), file: file, line: line, {
            $0.loudnessScans.pending = ["/music/1.flac", "/music/3.flac"]
            $0.loudnessScans.measured = ["/music/2.flac": measured]
            $0.loudnessScans.arrival = ["/music/2.flac"]
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.handedBefore = HandedBefore(ref: PlayRef(playID: 2, trackID: 2), after: 1)
            $0.nextPlayID = 4
        }, commands: [.setNext(playID: 3, path: "/music/2.flac", gain: minus6)])
    }

    func testTheCurrentAndNextUntaggedTracksAreAskedForOnce() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track, untaggedPreamp: -6)))
        playAsking(h, gain: minus6)
        // Asked and not answered: not asked again.
        h.send(.tick(now: 1), { $0.now = 1 }, commands: [])
    }

    func testAQueueWaitingToPlayIsAskedForItsFirstFiveTracks() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .auto), 7))
        h.send(.tick(now: 1), {
            $0.now = 1
            $0.loudnessScans.pending = Set((1...5).map { "/music/\($0).flac" })
        }, commands: (1...5).map { .measureLoudness(path: "/music/\($0).flac") })
    }

    func testAMeasuredSuccessorIsHandedAgainWithItsGain() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track)))
        playAsking(h)
        measureSuccessor(h)
        // Track 2 goes on from track 1 gaplessly with that gain; track 3, still awaited, is not asked again.
        h.send(.trackFinished(playID: 1, next: 3), {
            $0.cursor = 1
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = PlayRef(playID: 4, trackID: 3)
            $0.handedBefore = nil
            $0.nextPlayID = 5
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 3)
        }, commands: [
            .setNext(playID: 4, path: "/music/3.flac", gain: nil),
            .persistPlace(Snapshot(tracks: infos(3), current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 3)),
        ])
    }

    /// The measurement came in the moment after the engine had gone on into track 2 as first
    /// handed (play 2), before the loop heard of it: the re-hand (play 3) reached the engine
    /// too late to change it. Track 2 plays on as the engine started it: not started again from
    /// 0 (the defect this guards against), play 3 withdrawn, track 3 handed as its successor.
    /// The engine's start report may come before its end report, or after.
    func testASuccessorHandedAgainAfterTheEngineWentIntoItPlaysOn() {
        for startFirst in [false, true] {
            let h = CoreHarness(queue(LoudnessSettings(mode: .track)))
            playAsking(h)
            measureSuccessor(h)
            let went: Event = startFirst ? .trackStarted(playID: 2) : .trackFinished(playID: 1, next: 2)
            h.send(went, {
                $0.cursor = 1
                $0.loaded = PlayRef(playID: 2, trackID: 2)
                $0.handedNext = PlayRef(playID: 4, trackID: 3)
                $0.handedBefore = nil
                $0.nextPlayID = 5
                $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
                $0.shown = status("playing", song: 2, index: 2, of: 3)
            }, commands: [
                .clearNext,
                .setNext(playID: 4, path: "/music/3.flac", gain: nil),
                .persistPlace(Snapshot(tracks: infos(3), current: 1, phase: .playing)),
                .render(status("playing", song: 2, index: 2, of: 3)),
            ])
            // The other report of the same move changes nothing.
            let other: Event = startFirst ? .trackFinished(playID: 1, next: 2) : .trackStarted(playID: 2)
            h.send(other, { _ in }, commands: [])
        }
    }

    func testTheTrackPlayingKeepsItsGainUntilItStartsAgain() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track)))
        playAsking(h)
        // +12 dB would take the 0.5 peak past full scale: held at 1 / 0.5 = 2 (about +6 dB).
        let measured = Loudness(trackGain: 12, trackPeak: 0.5)
        h.send(.loudnessMeasured(path: "/music/1.flac", measured), {
            $0.loudnessScans.pending = ["/music/2.flac", "/music/3.flac"]
            $0.loudnessScans.measured = ["/music/1.flac": measured]
            $0.loudnessScans.arrival = ["/music/1.flac"]
        }, commands: [])
        // No command: the track playing is not changed mid-way; its next start carries the gain.
        h.stop(track: 1, of: 3)
        let shown = status("playing", song: 1, index: 1, of: 3)
        h.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = shown
        }, commands: [
            .startTrack(playID: 3, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac"), gain: 2),
            .persistPlace(Snapshot(tracks: infos(3), current: 0, phase: .playing)),
            .render(shown),
        ])
    }

    func testAFailedMeasurementIsNotAskedAgainAndLeavesTheUntaggedPreamp() {
        let h = CoreHarness(queue(LoudnessSettings(mode: .track, untaggedPreamp: -6)))
        playAsking(h, gain: minus6)
        h.send(.loudnessMeasured(path: "/music/2.flac", nil), {
            $0.loudnessScans.pending = ["/music/1.flac", "/music/3.flac"]
            $0.loudnessScans.failed = ["/music/2.flac"]
            $0.loudnessScans.arrival = ["/music/2.flac"]
        }, commands: [])
        XCTAssertEqual(h.state.playGain(at: 1), minus6)
        // A gain no tag could carry is no measurement either.
        h.send(.loudnessMeasured(path: "/music/1.flac", Loudness(trackGain: .infinity)), {
            $0.loudnessScans.pending = ["/music/3.flac"]
            $0.loudnessScans.failed = ["/music/1.flac", "/music/2.flac"]
            $0.loudnessScans.arrival = ["/music/2.flac", "/music/1.flac"]
        }, commands: [])
        h.send(.tick(now: 1), { $0.now = 1 }, commands: [])
    }

    func testAlbumAndAutoModesUseTheMeasuredTrackGainWithThePreamp() {
        for mode in [LoudnessMode.album, .auto] {
            var s = queue(LoudnessSettings(mode: mode, preamp: -2, untaggedPreamp: -20))
            s.loudnessScans.answer("/music/1.flac", Loudness(trackGain: -6, trackPeak: 0.25))
            XCTAssertEqual(s.playGain(at: 0), minus8, "\(mode): -6 - 2 dB")
            XCTAssertEqual(s.playGain(at: 1) ?? 0, 0.1, accuracy: 1e-12, "\(mode): the untagged preamp until measured")
            s.settings.loudness.scan = false
            XCTAssertEqual(s.playGain(at: 0) ?? 0, 0.1, accuracy: 1e-12, "\(mode): measurements unused with scan off")
        }
    }

    func testNothingIsAskedWithModeOffScanOffTagsOrStreams() {
        for rules in [LoudnessSettings(mode: .off), LoudnessSettings(mode: .track, scan: false)] {
            let h = CoreHarness(queue(rules, 2))
            h.playFromStopped(2)
        }
        var tagged = queue(LoudnessSettings(mode: .track), 2)
        for i in 0..<2 { tagged.queue[i].info.loudness = Loudness(albumGain: 0) }
        CoreHarness(tagged).playFromStopped(2, tracks: tagged.queue.map(\.info))
        var stream = queue(LoudnessSettings(mode: .track), 1)
        stream.queue[0].info = TrackInfo(path: "http://radio.example/live", title: "Radio")
        var s = stream
        let commands = reduce(&s, .play)
        XCTAssertFalse(commands.contains { if case .measureLoudness = $0 { return true } else { return false } }, "\(commands)")
    }

    func testAnswersAreBoundedOldestFirst() {
        var scans = LoudnessScans()
        for i in 0...LoudnessScans.limit { scans.answer("/m/\(i)", i % 2 == 0 ? Loudness(trackGain: 1) : nil) }
        XCTAssertEqual(scans.arrival.count, LoudnessScans.limit / 2 + 1)
        XCTAssertEqual(scans.measured.count + scans.failed.count, scans.arrival.count)
        XCTAssertTrue(scans.needs("/m/0"), "the oldest forgotten")
        XCTAssertFalse(scans.needs("/m/\(LoudnessScans.limit)"))
        // An answer again moves to the newest.
        scans.answer("/m/\(LoudnessScans.limit / 2 + 1)", nil)
        XCTAssertEqual(scans.arrival.last, "/m/\(LoudnessScans.limit / 2 + 1)")
        XCTAssertEqual(scans.arrival.count, LoudnessScans.limit / 2 + 1)
    }
}

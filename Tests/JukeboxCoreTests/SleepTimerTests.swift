// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The sleep timer (`Reduce+Sleep.swift`): minutes or an end (track, chapter, folder), a fade of
/// volume orders decided from the firings' times and the heard position, then a pause (or the power
/// command), the user's volume back a moment later, and a state file that says paused meanwhile.
final class SleepTimerTests: XCTestCase {
    private let endOfTrack = "sleep timer: the sound stops at the end of this track"

    func testMinutesFadeOutThenPauseAndTheVolumeComesBackAfterThePause() {
        let h = CoreHarness(playing(2))
        let set = "sleep timer: the sound stops in 30 min"
        // Fired at once: the firing's time is the start. The state file says paused from now on.
        h.send(.sleepTimer(1800), {
            $0.sleep = SleepTimer(request: .after(1800), plannedFor: SleepPlan(trackID: 1, playing: true))
            $0.message = set
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: set, sleep: "30 min")
        }, commands: [
            .startTimer(.sleep, after: 0),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused)),
            .render(status("playing", song: 1, index: 1, of: 2, message: set, sleep: "30 min")),
        ])
        // The first firing fixes the end; the next one comes when the minutes shown change.
        h.send(.timerFired(.sleep, at: 100), {
            $0.sleep?.endsAt = 1900
            $0.sleep?.seenAt = 100
        }, commands: [.startTimer(.sleep, after: 60)])
        h.send(.tick(now: 1000), {
            $0.now = 1000
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: set, sleep: "15 min")
        }, commands: [.render(status("playing", song: 1, index: 1, of: 2, message: set, sleep: "15 min"))])
        // The fade begins 30 s before the end: one volume point's time apart, at most two a second.
        h.send(.timerFired(.sleep, at: 1870), {
            $0.sleep?.seenAt = 1870
            $0.sleepFade = 1
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: set, sleep: "30 s")
        }, commands: [
            .startTimer(.sleep, after: 0.5),
            .render(status("playing", song: 1, index: 1, of: 2, message: set, sleep: "30 s")),
        ])
        h.send(.timerFired(.sleep, at: 1885), {
            $0.sleep?.seenAt = 1885
            $0.sleepFade = 0.5
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: set, sleep: "15 s")
        }, commands: [
            .setVolume(50),
            .startTimer(.sleep, after: 0.5),
            .render(status("playing", song: 1, index: 1, of: 2, message: set, sleep: "15 s")),
        ])
        // A volume change while fading is heard faded; the user's volume is what is saved.
        h.send(.setVolume(80), {
            $0.volume = 80
            $0.message = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, volume: 80)
            $0.savedAt = 1000
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 80, sleep: "15 s")
        }, commands: [
            .setVolume(40),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused, volume: 80)),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 80, sleep: "15 s")),
        ])
        // The end: a pause, saved; the volume comes back a second later, after the pause's fade.
        h.send(.timerFired(.sleep, at: 1900.02), {
            $0.sleep = nil
            $0.phase = .paused
            $0.message = "sleep timer: paused"
            $0.shown = status("paused", song: 1, index: 1, of: 2, volume: 80, message: "sleep timer: paused")
        }, commands: [
            .cancelTimer(.sleep),
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .startTimer(.sleep, after: 1),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused, volume: 80)),
            .render(status("paused", song: 1, index: 1, of: 2, volume: 80, message: "sleep timer: paused")),
        ])
        h.send(.timerFired(.sleep, at: 1901.02), { $0.sleepFade = nil }, commands: [.setVolume(80)])
        // Nothing runs any more: a late firing does nothing, and no tick is asked for.
        h.send(.timerFired(.sleep, at: 1902), commands: [])
        XCTAssertNil(h.state.tickInterval(showsTime: false))
    }

    func testAPausedBoxCountsTheMinutesDownAndFadesNothing() {
        var s = playing(1)
        s.phase = .paused
        s.savedMark = mark(revision: 1, current: 1, phase: .paused)
        s.shown = status("paused", song: 1, index: 1, of: 1)
        let h = CoreHarness(s)
        h.send(.sleepTimer(90), {
            $0.sleep = SleepTimer(request: .after(90), plannedFor: SleepPlan(trackID: 1, playing: false))
            $0.message = "sleep timer: the sound stops in 2 min"
            $0.shown = status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "2 min")
        }, commands: [
            .startTimer(.sleep, after: 0),
            .render(status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "2 min")),
        ])
        h.send(.timerFired(.sleep, at: 10), {
            $0.sleep?.endsAt = 100
            $0.sleep?.seenAt = 10
        }, commands: [.startTimer(.sleep, after: 30)])
        h.send(.timerFired(.sleep, at: 40), {
            $0.sleep?.seenAt = 40
            $0.shown = status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "1 min")
        }, commands: [
            .startTimer(.sleep, after: 30),
            .render(status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "1 min")),
        ])
        // In the fade's time, paused: no volume order, one firing at the end.
        h.send(.timerFired(.sleep, at: 70), {
            $0.sleep?.seenAt = 70
            $0.shown = status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "30 s")
        }, commands: [
            .startTimer(.sleep, after: 30),
            .render(status("paused", song: 1, index: 1, of: 1, message: "sleep timer: the sound stops in 2 min", sleep: "30 s")),
        ])
        h.send(.timerFired(.sleep, at: 100), {
            $0.sleep = nil
            $0.message = "sleep timer: paused"
            $0.shown = status("paused", song: 1, index: 1, of: 1, message: "sleep timer: paused")
        }, commands: [
            .cancelTimer(.sleep),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, phase: .paused)),
            .render(status("paused", song: 1, index: 1, of: 1, message: "sleep timer: paused")),
        ])
    }

    func testTheEndOfTheTrackHandsNoSuccessorFadesOutAndPausesOnTheNextTrack() {
        var s = playing(2)
        s.position = 40
        s.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:40")
        let h = CoreHarness(s)
        h.send(.sleepTimer(.end(.track)), {
            $0.sleep = SleepTimer(request: .end(.track), plannedFor: SleepPlan(trackID: 1, playing: true))
            $0.handedNext = nil
            $0.message = self.endOfTrack
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedPosition = 40
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:40", message: self.endOfTrack, sleep: "1 min")
        }, commands: [
            .clearNext,
            .startTimer(.sleep, after: 30),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 40, phase: .paused)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:40", message: endOfTrack, sleep: "1 min")),
        ])
        h.send(.heard(playID: 1, seconds: 70), {
            $0.position = 70
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:10", message: self.endOfTrack, sleep: "30 s")
        }, commands: [.render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:10", message: endOfTrack, sleep: "30 s"))])
        h.send(.timerFired(.sleep, at: 500), {
            $0.sleep?.seenAt = 500
            $0.sleepFade = 1
        }, commands: [.startTimer(.sleep, after: 0.5)])
        h.send(.heard(playID: 1, seconds: 85), {
            $0.position = 85
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:25", message: self.endOfTrack, sleep: "15 s")
        }, commands: [.render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:25", message: endOfTrack, sleep: "15 s"))])
        h.send(.timerFired(.sleep, at: 515), {
            $0.sleep?.seenAt = 515
            $0.sleepFade = 0.5
        }, commands: [.setVolume(50), .startTimer(.sleep, after: 0.5)])
        h.send(.heard(playID: 1, seconds: 100), {
            $0.position = 100
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:40", message: self.endOfTrack, sleep: "0 s")
        }, commands: [.render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:40", message: endOfTrack, sleep: "0 s"))])
        // Silent at the end; the engine's end of the track is the timer's end.
        h.send(.timerFired(.sleep, at: 530), {
            $0.sleep?.seenAt = 530
            $0.sleepFade = 0
        }, commands: [.setVolume(0)])
        h.send(.trackFinished(playID: 1, next: nil), {
            $0.sleep = nil
            $0.cursor = 1
            $0.position = 0
            $0.loaded = nil
            $0.phase = .paused
            $0.message = "sleep timer: paused"
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused)
            $0.savedPosition = 0
            $0.shown = status("paused", song: 2, index: 2, of: 2, message: "sleep timer: paused")
        }, commands: [
            .stopOutput,
            .cancelTimer(.sleep),
            .startTimer(.sleep, after: 1),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .paused)),
            .render(status("paused", song: 2, index: 2, of: 2, message: "sleep timer: paused")),
        ])
        // Played again within the second: the user's volume comes back before the sound.
        h.send(.play, {
            $0.sleepFade = nil
            $0.phase = .playing
            $0.message = nil
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.nextPlayID = 4
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 2)
        }, commands: [
            .cancelTimer(.sleep),
            .setVolume(100),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 2)),
        ])
    }

    func testTheEndOfAChapterPausesThereAndTheSuccessorStays() {
        var settings = Settings()
        settings.sleep.fadeSeconds = 10
        let book = TrackInfo(path: "/music/book.m4b", title: "Book", artist: "Band", duration: 100,
                             chapters: [Chapter(start: 0, title: "One"), Chapter(start: 30, title: "Two"), Chapter(start: 60, title: "Three")])
        var s = State(settings: settings)
        s.queue = [Track(id: 1, info: book), Track(id: 2, info: info(2))]
        s.order = [1, 2]
        s.nextTrackID = 3
        s.queueRevision = 1
        s.cursor = 0
        s.phase = .playing
        s.position = 10
        s.loaded = PlayRef(playID: 1, trackID: 1)
        s.handedNext = PlayRef(playID: 2, trackID: 2)
        s.nextPlayID = 3
        s.savedMark = mark(revision: 1, current: 1, phase: .playing)
        s.savedPosition = 10
        func view(_ elapsed: String, _ chapter: String, sleep: String?, message: String?, phase: String = "playing") -> StatusView {
            var v = status(phase, title: "Book", artist: "Band", elapsed: elapsed, duration: "1:40", index: 1, of: 2, message: message, sleep: sleep)
            v.chapter = chapter
            return v
        }
        s.shown = view("0:10", "1/3 One", sleep: nil, message: nil)
        let h = CoreHarness(s)
        let set = "sleep timer: the sound stops at the end of this chapter"
        h.send(.sleepTimer(.end(.chapter)), {
            $0.sleep = SleepTimer(request: .end(.chapter), chapterEnd: 30, plannedFor: SleepPlan(trackID: 1, playing: true))
            $0.message = set
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = view("0:10", "1/3 One", sleep: "20 s", message: set)
        }, commands: [
            .startTimer(.sleep, after: 10),
            .persistPlace(Snapshot(tracks: [book, info(2)], current: 0, position: 10, phase: .paused)),
            .render(view("0:10", "1/3 One", sleep: "20 s", message: set)),
        ])
        h.send(.heard(playID: 1, seconds: 25), {
            $0.position = 25
            $0.shown = view("0:25", "1/3 One", sleep: "5 s", message: set)
        }, commands: [.render(view("0:25", "1/3 One", sleep: "5 s", message: set))])
        h.send(.timerFired(.sleep, at: 50), {
            $0.sleep?.seenAt = 50
            $0.sleepFade = 0.5
        }, commands: [.setVolume(50), .startTimer(.sleep, after: 0.5)])
        // Heard a little into the next chapter by the time the timer looks.
        h.send(.heard(playID: 1, seconds: 30.02), {
            $0.position = 30.02
            $0.shown = view("0:30", "2/3 Two", sleep: "0 s", message: set)
        }, commands: [.render(view("0:30", "2/3 Two", sleep: "0 s", message: set))])
        // The end: paused, the place at the next chapter's start.
        h.send(.timerFired(.sleep, at: 55.02), {
            $0.sleep = nil
            $0.phase = .paused
            $0.position = 30
            $0.message = "sleep timer: paused"
            $0.savedPosition = 30
            $0.shown = view("0:30", "2/3 Two", sleep: nil, message: "sleep timer: paused", phase: "paused")
        }, commands: [
            .cancelTimer(.sleep),
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .seekOutput(to: 30),
            .startTimer(.sleep, after: 1),
            .persistPlace(Snapshot(tracks: [book, info(2)], current: 0, position: 30, phase: .paused)),
            .render(view("0:30", "2/3 Two", sleep: nil, message: "sleep timer: paused", phase: "paused")),
        ])
        XCTAssertEqual(h.state.handedNext, PlayRef(playID: 2, trackID: 2), "the chapter ends inside the track: the successor stays")
    }

    func testTheEndOfAFolderWaitsForItsLastTrackAndCountsTheFolder() {
        var s = State()
        let tracks = [TrackInfo(path: "/a/1.flac", title: "Song 1", artist: "Band", duration: 100),
                      TrackInfo(path: "/a/2.flac", title: "Song 2", artist: "Band", duration: 100),
                      TrackInfo(path: "/b/3.flac", title: "Song 3", artist: "Band", duration: 100)]
        s.queue = tracks.enumerated().map { Track(id: UInt64($0.offset + 1), info: $0.element) }
        s.order = [1, 2, 3]
        s.nextTrackID = 4
        s.queueRevision = 1
        s.cursor = 0
        s.phase = .playing
        s.loaded = PlayRef(playID: 1, trackID: 1)
        s.handedNext = PlayRef(playID: 2, trackID: 2)
        s.nextPlayID = 3
        s.savedMark = mark(revision: 1, current: 1, phase: .playing)
        s.shown = status("playing", song: 1, index: 1, of: 3)
        let h = CoreHarness(s)
        let set = "sleep timer: the sound stops at the end of this folder"
        // Not the folder's last track: the successor stays, no firing is needed yet.
        h.send(.sleepTimer(.end(.folder)), {
            $0.sleep = SleepTimer(request: .end(.folder), plannedFor: SleepPlan(trackID: 1, playing: true))
            $0.message = set
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("playing", song: 1, index: 1, of: 3, message: set, sleep: "4 min")
        }, commands: [
            .cancelTimer(.sleep),
            .persistPlace(Snapshot(tracks: tracks, current: 0, phase: .paused)),
            .render(status("playing", song: 1, index: 1, of: 3, message: set, sleep: "4 min")),
        ])
        // Into the folder's last track without a gap: now its end is the end.
        h.send(.trackFinished(playID: 1, next: 2), {
            $0.cursor = 1
            $0.loaded = PlayRef(playID: 2, trackID: 2)
            $0.handedNext = nil
            $0.sleep?.plannedFor = SleepPlan(trackID: 2, playing: true)
            $0.savedMark = mark(revision: 1, current: 2, phase: .paused)
            $0.shown = status("playing", song: 2, index: 2, of: 3, message: set, sleep: "2 min")
        }, commands: [
            .startTimer(.sleep, after: 70),
            .persistPlace(Snapshot(tracks: tracks, current: 1, phase: .paused)),
            .render(status("playing", song: 2, index: 2, of: 3, message: set, sleep: "2 min")),
        ])
        XCTAssertEqual(h.state.sleepLeft(now: 0), 100)
    }

    func testTurningItOffMidFadeBringsTheVolumeBackAtOnce() {
        let h = CoreHarness(playing(1))
        var s = h.state
        s.sleep = SleepTimer(request: .after(60), endsAt: 60, seenAt: 45, plannedFor: SleepPlan(trackID: 1, playing: true))
        s.sleepFade = 0.5
        s.savedMark = mark(revision: 1, current: 1, phase: .paused)
        s.shown = status("playing", song: 1, index: 1, of: 1, sleep: "15 s")
        let g = CoreHarness(s)
        g.send(.sleepTimer(nil), {
            $0.sleep = nil
            $0.sleepFade = nil
            $0.message = "sleep timer off"
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 1, message: "sleep timer off")
        }, commands: [
            .cancelTimer(.sleep),
            .setVolume(100),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 1, message: "sleep timer off")),
        ])
    }

    func testPowerOffBySettingRunsThePowerCommandAfterThePause() {
        var settings = Settings()
        settings.sleep = SleepSettings(fadeSeconds: 0, then: .poweroff)
        settings.powerCommand = ["/bin/true"]
        var s = playing(1, settings: settings)
        s.sleep = SleepTimer(request: .after(60), endsAt: 60, plannedFor: SleepPlan(trackID: 1, playing: true))
        s.savedMark = mark(revision: 1, current: 1, phase: .paused)
        s.shown = status("playing", song: 1, index: 1, of: 1, sleep: "1 min")
        let h = CoreHarness(s)
        h.send(.timerFired(.sleep, at: 60), {
            $0.sleep = nil
            $0.phase = .paused
            $0.message = "sleep timer: powering off"
            $0.shown = status("paused", song: 1, index: 1, of: 1, message: "sleep timer: powering off")
        }, commands: [
            .cancelTimer(.sleep),
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report("sleep timer: running /bin/true"),
            .persistPlace(Snapshot(tracks: [info(1)], current: 0, phase: .paused)),
            .runProgram(["/bin/true"]),
            .render(status("paused", song: 1, index: 1, of: 1, message: "sleep timer: powering off")),
        ])
    }

    /// What a restart finds: while a timer runs the file says paused, so neither a power cut nor a
    /// restart brings the music back for longer than the timer allowed; the timer is not kept.
    func testARestartDuringOrAfterTheTimerComesBackPaused() {
        var s = playing(2)
        s.sleep = SleepTimer(request: .after(600))
        XCTAssertEqual(s.snapshot.phase, .paused)
        s.sleep = nil
        XCTAssertEqual(s.snapshot.phase, .playing)
        // An interruption that goes back to playing counts as playing.
        s.phase = .interrupted(reason: "call")
        s.afterInterruption = .playing
        s.sleep = SleepTimer(request: .end(.track))
        XCTAssertEqual(s.snapshot.phase, .paused)
        var restarted = State()
        _ = reduce(&restarted, .started)
        var saved = playing(2)
        saved.sleep = SleepTimer(request: .after(600))
        _ = reduce(&restarted, .restore(saved.snapshot))
        XCTAssertEqual(restarted.phase, .paused)
        XCTAssertNil(restarted.sleep)
    }

    func testAStreamHasNoEndToWaitFor() {
        var s = queued(1)
        s.queue[0].info = TrackInfo(path: "http://radio.example/live", title: "Live")
        s.cursor = 0
        s.savedMark = mark(revision: 1, current: 1, phase: .stopped)
        s.shown = status("stopped", title: "Live", elapsed: "0:00", index: 1, of: 1)
        let h = CoreHarness(s)
        let refused = "sleep timer: a live stream has no end (use sleep MINUTES)"
        h.send(.sleepTimer(.end(.track)), {
            $0.message = refused
            $0.shown = status("stopped", title: "Live", elapsed: "0:00", index: 1, of: 1, message: refused)
        }, commands: [.render(status("stopped", title: "Live", elapsed: "0:00", index: 1, of: 1, message: refused))])
    }

    func testTheControlLanguageAndTheCardsSayTheSameSleep() {
        XCTAssertEqual(ControlCommand.parse("sleep 30", seed: 0), .success(.intent(.sleepTimer(1800))))
        XCTAssertEqual(ControlCommand.parse("sleep 1.5", seed: 0), .success(.intent(.sleepTimer(90))))
        XCTAssertEqual(ControlCommand.parse("SLEEP Track", seed: 0), .success(.intent(.sleepTimer(.end(.track)))))
        XCTAssertEqual(ControlCommand.parse("sleep chapter", seed: 0), .success(.intent(.sleepTimer(.end(.chapter)))))
        XCTAssertEqual(ControlCommand.parse("sleep folder", seed: 0), .success(.intent(.sleepTimer(.end(.folder)))))
        XCTAssertEqual(ControlCommand.parse("sleep off", seed: 0), .success(.intent(.sleepTimer(nil))))
        for bad in ["sleep", "sleep 0", "sleep -5", "sleep nan", "sleep 1441", "sleep 10 20", "sleep soon", "sleep track now"] {
            XCTAssertEqual(ControlCommand.parse(bad, seed: 0), .failure(ControlError(ControlCommand.sleepUsage)), bad)
        }
        XCTAssertEqual(Cards.parseAction("sleep folder"), .success(.sleep(.end(.folder))))
        XCTAssertEqual(Cards.parseAction("sleep 15"), .success(.sleep(900)))
        XCTAssertEqual(SleepRequest.end(.chapter).words, "sleep chapter")
        XCTAssertEqual(SleepRequest.after(1800).words, "sleep 30")
    }
}

/// The panel's short mark of the time left, on the status row beside shuffle and repeat.
final class SleepTimerDisplayTests: XCTestCase {
    func testThePanelShowsTheTimeLeftBesideTheOtherMarks() {
        var s = playing(2)
        s.settings.display = .lcd16x2
        s.position = 83
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40     ")
        s.sleep = SleepTimer(request: .after(1800), endsAt: 1800, seenAt: 60)
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40  z29")
        s.shuffle = true
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40 z29🔀")
        s.shuffle = false
        s.sleep = SleepTimer(request: .end(.track))
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/1:40 z17s")
        s.queue[0].info.duration = nil
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows[1], "▶ 1:23/--:--   z")
    }
}

/// A tap of the power button steps through the sleep timer: 15, 30, 60 min, off.
final class SleepTimerButtonTests: XCTestCase {
    func testAPowerTapStepsThroughTheTimerAndAHoldStillPowersOff() {
        var state = playing(1)
        var seen: [SleepRequest?] = []
        var at = 10.0
        for _ in 0..<4 {
            _ = reduce(&state, .buttonEdge(.power, pressed: true, at: at))
            _ = reduce(&state, .timerFired(.debounce(.power), at: at + 0.02))
            let commands = reduce(&state, .buttonEdge(.power, pressed: false, at: at + 0.1))
            XCTAssertFalse(commands.contains(.runProgram(["systemctl", "poweroff"])), "a tap is not the power command")
            _ = reduce(&state, .timerFired(.debounce(.power), at: at + 0.12))
            seen.append(state.sleep?.request)
            at += 1
        }
        XCTAssertEqual(seen, [.after(900), .after(1800), .after(3600), nil])
        XCTAssertEqual(state.message, "sleep timer off")
        // Held 3 s: the power command, as before.
        _ = reduce(&state, .buttonEdge(.power, pressed: true, at: 100))
        _ = reduce(&state, .timerFired(.debounce(.power), at: 100.02))
        XCTAssertTrue(reduce(&state, .timerFired(.gesture(.power), at: 103)).contains(.runProgram(["systemctl", "poweroff"])))
    }
}

extension SleepTimerTests {
    /// The end is the first firing's clock plus the minutes; that sum less the same clock is not
    /// always the minutes exactly in binary (6951.537853084733 + 1800 - 6951.537853084733 =
    /// 1800.000000000001), and rounded up that showed "31 min" right after `sleep 30`.
    func testTheTimeLeftRightAfterTheFirstFiringIsTheMinutesAsked() {
        for at in [6951.537853084733, 2363.4577631987063, 14646.1740399346, 64229.43629324456] {
            var state = State()
            state.now = at
            state.sleep = SleepTimer(request: .after(1800), endsAt: at + 1800, seenAt: at)
            XCTAssertEqual(state.sleepLeft(now: at), 1800, "\(at)")
            XCTAssertEqual(state.sleepMark, "30 min", "\(at)")
            XCTAssertEqual(state.sleepPanelMark, "z30", "\(at)")
        }
    }
}

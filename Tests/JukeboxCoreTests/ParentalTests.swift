// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Parental rules (issue 30): the daily listening limit, quiet hours and volume caps by time of
/// day and output. The shell reports the local time and whether the clock is synchronised
/// (`Event.wallClock`) and monotonic time (ticks); the rules are the core's.
final class ParentalTests: XCTestCase {
    /// Ten minutes a day, a warning two minutes before the end, the day starting at 06:00.
    private static let limit = ParentalSettings(dailyLimit: 600, warnBefore: 120)
    private static let reached = "daily listening limit reached: plays again after 06:00"

    /// Two tracks, the first playing at 0:00, under `rules`; the clock synchronised on day 100 at
    /// 10:00 (or as `clock` says), the count at `listened` seconds of day 100.
    private func box(_ rules: ParentalSettings = ParentalTests.limit, clock: LocalTime? = LocalTime(day: 100, minute: 600),
                     synchronized: Bool = true, listened: Double = 0, headphones: HeadphoneSettings? = nil) -> CoreHarness {
        var settings = Settings()
        settings.parental = rules
        settings.headphones = headphones
        var state = JukeboxCoreTests.playing(2, settings: settings)
        state.parental.clock = clock
        state.parental.clockSynchronized = synchronized
        state.parental.listening = Listening(seconds: listened, day: synchronized ? clock?.day : nil)
        return CoreHarness(state)
    }

    /// An empty player under `limit` before its state is restored, the clock synchronised on day
    /// 100 at 11:40.
    private static func started() -> State {
        var settings = Settings()
        settings.parental = ParentalTests.limit
        var state = State(settings: settings)
        state.parental.clock = LocalTime(day: 100, minute: 700)
        state.parental.clockSynchronized = true
        return state
    }

    /// `play` once the rules let track 1 of `playing(2)` play again, paused with the engine holding
    /// it: the output resumes, the refusal's message goes, the place is saved (`listening` with it).
    private func resumeAfterTheRefusal(_ h: CoreHarness, listening: Listening? = nil, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.play, file: file, line: line, {
            $0.phase = .playing
            $0.message = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .resumeOutput,
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .playing, listening: listening)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
    }

    private func tick(_ h: CoreHarness, _ now: Double, listened: Double, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.tick(now: now), file: file, line: line, {
            $0.now = now
            $0.parental.countedAt = now
            $0.parental.listening.seconds = listened
        }, commands: [])
    }

    /// `playing(2)` under `limit` plays 600 s: warned at 110 s left, paused at the end.
    private func playToTheLimit(_ h: CoreHarness, day: Int = 100, file: StaticString = #filePath, line: UInt = #line) {
        h.send(.tick(now: 1000), file: file, line: line, { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        tick(h, 1400, listened: 400, file: file, line: line)
        let warning = "2 min of listening left today"
        h.send(.tick(now: 1490), file: file, line: line, {
            $0.now = 1490
            $0.parental.countedAt = 1490
            $0.parental.listening.seconds = 490
            $0.parental.warned = true
            $0.message = warning
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: warning)
        }, commands: [
            .report("daily listening limit: " + warning),
            .render(status("playing", song: 1, index: 1, of: 2, message: warning)),
        ])
        let shown = status("paused", song: 1, index: 1, of: 2, message: ParentalTests.reached)
        h.send(.tick(now: 1600), file: file, line: line, {
            $0.now = 1600
            $0.phase = .paused
            $0.parental.countedAt = nil
            $0.parental.listening.seconds = 600
            $0.message = ParentalTests.reached
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedAt = 1600
            $0.shown = shown
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report(ParentalTests.reached + ": paused"),
            .clearNext,
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .paused, listening: Listening(seconds: 600, day: day))),
            .render(shown),
        ])
    }

    func testTheLimitCountsWhilePlayingWarnsAndPausesAtTheEnd() {
        let h = box()
        playToTheLimit(h)
        // Refused: said again, nothing starts.
        h.send(.play, commands: [])
        h.send(.togglePlayPause, commands: [])
        XCTAssertEqual(h.state.listeningLeft, 0)
    }

    func testPausedNothingIsCounted() {
        let h = box()
        h.send(.tick(now: 1000), { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        h.send(.pause, {
            $0.phase = .paused
            $0.parental.countedAt = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.savedAt = 1000
            $0.shown = status("paused", song: 1, index: 1, of: 2)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .paused, listening: Listening(seconds: 0, day: 100))),
            .render(status("paused", song: 1, index: 1, of: 2)),
        ])
        h.send(.tick(now: 5000), { $0.now = 5000 }, commands: [])
        // Playing again, the count starts at the next tick: the pause's hour is not in it.
        h.send(.play, { $0.phase = .playing; $0.savedMark = mark(revision: 1, current: 1, phase: .playing); $0.savedAt = 5000
            $0.shown = status("playing", song: 1, index: 1, of: 2) }, commands: [
            .resumeOutput,
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .playing, listening: Listening(seconds: 0, day: 100))),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
        h.send(.tick(now: 5001), { $0.now = 5001; $0.parental.countedAt = 5001 }, commands: [])
        tick(h, 5031, listened: 30)
    }

    func testTheResetTimeStartsANewDay() {
        let h = box()
        playToTheLimit(h)
        // 05:59 the next day is still day 100's.
        h.send(.wallClock(LocalTime(day: 101, minute: 359), synchronized: true), { $0.parental.clock = LocalTime(day: 101, minute: 359) }, commands: [])
        h.send(.play, commands: [])
        h.send(.wallClock(LocalTime(day: 101, minute: 360), synchronized: true), {
            $0.parental.clock = LocalTime(day: 101, minute: 360)
            $0.parental.listening = Listening(seconds: 0, day: 101)
            $0.parental.warned = false
            // The paused play may go on into its successor again.
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.nextPlayID = 4
        }, commands: [.report("a new listening day: 10 min of listening"), .setNext(playID: 3, path: "/music/2.flac")])
        resumeAfterTheRefusal(h, listening: Listening(seconds: 0, day: 101))
    }

    func testAWallClockJumpAddsOrRemovesNoListening() {
        let h = box(listened: 100)
        h.send(.tick(now: 1000), { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        // Three hours on in one step (the same listening day): only monotonic time counts.
        h.send(.wallClock(LocalTime(day: 100, minute: 780), synchronized: true), { $0.parental.clock = LocalTime(day: 100, minute: 780) }, commands: [])
        tick(h, 1001, listened: 101)
        // Back to 04:00 of the same date (day 99's listening day, one back): the day is kept.
        h.send(.wallClock(LocalTime(day: 100, minute: 240), synchronized: true), { $0.parental.clock = LocalTime(day: 100, minute: 240) }, commands: [])
        tick(h, 1002, listened: 102)
        XCTAssertEqual(h.state.parental.listening.day, 100)
    }

    func testAJumpBackByMonthsKeepsTheCountAndForwardAgainIsANewDay() {
        let h = box(listened: 450)
        h.send(.wallClock(LocalTime(day: 10, minute: 600), synchronized: true), {
            $0.parental.clock = LocalTime(day: 10, minute: 600)
            $0.parental.listening.day = 10
        }, commands: [])
        // The count is kept: going back gave no listening.
        XCTAssertEqual(h.state.listeningLeft, 150)
        h.send(.wallClock(LocalTime(day: 190, minute: 600), synchronized: true), {
            $0.parental.clock = LocalTime(day: 190, minute: 600)
            $0.parental.listening = Listening(seconds: 0, day: 190)
        }, commands: [.report("a new listening day: 10 min of listening")])
    }

    func testSynchronisingAfterAStaleBootCountsIntoTheSameDay() {
        let h = box(clock: nil, synchronized: false, listened: 300)
        h.send(.wallClock(LocalTime(day: 10, minute: 600), synchronized: false), { $0.parental.clock = LocalTime(day: 10, minute: 600) }, commands: [])
        XCTAssertNil(h.state.parental.listening.day, "an unsynchronised clock names no day")
        h.send(.tick(now: 1000), { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        tick(h, 1060, listened: 360)
        // NTP: months later, the same listening day as the count's (not known before: taken).
        h.send(.wallClock(LocalTime(day: 200, minute: 700), synchronized: true), {
            $0.parental.clock = LocalTime(day: 200, minute: 700)
            $0.parental.clockSynchronized = true
            $0.parental.listening.day = 200
        }, commands: [.report("wall clock synchronised: parental rules follow the time of day")])
        XCTAssertEqual(h.state.parental.listening.seconds, 360)
    }

    func testABoxThatNeverSynchronisesKeepsCountingAndHoldsEveryCap() {
        var rules = ParentalTests.limit
        rules.quietHours = QuietHours(window: DayWindow(from: 1170, to: 420), volumeMax: 30)
        rules.caps = [VolumeCap(window: DayWindow(from: 480, to: 1080), volumeMax: 60)]
        let h = box(rules, clock: nil, synchronized: false)
        // 20:00 by a clock not to be trusted: quiet hours are not known, so the box plays, at the
        // lowest cap of all.
        // The person's 100 is kept (and saved: nothing to write now) to be given back.
        h.send(.wallClock(LocalTime(day: 10, minute: 1200), synchronized: false), {
            $0.parental.clock = LocalTime(day: 10, minute: 1200)
            $0.volume = 30
            $0.parental.heldVolume = 100
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 30)
        }, commands: [
            .setVolume(30),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 30)),
        ])
        XCTAssertEqual(h.state.snapshot.volume, 100)
        XCTAssertNil(h.state.quietNow)
        XCTAssertEqual(h.state.volumeMax, 30)
        h.send(.tick(now: 1000), { $0.now = 1000; $0.parental.countedAt = 1000 }, commands: [])
        tick(h, 1300, listened: 300)
        // Days go by on the stale clock: the count goes on into the same (unknown) day.
        h.send(.wallClock(LocalTime(day: 12, minute: 700), synchronized: false), { $0.parental.clock = LocalTime(day: 12, minute: 700) }, commands: [])
        tick(h, 1301, listened: 301)
        XCTAssertNil(h.state.parental.listening.day)
    }

    /// Quiet hours at 30 and a daily cap of 60 from 08:00 to 18:00, no daily limit: a box that
    /// boots with the clock not synchronised holds the lowest cap, 30, at the person's 80.
    private func staleBootAtEighty() -> CoreHarness {
        var rules = ParentalSettings()
        rules.quietHours = QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/music/"], volumeMax: 30)
        rules.caps = [VolumeCap(window: DayWindow(from: 480, to: 1080), volumeMax: 60)]
        let h = box(rules, clock: nil, synchronized: false)
        // The person's 80 is what is saved; the output gets 30.
        h.send(.setVolume(80), {
            $0.volume = 30
            $0.parental.heldVolume = 80
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 80)
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 30)
        }, commands: [
            .setVolume(30),
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .playing, volume: 80)),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 30)),
        ])
        return h
    }

    func testSynchronisingGivesBackWhatOnlyTheUnknownTimeHeldDown() {
        // 19:00, no cap holds: the person's 80 comes back, and the saved volume stays 80.
        let h = staleBootAtEighty()
        XCTAssertEqual(h.state.volumeMax, 30)
        h.send(.wallClock(LocalTime(day: 200, minute: 1140), synchronized: true), {
            $0.parental.clock = LocalTime(day: 200, minute: 1140)
            $0.parental.clockSynchronized = true
            $0.parental.heldVolume = nil
            $0.volume = 80
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 80)
        }, commands: [
            .report("wall clock synchronised: parental rules follow the time of day"),
            .setVolume(80),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 80)),
        ])
        // 10:00, the day's cap of 60 holds: back as far as it allows, and nothing more is kept.
        let day = staleBootAtEighty()
        day.send(.wallClock(LocalTime(day: 200, minute: 600), synchronized: true), {
            $0.parental.clock = LocalTime(day: 200, minute: 600)
            $0.parental.clockSynchronized = true
            $0.parental.heldVolume = nil
            $0.volume = 60
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 60)
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 60)
        }, commands: [
            .report("wall clock synchronised: parental rules follow the time of day"),
            .setVolume(60),
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .playing, volume: 60)),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 60)),
        ])
        // Quiet hours (23:00), the folder allowed: 30 stays.
        let night = staleBootAtEighty()
        night.send(.wallClock(LocalTime(day: 200, minute: 1380), synchronized: true), {
            $0.parental.clock = LocalTime(day: 200, minute: 1380)
            $0.parental.clockSynchronized = true
            $0.parental.heldVolume = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 30)
        }, commands: [
            .report("wall clock synchronised: parental rules follow the time of day"),
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .playing, volume: 30)),
        ])
    }

    func testAVolumeAPersonSetsReplacesTheHeldOne() {
        let h = staleBootAtEighty()
        h.setVolume(20, playingTrack1Of: 2, also: { $0.parental.heldVolume = nil })
        XCTAssertEqual(h.state.snapshot.volume, 20)
        h.send(.wallClock(LocalTime(day: 200, minute: 1140), synchronized: true), {
            $0.parental.clock = LocalTime(day: 200, minute: 1140)
            $0.parental.clockSynchronized = true
        }, commands: [.report("wall clock synchronised: parental rules follow the time of day")])
    }

    func testARestartBeforeTheClockIsSynchronisedKeepsThePersonsVolume() {
        var settings = Settings()
        settings.parental.caps = [VolumeCap(window: DayWindow(from: 480, to: 1080), volumeMax: 60)]
        let h = CoreHarness(State(settings: settings))
        // Saved at 80; the time is not known, so the cap holds, and 80 is what is saved again.
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, phase: .paused, volume: 80), volume: 60,
                              also: { $0.parental.heldVolume = 80; $0.savedMark?.volume = 80 })
        XCTAssertEqual(h.state.snapshot.volume, 80)
    }

    func testQuietHoursPauseWhatIsNotAllowedAndRefuseToStart() {
        let quiet = ParentalSettings(quietHours: QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/lullabies"]))
        let h = box(quiet, clock: LocalTime(day: 100, minute: 1169))
        XCTAssertEqual(h.state.quietNow, false)
        let why = "quiet hours until 07:00"
        let shown = status("paused", song: 1, index: 1, of: 2, message: why)
        h.send(.wallClock(LocalTime(day: 100, minute: 1170), synchronized: true), {
            $0.parental.clock = LocalTime(day: 100, minute: 1170)
            $0.phase = .paused
            $0.message = why
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = shown
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .report(why + ": paused"),
            .clearNext,
            .persistPlace(Snapshot(tracks: infos(2), current: 0, phase: .paused)),
            .render(shown),
        ])
        h.send(.play, commands: [])
        // Across midnight, still quiet.
        h.send(.wallClock(LocalTime(day: 101, minute: 419), synchronized: true), { $0.parental.clock = LocalTime(day: 101, minute: 419) }, commands: [])
        h.send(.play, commands: [])
        // 07:00: it plays again when asked (nothing starts by itself).
        h.send(.wallClock(LocalTime(day: 101, minute: 420), synchronized: true), {
            $0.parental.clock = LocalTime(day: 101, minute: 420)
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.nextPlayID = 4
        }, commands: [.setNext(playID: 3, path: "/music/2.flac")])
        resumeAfterTheRefusal(h)
    }

    func testQuietHoursLetTheAllowedFoldersPlayAtTheirCap() {
        let quiet = ParentalSettings(quietHours: QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/music/"], volumeMax: 30))
        let h = box(quiet, clock: LocalTime(day: 100, minute: 1169))
        h.setVolume(30, playingTrack1Of: 2, by: .wallClock(LocalTime(day: 100, minute: 1170), synchronized: true), also: {
            $0.parental.clock = LocalTime(day: 100, minute: 1170)
        })
        h.send(.changeVolume(by: 5), commands: [])
        XCTAssertEqual(h.state.quietNow, true)
        // Not a folder's prefix by name only: "/music2" is not under "/music/".
        XCTAssertNotNil(h.state.parentalRefusal(path: "/music2/1.flac"))
        XCTAssertNil(h.state.parentalRefusal(path: "/music/a/1.flac"))
    }

    func testCapsByTimeOfDayAndOutput() {
        let caps = ParentalSettings(caps: [
            VolumeCap(window: DayWindow(from: 1080, to: 1170), volumeMax: 50, output: .speaker),
            VolumeCap(window: DayWindow(from: 1080, to: 1170), volumeMax: 20, output: .headphones),
        ])
        let h = box(caps, clock: LocalTime(day: 100, minute: 1079), headphones: HeadphoneSettings(pauseOnUnplug: false))
        XCTAssertEqual(h.state.volumeMax, 100)
        h.setVolume(50, playingTrack1Of: 2, by: .wallClock(LocalTime(day: 100, minute: 1080), synchronized: true), also: {
            $0.parental.clock = LocalTime(day: 100, minute: 1080)
        })
        h.setVolume(20, playingTrack1Of: 2, by: .headphones(plugged: true), also: { $0.headphonesIn = true })
        h.send(.headphones(plugged: false), { $0.headphonesIn = false }, commands: [])
        h.setVolume(50, playingTrack1Of: 2)
        // Past the window: the config's own range again.
        h.send(.wallClock(LocalTime(day: 100, minute: 1170), synchronized: true), { $0.parental.clock = LocalTime(day: 100, minute: 1170) }, commands: [])
        h.setVolume(90, playingTrack1Of: 2)
    }

    func testTheCountSurvivesARestartAndADayThatEndedMeanwhileStartsAgain() {
        let h = CoreHarness(ParentalTests.started())
        // Saved the same listening day: the count stands.
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, phase: .paused, listening: Listening(seconds: 550, day: 100)),
                              also: { $0.parental.listening = Listening(seconds: 550, day: 100) })
        XCTAssertEqual(h.state.snapshot.listening, Listening(seconds: 550, day: 100))
        // Saved the day before: a new day.
        let later = CoreHarness(ParentalTests.started())
        later.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, phase: .paused, listening: Listening(seconds: 550, day: 99)),
                                  also: { $0.parental.listening = Listening(seconds: 0, day: 100) },
                                  report: "a new listening day: 10 min of listening")
    }

    func testAPlayRestoredPastTheLimitComesBackPaused() {
        let h = CoreHarness(ParentalTests.started())
        h.restorePausedTrack1(Snapshot(tracks: [info(1)], current: 0, phase: .playing, listening: Listening(seconds: 600, day: 100)),
                              message: ParentalTests.reached, also: {
            $0.parental.listening = Listening(seconds: 600, day: 100)
            $0.message = ParentalTests.reached
        })
    }

    func testWithoutRulesTheClockIsOnlyKept() {
        let h = CoreHarness(JukeboxCoreTests.playing(2))
        h.send(.wallClock(LocalTime(day: 1, minute: 1), synchronized: true), {
            $0.parental.clock = LocalTime(day: 1, minute: 1)
            $0.parental.clockSynchronized = true
        }, commands: [])
        h.send(.tick(now: 10), { $0.now = 10 }, commands: [])
        XCTAssertNil(h.state.snapshot.listening)
    }

    func testDayWindows() {
        let night = DayWindow(from: 1170, to: 420)
        XCTAssertEqual([1169, 1170, 0, 419, 420].map(night.contains), [false, true, true, true, false])
        let day = DayWindow(from: 480, to: 1080)
        XCTAssertEqual([479, 480, 1079, 1080].map(day.contains), [false, true, true, false])
        XCTAssertTrue(DayWindow(from: 0, to: 0).contains(700), "from == to: the whole day")
        XCTAssertEqual(LocalTime.text(425), "07:05")
    }
}

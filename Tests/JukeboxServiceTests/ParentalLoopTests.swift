// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import XCTest

/// The daily limit over a real loop: monotonic time from a manual clock, the wall clock from the
/// test, the count in the state file across a restart.
final class ParentalLoopTests: XCTestCase {
    private let tracks = [TrackInfo(path: "/m/a.flac", duration: 3600), TrackInfo(path: "/m/b.flac", duration: 3600)]

    private func runtime(_ store: StateStore, clock: ManualClock, wall: @escaping () -> (time: LocalTime, synchronized: Bool),
                         audio: RecordingAudio = RecordingAudio()) -> Runtime {
        var settings = Settings()
        settings.parental = ParentalSettings(dailyLimit: 120, warnBefore: 60)
        settings.releaseDelay = 0
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: store, status: RecordingStatus(),
                              log: Log(level: .error), clock: clock.read)
        runtime.wallClock = wall
        return runtime
    }

    /// Steps the loop `seconds` times, a second apart (each pass a tick while playing).
    private func run(_ runtime: Runtime, _ clock: ManualClock, seconds: Int) {
        for _ in 0..<seconds {
            clock.advance(by: 1)
            runtime.step(wait: false)
        }
    }

    func testTheLimitEndsPlayAndSurvivesARestartUntilTheResetTime() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let clock = ManualClock()
        var wall = (time: LocalTime(day: 20541, minute: 600), synchronized: true)
        let audio = RecordingAudio()
        let first = runtime(store, clock: clock, wall: { wall }, audio: audio)
        first.start(initial: [.replaceQueue(tracks)])
        XCTAssertEqual(first.state.parental.clock, wall.time, "the wall clock came at start")
        run(first, clock, seconds: 70)
        XCTAssertEqual(first.state.message, "1 min of listening left today")
        // An hour of wall time in one jump adds nothing: only the loop's monotonic seconds count.
        wall.time.minute = 660
        run(first, clock, seconds: 60)
        XCTAssertEqual(first.state.phase, .paused)
        XCTAssertEqual(first.state.message, "daily listening limit reached: plays again after 06:00")
        XCTAssertEqual(audio.calls.last, .release(token: 1), "paused: the device let go at once (releaseDelay 0)")
        let counted = first.state.parental.listening.seconds
        XCTAssertGreaterThanOrEqual(counted, 120)
        XCTAssertLessThan(counted, 122)
        first.dispatch(.quit)
        first.waitForSaves()
        XCTAssertEqual(first.finish(), 0)

        // Restarted the same day: the count is read back and nothing plays.
        let saved = try XCTUnwrap(store.load().snapshot)
        XCTAssertEqual(saved.listening, Listening(seconds: counted, day: 20541))
        let second = runtime(store, clock: clock, wall: { wall })
        second.start(initial: [.restore(saved)])
        second.dispatch(.play)
        XCTAssertEqual(second.state.phase, .paused)
        // 06:00 the next day: a new listening day, and play plays.
        wall.time = LocalTime(day: 20542, minute: 360)
        run(second, clock, seconds: 1)
        XCTAssertEqual(second.state.parental.listening, Listening(seconds: 0, day: 20542))
        second.dispatch(.play)
        XCTAssertEqual(second.state.phase, .playing)
        second.dispatch(.quit)
        second.waitForSaves()
        _ = second.finish()
    }
}

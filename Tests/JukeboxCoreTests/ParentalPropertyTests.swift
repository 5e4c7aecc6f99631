// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The parental rules under random runs: ticks, plays and pauses, the wall clock jumping forwards
/// and backwards by up to months, synchronised or not. Whatever the clock does, the count grows by
/// no more than the monotonic time spent playing, it starts again only at a later listening day of
/// a synchronised clock, nothing plays past the limit or in quiet hours outside the allowed
/// folders, and the volume never passes the cap in force.
final class ParentalPropertyTests: XCTestCase {
    func testRandomRunsKeepTheRules() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_PARENTAL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("ParentalPropertyTests seed \(seed) (JUKEBOX_PARENTAL_SEED repeats it)")
        var rng = SeededGenerator(seed: seed)
        var settings = Settings()
        settings.parental = ParentalSettings(
            quietHours: QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/music/1.flac"], volumeMax: 30),
            dailyLimit: 900, warnBefore: 120, resetAt: 360,
            caps: [VolumeCap(window: DayWindow(from: 1080, to: 1170), volumeMax: 50)])
        for run in 0..<20 {
            var state = JukeboxCoreTests.playing(3, settings: settings)
            var now = 1000.0
            var time = LocalTime(day: Int.random(in: 0...20000, using: &rng), minute: Int.random(in: 0..<1440, using: &rng))
            var synced = Bool.random(using: &rng)
            // As the shell does at start: the clock before anything else.
            _ = reduce(&state, .wallClock(time, synchronized: synced))
            for step in 0..<300 {
                let before = state
                let event: Event
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<4:
                    now += Double.random(in: 0.1...3, using: &rng)
                    event = .tick(now: now)
                case 4:
                    // Minutes on, or a jump of up to months either way.
                    let jump = Bool.random(using: &rng) ? Int.random(in: 1...30, using: &rng) : Int.random(in: -200_000...200_000, using: &rng)
                    let minutes = time.day * 1440 + time.minute + jump
                    time = LocalTime(day: minutes / 1440, minute: ((minutes % 1440) + 1440) % 1440)
                    if minutes < 0 { time.day -= 1 }
                    if Int.random(in: 0..<5, using: &rng) == 0 { synced.toggle() }
                    event = .wallClock(time, synchronized: synced)
                case 5: event = .play
                case 6: event = .pause
                case 7: event = .next
                case 8: event = .changeVolume(by: Int.random(in: -20...20, using: &rng))
                default: event = .playEntry(at: Int.random(in: 0..<3, using: &rng))
                }
                let commands = reduce(&state, event)
                let context = "seed \(seed) run \(run) step \(step): \(event)"
                let grew = state.parental.listening.seconds - before.parental.listening.seconds
                let newDay = commands.contains { if case .report(let line) = $0 { return line.hasPrefix("a new listening day") }; return false }
                if newDay {
                    XCTAssertEqual(state.parental.listening.seconds, 0, context)
                    XCTAssertTrue(state.parental.clockSynchronized, context)
                    XCTAssertGreaterThan(state.parental.listening.day ?? .min, before.parental.listening.day ?? .min, context)
                } else if case .tick(let at) = event, before.phase == .playing, let since = before.parental.countedAt {
                    XCTAssertEqual(grew, at - since, accuracy: 1e-9, context)
                } else {
                    XCTAssertEqual(grew, 0, context)
                }
                XCTAssertLessThanOrEqual(state.volume, state.volumeMax, context)
                if state.phase == .playing, let track = state.currentTrack {
                    XCTAssertNil(state.parentalRefusal(path: track.info.path), context)
                }
                if state.phase == .playing, state.quietNow != false {
                    XCTAssertLessThanOrEqual(state.volume, 30, context)
                }
            }
        }
    }
}

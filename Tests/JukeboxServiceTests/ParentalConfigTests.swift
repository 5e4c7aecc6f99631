// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The parental rules' shell parts: the config's `parental`, the wall clock as local time (DST is
/// the system's conversion), the count saved with the place, and `status --json`'s `parental`.
final class ParentalConfigTests: XCTestCase {
    private func parse(_ text: String) throws(Config.Problem) -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testTheSectionIsReadAndChecked() throws {
        XCTAssertTrue(try parse("{}").config.settings.parental.isEmpty)
        let (c, w) = try parse("""
        {"parental": {"quietHours": {"from": "19:30", "to": "7:00", "folders": ["/srv/music/Lullabies"], "volumeMax": 30},
         "dailyLimitMinutes": 90, "warnMinutes": 5, "resetAt": "06:00",
         "caps": [{"from": "18:00", "to": "19:30", "volumeMax": 50, "output": "speaker"}, {"from": "00:00", "to": "00:00", "volumeMax": 70}],
         "pin": "1234"}}
        """)
        XCTAssertEqual(c.settings.parental, ParentalSettings(
            quietHours: QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/srv/music/Lullabies"], volumeMax: 30),
            dailyLimit: 5400, warnBefore: 300, resetAt: 360,
            caps: [VolumeCap(window: DayWindow(from: 1080, to: 1170), volumeMax: 50, output: .speaker),
                   VolumeCap(window: DayWindow(from: 0, to: 0), volumeMax: 70)]))
        XCTAssertEqual(w, [#"c.json: unknown key "parental.pin" ignored"#])
        let expectation = "c.json: parental: " + RawParental.expectation
        for bad in [#"{"parental": {"quietHours": {"from": "19:30"}}}"#, #"{"parental": {"quietHours": {"from": "24:00", "to": "07:00"}}}"#,
                    #"{"parental": {"quietHours": {"from": "19:3", "to": "07:00"}}}"#, #"{"parental": {"quietHours": {"from": "7pm", "to": "07:00"}}}"#,
                    #"{"parental": {"quietHours": {"from": "19:30", "to": "07:00", "folders": ["music"]}}}"#,
                    #"{"parental": {"quietHours": {"from": "19:30", "to": "07:00", "volumeMax": 101}}}"#,
                    #"{"parental": {"dailyLimitMinutes": 0}}"#, #"{"parental": {"dailyLimitMinutes": 1441}}"#,
                    #"{"parental": {"warnMinutes": -1}}"#, #"{"parental": {"resetAt": "6"}}"#,
                    #"{"parental": {"caps": [{"from": "18:00", "to": "19:00"}]}}"#,
                    #"{"parental": {"caps": [{"from": "18:00", "to": "19:00", "volumeMax": 50, "output": "car"}]}}"#] {
            XCTAssertThrowsError(try parse(bad), bad) { XCTAssertEqual("\($0)", expectation, bad) }
        }
        XCTAssertThrowsError(try parse(#"{"parental": {"dailyLimitMinutes": "lots"}}"#))
        XCTAssertThrowsError(try parse(#"{"parental": 90}"#))
    }

    /// Runs `body` with `TZ` set to `zone`, then puts the old value back.
    private func inZone(_ zone: String, _ body: () -> Void) {
        let old = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let old { setenv("TZ", old, 1) } else { unsetenv("TZ") }
            tzset()
        }
        body()
    }

    func testLocalTimeFollowsTheZoneAcrossDaylightSavingBothWays() {
        // 2026-03-29 is day 20541 since 1970-01-01; 2026-10-25 is day 20751.
        XCTAssertEqual(WallClock.daysFromCivil(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(WallClock.daysFromCivil(year: 2026, month: 3, day: 29), 20541)
        XCTAssertEqual(WallClock.daysFromCivil(year: 2026, month: 10, day: 25), 20751)
        XCTAssertEqual(WallClock.daysFromCivil(year: 1969, month: 12, day: 31), -1)
        inZone("Europe/Berlin") {
            // Spring: 01:59 CET, then 03:00 CEST one minute later (00:59 and 01:00 UTC).
            let spring = 20541 * 86400 + 59 * 60
            XCTAssertEqual(WallClock.local(at: spring), LocalTime(day: 20541, minute: 119))
            XCTAssertEqual(WallClock.local(at: spring + 60), LocalTime(day: 20541, minute: 180))
            // Autumn: 02:59 CEST, then 02:00 CET again (00:59 and 01:00 UTC).
            let autumn = 20751 * 86400 + 59 * 60
            XCTAssertEqual(WallClock.local(at: autumn), LocalTime(day: 20751, minute: 179))
            XCTAssertEqual(WallClock.local(at: autumn + 60), LocalTime(day: 20751, minute: 120))
            // Local midnight is 23:00 UTC the day before in winter: the date is local.
            XCTAssertEqual(WallClock.local(at: 20751 * 86400 + 23 * 3600 + 60), LocalTime(day: 20752, minute: 1))
        }
        inZone("UTC") {
            XCTAssertEqual(WallClock.local(at: 20541 * 86400 + 59 * 60), LocalTime(day: 20541, minute: 59))
        }
    }

    func testTheSystemsClockReadsWithoutPrivileges() {
        // adjtimex with no mode bits only reads: any user may ask (the answer is this machine's).
        let now = WallClock.read()
        XCTAssertTrue((0..<1440).contains(now.time.minute))
        XCTAssertGreaterThan(now.time.day, WallClock.daysFromCivil(year: 2020, month: 1, day: 1))
        print("this machine's wall clock: \(now.time), synchronised: \(now.synchronized)")
    }

    func testTheDailyLimitOverDaylightSavingIsNotResetTwice() {
        // The core sees what the shell converted: an autumn night with the reset at 02:30 resets
        // once, though 02:30 comes twice.
        var settings = Settings()
        settings.parental = ParentalSettings(dailyLimit: 600, resetAt: 150)
        var state = State(settings: settings)
        var times: [LocalTime] = []
        inZone("Europe/Berlin") {
            let base = 20751 * 86400 - 3600  // 23:00 UTC on the 24th: 01:00 CEST on the 25th
            times = stride(from: 0, through: 4 * 3600, by: 600).map { WallClock.local(at: base + $0) }
        }
        _ = reduce(&state, .wallClock(times[0], synchronized: true))
        state.parental.listening.seconds = 300
        var resets = 0
        for time in times.dropFirst() {
            let commands = reduce(&state, .wallClock(time, synchronized: true))
            resets += commands.filter { if case .report(let line) = $0 { return line.hasPrefix("a new listening day") }; return false }.count
        }
        XCTAssertEqual(resets, 1, "\(times)")
        XCTAssertEqual(state.parental.listening, Listening(seconds: 0, day: 20751))
    }

    func testTheCountIsSavedWithThePlaceAndReadBack() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        var snapshot = Snapshot(tracks: [TrackInfo(path: "/m/a.flac")], current: 0, position: 5, phase: .playing,
                                listening: Listening(seconds: 60, day: 20541))
        let hash = try store.save(snapshot)
        XCTAssertEqual(store.load().snapshot, snapshot)
        // While playing only the place is written: the count grows with it.
        snapshot.position = 65
        snapshot.listening = Listening(seconds: 120.5, day: 20541)
        try store.savePlace(snapshot, queueHash: hash)
        XCTAssertEqual(store.load().snapshot, snapshot)
        // A count that is not a number of seconds is not taken.
        snapshot.listening = Listening(seconds: -1, day: 20541)
        try store.save(snapshot)
        let loaded = store.load()
        XCTAssertNil(loaded.snapshot?.listening)
        XCTAssertEqual(loaded.messages.count, 1, "\(loaded.messages)")
    }

    func testStatusJSONShowsWhatApplies() {
        var state = State()
        XCTAssertFalse(PlayerStatusJSON(state).text.contains("parental"), "absent without rules")
        state.settings.parental = ParentalSettings(quietHours: QuietHours(window: DayWindow(from: 1170, to: 420)), dailyLimit: 3600)
        state.parental.listening.seconds = 1000
        XCTAssertTrue(PlayerStatusJSON(state).text.hasSuffix(#""headphones":null,"speed":null,"parental":{"clockSynchronized":false,"quiet":null,"limitLeft":44,"resetAt":"06:00"}}"#))
        state.parental.clock = LocalTime(day: 1, minute: 1200)
        state.parental.clockSynchronized = true
        let status = PlayerStatusJSON(text: PlayerStatusJSON(state).text)
        XCTAssertEqual(status?.parental, PlayerStatusJSON.ParentalStatus(clockSynchronized: true, quiet: true, limitLeft: 44, resetAt: "06:00"))
    }
}

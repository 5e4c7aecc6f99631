// SPDX-License-Identifier: MIT
import JukeboxCore
import XCTest

/// When the shell ticks is the core's (`State.tickInterval`, `saveTickDue`; the loop used to
/// decide it): a table of phase × panel × terminal, and the periodic save's own tick.
final class TickPolicyTests: XCTestCase {
    func testTheTickIntervalByPhasePanelAndTerminal() {
        let narrow = PanelLayout(columns: 4, rows: 2, graphic: false)
        // phase, panel, the status shows the time, the interval
        let rows: [(PlayerPhase, PanelLayout?, Bool, Double?)] = [
            (.playing, nil, false, Settings().placeSaveSpacing), (.playing, nil, true, 0.25), (.playing, .lcd16x2, false, 0.25),
            (.paused, nil, true, nil), (.stopped, nil, true, nil),
            (.paused, .lcd16x2, false, nil), (.paused, narrow, false, 0.25), (.stopped, narrow, true, 0.25),
        ]
        for (phase, panel, showsTime, interval) in rows {
            var settings = Settings()
            settings.display = panel
            var state = State(settings: settings)
            state.queue = [Track(id: 1, info: TrackInfo(path: "/m/x.flac", title: "Short"))]
            state.order = [1]
            state.cursor = 0
            state.phase = phase
            state.now = 100
            XCTAssertEqual(state.tickInterval(showsTime: showsTime), interval, "\(phase) \(String(describing: panel)) \(showsTime)")
        }
    }

    /// Playing with nothing showing the time, the loop wakes for the periodic save alone, unless a
    /// parental rule or a stream needs a look every second (issue 33: wake-ups while playing).
    func testPlayingUnwatchedTicksOnceASecondOnlyForAParentalRuleOrAStream() {
        func state(path: String, parental: ParentalSettings = ParentalSettings()) -> State {
            var settings = Settings()
            settings.parental = parental
            var state = State(settings: settings)
            state.queue = [Track(id: 1, info: TrackInfo(path: path, title: "T"))]
            state.order = [1]
            state.cursor = 0
            state.phase = .playing
            return state
        }
        let spacing = Settings().placeSaveSpacing
        XCTAssertEqual(state(path: "/m/x.flac").tickInterval(showsTime: false), spacing)
        XCTAssertEqual(state(path: "http://radio.example/live").tickInterval(showsTime: false), 1)
        XCTAssertEqual(state(path: "https://radio.example/live").tickInterval(showsTime: false), 1)
        let limit = ParentalSettings(dailyLimit: 3600)
        XCTAssertEqual(state(path: "/m/x.flac", parental: limit).tickInterval(showsTime: false), 1)
        let quiet = ParentalSettings(quietHours: QuietHours(window: DayWindow(from: 20 * 60, to: 7 * 60)))
        XCTAssertEqual(state(path: "/m/x.flac", parental: quiet).tickInterval(showsTime: false), 1)
        let cap = ParentalSettings(caps: [VolumeCap(window: DayWindow(from: 19 * 60, to: 21 * 60), volumeMax: 40)])
        XCTAssertEqual(state(path: "/m/x.flac", parental: cap).tickInterval(showsTime: false), 1)
        XCTAssertEqual(state(path: "/m/x.flac", parental: limit).tickInterval(showsTime: true), 0.25)
        var stopped = state(path: "http://radio.example/live")
        stopped.phase = .paused
        XCTAssertNil(stopped.tickInterval(showsTime: false))
    }

    func testThePeriodicSaveTicksWhenDueUnlessATickLookedSince() {
        var state = State(settings: Settings())
        state.savedAt = 10
        let due = 10 + state.settings.placeSaveSpacing
        XCTAssertNil(state.saveTickDue(lastTick: 11), "stopped: no save tick")
        state.phase = .playing
        XCTAssertEqual(state.saveTickDue(lastTick: 11), due)
        XCTAssertNil(state.saveTickDue(lastTick: due), "a tick has looked since")
        XCTAssertNil(state.saveTickDue(lastTick: due + 1))
    }
}

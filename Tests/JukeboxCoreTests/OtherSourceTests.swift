// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import Foundation
import XCTest

/// Another program playing through the box (AirPlay through shairport-sync, a phone through
/// bluez-alsa): `Event.sourceBegan` and the config's `sources` policy.
final class OtherSourceTests: XCTestCase {
    private func settings(_ named: [String: SourcePolicy], other: SourcePolicy = .resume) -> Settings {
        var s = Settings()
        s.sources = SourceSettings(named: named, other: other)
        return s
    }

    private let airplay = Interruption(id: "source-airplay", reason: "AirPlay: Anna's phone", source: "airplay")

    /// AirPlay begins while track 1 of 2 plays at 31.4 s: the device is released, the status says
    /// who has it, and the grant waits for the release, which gives the heard place (31.6 s).
    private func airplayTakesTrack1(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.sourceTakesTrack1(by: .sourceBegan(name: "airplay", sender: "Anna's phone"), airplay, file: file, line: line)
    }

    func testAirPlayTakesTheDeviceNamesItsSenderAndGivesItBackAtTheHeardPlace() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 31.4, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        airplayTakesTrack1(h)
        XCTAssertEqual(StatusView(h.state).line.contains("AirPlay: Anna's phone"), true, StatusView(h.state).line)
        h.interruptionEndsPlayingTrack1(of: 2, id: "source-airplay", at: 31.6, elapsed: "0:31")
    }

    func testAStayPausedSourceGivesTheDeviceBackPaused() {
        let h = CoreHarness(playing(2, settings: settings(["airplay": .stayPaused])))
        h.heard(1, at: 31.4, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        airplayTakesTrack1(h)
        let shown = status("paused", song: 1, index: 1, of: 2, elapsed: "0:31")
        h.send(.interruptEnded(id: "source-airplay"), {
            $0.phase = .paused
            $0.interruptions = []
            $0.afterInterruption = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = shown
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 31.6, phase: .paused)),
            .render(shown),
        ])
        // A play then starts at the place.
        XCTAssertTrue(h.state.phase == .paused && h.state.position == 31.6)
    }

    func testAForbiddenSourceIsRefusedAndTheDeviceStaysThePlayers() {
        let h = CoreHarness(playing(2, settings: settings([:], other: .forbidden)))
        let refused = "Bluetooth refused: other sources are not allowed on this box"
        let shown = status("playing", song: 1, index: 1, of: 2, message: refused)
        h.send(.sourceBegan(name: "bluetooth", sender: "Dad's phone"), {
            $0.message = refused
            $0.shown = shown
        }, commands: [.render(shown)])
        XCTAssertTrue(h.state.interruptions.isEmpty && h.state.pendingGrants.isEmpty && h.state.releaseToken == nil)
    }

    func testASourceNameThatIsNotOneIsRefused() {
        let h = CoreHarness(playing(2))
        let shown = status("playing", song: 1, index: 1, of: 2, message: "no such source")
        h.send(.sourceBegan(name: "Air\nPlay", sender: ""), { $0.message = "no such source"; $0.shown = shown }, commands: [.render(shown)])
    }

    func testTheSendersNameIsInertAndBoundedWhereverItShows() {
        var s = playing(2)
        let hostile = "Evil\nok ▶ Fake\u{1B}[2J\u{202E}gpj" + String(repeating: "é", count: 200)
        _ = reduce(&s, .sourceBegan(name: "airplay", sender: hostile))
        guard case .interrupted(let reason) = s.phase else { return XCTFail("not interrupted: \(s.phase)") }
        XCTAssertTrue(reason.hasPrefix("AirPlay: Evil\u{FFFD}ok ▶ Fake\u{FFFD}[2J\u{FFFD}gpj"), reason)
        XCTAssertLessThanOrEqual(reason.utf8.count, "AirPlay: ".utf8.count + OtherSource.maxSenderBytes, reason)
        let shownText = [StatusView(s).line, StatusView(s).message ?? ""] + DisplayFrame.make(s, layout: .lcd16x2).rows
        for text in shownText {
            XCTAssertFalse(text.unicodeScalars.contains { DisplayText.isControl($0) }, "a control character shows: \(text.debugDescription)")
        }
    }

    func testADisplayShowsTheSourceAndItsSender() {
        var s = playing(2)
        _ = reduce(&s, .sourceBegan(name: "airplay", sender: "Anna"))
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows, ["AirPlay         ", "Anna            "])
        _ = reduce(&s, .sourceBegan(name: "bluetooth", sender: ""))
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd16x2).rows, ["Bluetooth       ", "playing         "])
    }

    /// A source that starts and stops 100 times in a row (as shairport-sync's hooks would for a
    /// sender that flaps): each start releases and is granted, each stop resumes at the place heard,
    /// whatever the order of the stop and the engine's report of the release; nothing piles up.
    func testASourceThatFlaps100TimesNeverLosesThePlaceAndNeverHangs() {
        var flips = SeededCoin(variable: "JUKEBOX_SOURCES_SEED", test: "OtherSourceTests flapping")
        let seed = flips.seed
        func coin() -> Bool { flips.flip() }
        var s = playing(2)
        var heard = 10.0
        _ = reduce(&s, .heard(playID: 1, seconds: heard))
        var grants = 0
        for cycle in 0..<100 {
            guard let playID = s.loaded?.playID else { return XCTFail("cycle \(cycle): nothing playing: \(s.phase)") }
            let begin = reduce(&s, .sourceBegan(name: "airplay", sender: "flapper"))
            guard let token = begin.compactMap({ if case .releaseDevice(let t) = $0 { return t } else { return nil } }).first else {
                return XCTFail("cycle \(cycle): no release asked: \(begin)")
            }
            heard += 0.05
            let released = PlayPosition(playID: playID, seconds: heard)
            if coin() {
                // The usual order: released (granted), then the source ends.
                let r = reduce(&s, .deviceReleased(token: token, heard: released))
                grants += r.filter { $0 == .grant(id: "source-airplay") }.count
                let end = reduce(&s, .interruptEnded(id: "source-airplay"))
                XCTAssertEqual(startedAt(end), heard, "cycle \(cycle) (seed \(seed)): did not resume at the place heard: \(end)")
            } else {
                // Its holder died before the release was reported: the source ends first, the
                // player plays on from the last place it knew, and the late report changes nothing.
                let before = s.position
                let end = reduce(&s, .interruptEnded(id: "source-airplay"))
                XCTAssertEqual(startedAt(end), before, "cycle \(cycle) (seed \(seed)): \(end)")
                _ = reduce(&s, .deviceReleased(token: token, heard: released))
                grants += 1
                heard = before
            }
            XCTAssertEqual(s.phase, .playing, "cycle \(cycle) (seed \(seed))")
            XCTAssertTrue(s.interruptions.isEmpty && s.pendingGrants.isEmpty && s.releaseToken == nil, "cycle \(cycle) (seed \(seed)): \(s.interruptions) \(s.pendingGrants)")
            guard let again = s.loaded?.playID else { return XCTFail("cycle \(cycle): not restarted") }
            _ = reduce(&s, .trackStarted(playID: again))
            _ = reduce(&s, .heard(playID: again, seconds: heard))
        }
        XCTAssertEqual(grants, 100)
        XCTAssertEqual(s.position, heard, accuracy: 1e-9, "seed \(seed)")
        XCTAssertEqual(s.currentTrack?.id, 1, "still the same track (seed \(seed))")
    }

    func testTheControlLanguageParsesSources() {
        let parse = { ControlCommand.parse($0, seed: 1) }
        XCTAssertEqual(parse("source begin airplay Anna's  phone"), .success(.sourceBegin(name: "airplay", sender: "Anna's phone")))
        XCTAssertEqual(parse("source begin AirPlay"), .success(.sourceBegin(name: "airplay", sender: "")))
        XCTAssertEqual(parse("source end bluetooth"), .success(.sourceEnd(name: "bluetooth")))
        for bad in ["source", "source begin", "source end airplay now", "source begin air/play", "source begin " + String(repeating: "a", count: 33), "source stop airplay"] {
            guard case .failure(let e) = parse(bad) else { return XCTFail("\(bad) parsed") }
            XCTAssertTrue(e.message.hasPrefix("usage: source begin NAME"), "\(bad): \(e.message)")
        }
    }
}

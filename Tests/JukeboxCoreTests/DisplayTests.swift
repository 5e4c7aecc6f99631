// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// What the panel shows, decided in the core, with a manual clock.
final class DisplayTests: XCTestCase {
    func panel(_ layout: PanelLayout, tracks: [TrackInfo] = [info(1), info(2)]) -> CoreHarness {
        var settings = Settings()
        settings.display = layout
        var s = State(settings: settings)
        _ = reduce(&s, .add(tracks))
        return CoreHarness(s)
    }

    func shown(_ h: CoreHarness) -> [String] { h.state.shownFrame?.rows ?? [] }

    func testNowPlayingOnA16x2() {
        let h = panel(.lcd16x2)
        h.prepare(.play)
        h.prepare(.heard(playID: 1, seconds: 83))
        XCTAssertEqual(shown(h), ["Song 1          ", "▶ 1:23/1:40     "])
        h.prepare(.setRepeat(.all))
        h.prepare(.toggleShuffle(seed: 1))
        XCTAssertEqual(shown(h)[1], "▶ 1:23/1:40   🔀🔁")
        h.prepare(.pause)
        XCTAssertEqual(shown(h)[1], "⏸ 1:23/1:40   🔀🔁")
    }

    func testALongTitleRestsThenScrollsAsALoop() {
        let long = TrackInfo(path: "/m/x.flac", title: "A Very Long Song Title Indeed", duration: 3600 + 61)
        let h = panel(.lcd16x2, tracks: [long])
        h.prepare(.tick(now: 100))
        h.prepare(.play)
        XCTAssertEqual(shown(h)[0], "A Very Long Song")
        XCTAssertEqual(shown(h)[1], "▶ 0:00/1:01:01  ", "h:mm:ss past an hour")
        h.prepare(.tick(now: 101.4))
        XCTAssertEqual(shown(h)[0], "A Very Long Song", "rests first")
        h.prepare(.tick(now: 102.5))  // 1 s of scrolling at 3 chars/s
        XCTAssertEqual(shown(h)[0], "ery Long Song Ti")
        h.prepare(.tick(now: 100 + 1.5 + 32.0 / 3))  // one full loop (29 chars + 3 of gap)
        XCTAssertEqual(shown(h)[0], "A Very Long Song")
    }

    func testTheVolumeOverlayShowsForAMomentAfterAChange() {
        let h = panel(.lcd16x2)
        h.prepare(.play)
        h.prepare(.tick(now: 10))
        let cmds = h.prepare(.setVolume(60))
        XCTAssertEqual(shown(h), ["Volume          ", "███████      60"].map { $0.padding(16) })
        XCTAssertTrue(cmds.contains(.show(h.state.shownFrame!)))
        h.prepare(.tick(now: 11.9))
        XCTAssertEqual(shown(h)[0].trimmed, "Volume")
        h.prepare(.tick(now: 12.1))
        XCTAssertEqual(shown(h)[0].trimmed, "Song 1")
        // At the limit a press still shows the overlay (it visibly did something).
        h.prepare(.setVolume(100))
        h.prepare(.tick(now: 20))
        h.prepare(.changeVolume(by: 5))
        XCTAssertEqual(shown(h)[0].trimmed, "Volume")
    }

    func testWaitingInterruptedAndEmptyScreens() {
        let h = panel(.lcd16x2)
        h.prepare(.play)
        h.prepare(.deviceUnavailable(reason: "busy", problem: .busy))
        XCTAssertEqual(shown(h), ["Waiting: audio  ", "busy            "])
        let m = panel(.lcd20x4)
        m.prepare(.musicMissing("/srv/usb"))
        m.prepare(.play)
        XCTAssertEqual(shown(m), ["Waiting for         ", "music               ", "/srv/usb is not ther", "                    "])
        let i = panel(.lcd20x4)
        i.prepare(.play)
        i.prepare(.interruptBegan(id: "manual", reason: "doorbell"))
        XCTAssertEqual(shown(i), ["Interrupted         ", "doorbell            ", "                    ", "                    "])
        let e = panel(.lcd16x2, tracks: [])
        e.prepare(.tick(now: 1))
        XCTAssertEqual(shown(e), ["jukebox         ", "queue empty     "])
    }

    func testASkippedFileIsShownForAWhile() {
        let h = panel(.lcd16x2)
        h.prepare(.tick(now: 50))
        h.prepare(.play)
        h.prepare(.trackFailed(playID: 1, reason: "bad"))
        XCTAssertEqual(shown(h)[1], "skipped 1.flac: ")
        h.prepare(.tick(now: 57))
        XCTAssertEqual(shown(h)[1].hasPrefix("▶ 0:00/1:40"), true)
    }

    func testTheOLEDShowsArtistProgressAndVolume() {
        let h = panel(.oled128x64)
        h.prepare(.play)
        h.prepare(.heard(playID: 1, seconds: 25))
        let frame = h.state.shownFrame!
        XCTAssertEqual(frame.rows.count, 8)
        XCTAssertTrue(frame.rows.allSatisfy { $0.count == 21 })
        XCTAssertEqual(frame.rows[0].trimmed, "Song 1")
        XCTAssertEqual(frame.rows[1].trimmed, "Band")
        XCTAssertEqual(frame.progress, 0.25)
        XCTAssertEqual(frame.progressRow, 5)
        XCTAssertEqual(frame.rows[7], "▶ 0:25/1:40       100")
    }

    func testTheSplashShowsFirst() {
        var settings = Settings()
        settings.display = .lcd16x2
        var s = State(settings: settings)
        s.splashUntil = 1.5
        let h = CoreHarness(s)
        h.prepare(.tick(now: 0.5))
        XCTAssertEqual(shown(h), ["jukebox         ", "starting…       "])
        h.prepare(.tick(now: 2))
        XCTAssertEqual(shown(h)[1].trimmed, "queue empty")
    }

    func testNoPanelMeansNoFramesAndNoPanelBookkeeping() {
        let h = CoreHarness(playing(2))
        let cmds = h.prepare(.setVolume(40))
        XCTAssertFalse(cmds.contains { if case .show = $0 { return true } else { return false } })
        XCTAssertEqual(h.state.volumeShownUntil, 0)
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    var trimmed: String { String(reversed().drop { $0 == " " }.reversed()) }
}

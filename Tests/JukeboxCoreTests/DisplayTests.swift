// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// What the panel shows, decided in the core, with a manual clock.
final class DisplayTests: XCTestCase {
    /// A harness for a player with this panel, after `tracks` were added: stopped, showing `rows`.
    func panel(_ layout: PanelLayout, tracks: [TrackInfo] = [info(1), info(2)], showing rows: [String],
               file: StaticString = #filePath, line: UInt = #line) -> CoreHarness {
        var settings = Settings()
        settings.display = layout
        let h = CoreHarness(State(settings: settings))
        let n = tracks.count
        h.send(.add(tracks), file: file, line: line, {
            if n > 0 {
                $0.queue = tracks.enumerated().map { Track(id: UInt64($0.offset + 1), info: $0.element) }
                $0.order = (1...n).map { UInt64($0) }
                $0.nextTrackID = UInt64(n + 1)
                $0.queueRevision = 1
                $0.savedMark = mark(revision: 1, current: nil, phase: .stopped)
            }
            $0.shownFrame = DisplayFrame(rows: rows)
            $0.shown = status("stopped", of: n)
        }, commands: (n > 0 ? [.persist(Snapshot(tracks: tracks))] : []) + [
            .render(status("stopped", of: n)), .show(DisplayFrame(rows: rows)),
        ])
        return h
    }

    /// A 16×2 panel with `info(1)`, `info(2)` queued, after `play`: song 1 at 0:00 (the title's
    /// scrolling starts now).
    func playingOnA16x2(file: StaticString = #filePath, line: UInt = #line) -> CoreHarness {
        let h = panel(.lcd16x2, showing: ["Song 1          ", "■ --:--/--:--   "], file: file, line: line)
        let frame = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])
        h.playFromStopped(2, also: { $0.shownFrame = frame; $0.titleShown = "Song 1" },
                          after: [.show(frame)], file: file, line: line)
        return h
    }

    func shown(_ h: CoreHarness) -> [String] { h.state.shownFrame?.rows ?? [] }

    func testNowPlayingOnA16x2() {
        let h = playingOnA16x2()
        h.send(.heard(playID: 1, seconds: 83), {
            $0.position = 83
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40     "])
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:23")
        }, commands: [
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:23")),
            .show(DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40     "])),
        ])
        XCTAssertEqual(shown(h), ["Song 1          ", "▶ 1:23/1:40     "])
        h.send(.setRepeat(.all), {
            $0.repeatMode = .all
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40    🔁"])
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, repeat: .all)
            $0.savedPosition = 83
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:23", repeat: .all)
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: 83, phase: .playing, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:23", repeat: .all)),
            .show(DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40    🔁"])),
        ])
        h.send(.toggleShuffle(seed: 1), {
            $0.shuffle = true
            $0.shuffleSeed = 1
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40   🔀🔁"])
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing, shuffle: true, repeat: .all)
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "1:23", shuffle: true, repeat: .all)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2)], order: [0, 1], current: 0, position: 83, phase: .playing, shuffle: true, shuffleSeed: 1, repeatMode: .all)),
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "1:23", shuffle: true, repeat: .all)),
            .show(DisplayFrame(rows: ["Song 1          ", "▶ 1:23/1:40   🔀🔁"])),
        ])
        XCTAssertEqual(shown(h)[1], "▶ 1:23/1:40   🔀🔁")
        h.send(.pause, {
            $0.phase = .paused
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "⏸ 1:23/1:40   🔀🔁"])
            $0.savedMark = mark(revision: 2, current: 1, phase: .paused, shuffle: true, repeat: .all)
            $0.shown = status("paused", song: 1, index: 1, of: 2, elapsed: "1:23", shuffle: true, repeat: .all)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], order: [0, 1], current: 0, position: 83, phase: .paused, shuffle: true, shuffleSeed: 1, repeatMode: .all)),
            .render(status("paused", song: 1, index: 1, of: 2, elapsed: "1:23", shuffle: true, repeat: .all)),
            .show(DisplayFrame(rows: ["Song 1          ", "⏸ 1:23/1:40   🔀🔁"])),
        ])
        XCTAssertEqual(shown(h)[1], "⏸ 1:23/1:40   🔀🔁")
    }

    func testALongTitleRestsThenScrollsAsALoop() {
        let long = TrackInfo(path: "/m/x.flac", title: "A Very Long Song Title Indeed", duration: 3600 + 61)
        let h = panel(.lcd16x2, tracks: [long], showing: ["A Very Long Song", "■ --:--/--:--   "])
        h.send(.tick(now: 100), {
            $0.shownFrame = DisplayFrame(rows: ["Long Song Title ", "■ --:--/--:--   "])
            $0.now = 100
        }, commands: [
            .show(DisplayFrame(rows: ["Long Song Title ", "■ --:--/--:--   "])),
        ])
        h.send(.play, {
            $0.cursor = 0
            $0.phase = .playing
            $0.shownFrame = DisplayFrame(rows: ["A Very Long Song", "▶ 0:00/1:01:01  "])
            $0.titleShown = "A Very Long Song Title Indeed"
            $0.titleSince = 100
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedAt = 100
            $0.shown = status("playing", title: "A Very Long Song Title Indeed", elapsed: "0:00", duration: "1:01:01", index: 1, of: 1)
        }, commands: [
            .startTrack(playID: 1, path: "/m/x.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [TrackInfo(path: "/m/x.flac", title: "A Very Long Song Title Indeed", artist: nil, album: nil, trackNumber: nil, discNumber: nil, duration: 3661)], current: 0, phase: .playing)),
            .render(status("playing", title: "A Very Long Song Title Indeed", elapsed: "0:00", duration: "1:01:01", index: 1, of: 1)),
            .show(DisplayFrame(rows: ["A Very Long Song", "▶ 0:00/1:01:01  "])),
        ])
        XCTAssertEqual(shown(h)[0], "A Very Long Song")
        XCTAssertEqual(shown(h)[1], "▶ 0:00/1:01:01  ", "h:mm:ss past an hour")
        h.send(.tick(now: 101.4), {
            $0.now = 101.4
        }, commands: [])
        XCTAssertEqual(shown(h)[0], "A Very Long Song", "rests first")
        // 1 s of scrolling at 3 chars/s
        h.send(.tick(now: 102.5), {
            $0.shownFrame = DisplayFrame(rows: ["ery Long Song Ti", "▶ 0:00/1:01:01  "])
            $0.now = 102.5
        }, commands: [
            .show(DisplayFrame(rows: ["ery Long Song Ti", "▶ 0:00/1:01:01  "])),
        ])
        XCTAssertEqual(shown(h)[0], "ery Long Song Ti")
        // one full loop (29 chars + 3 of gap)
        h.send(.tick(now: 100 + 1.5 + 32.0 / 3), {
            $0.shownFrame = DisplayFrame(rows: ["A Very Long Song", "▶ 0:00/1:01:01  "])
            $0.now = 112.16666666666667
        }, commands: [
            .show(DisplayFrame(rows: ["A Very Long Song", "▶ 0:00/1:01:01  "])),
        ])
        XCTAssertEqual(shown(h)[0], "A Very Long Song")
    }

    func testTheVolumeOverlayShowsForAMomentAfterAChange() {
        let h = playingOnA16x2()
        h.send(.tick(now: 10), {
            $0.now = 10
        }, commands: [])
        h.send(.setVolume(60), {
            $0.volume = 60
            $0.shownFrame = DisplayFrame(rows: ["Volume          ", "███████      60 "])
            $0.volumeShownUntil = 12
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 60)
            $0.savedAt = 10
            $0.shown = status("playing", song: 1, index: 1, of: 2, volume: 60)
        }, commands: [
            .setVolume(60),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing, volume: 60)),
            .render(status("playing", song: 1, index: 1, of: 2, volume: 60)),
            .show(DisplayFrame(rows: ["Volume          ", "███████      60 "])),
        ])
        XCTAssertEqual(shown(h), ["Volume          ", "███████      60"].map { $0.padding(16) })
        h.send(.tick(now: 11.9), {
            $0.now = 11.9
        }, commands: [])
        XCTAssertEqual(shown(h)[0].trimmed, "Volume")
        h.send(.tick(now: 12.1), {
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])
            $0.now = 12.1
        }, commands: [
            .show(DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])),
        ])
        XCTAssertEqual(shown(h)[0].trimmed, "Song 1")
        // At the limit a press still shows the overlay (it visibly did something).
        h.send(.setVolume(100), {
            $0.volume = 100
            $0.shownFrame = DisplayFrame(rows: ["Volume          ", "████████████100 "])
            $0.volumeShownUntil = 14.1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedAt = 12.1
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .setVolume(100),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
            .show(DisplayFrame(rows: ["Volume          ", "████████████100 "])),
        ])
        h.send(.tick(now: 20), {
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])
            $0.now = 20
        }, commands: [
            .show(DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])),
        ])
        h.send(.changeVolume(by: 5), {
            $0.shownFrame = DisplayFrame(rows: ["Volume          ", "████████████100 "])
            $0.volumeShownUntil = 22
        }, commands: [
            .show(DisplayFrame(rows: ["Volume          ", "████████████100 "])),
        ])
        XCTAssertEqual(shown(h)[0].trimmed, "Volume")
    }

    func testWaitingInterruptedAndEmptyScreens() {
        let h = playingOnA16x2()
        let waiting = DisplayFrame(rows: ["Waiting: audio  ", "busy            "])
        h.deviceBusyOnTrack1(of: 2, also: { $0.shownFrame = waiting }, after: [.show(waiting)])
        XCTAssertEqual(shown(h), ["Waiting: audio  ", "busy            "])
        let m = panel(.lcd20x4, showing: ["Song 1              ", "                    ", "                    ", "■ --:--/--:--       "])
        m.send(.musicMissing("/srv/usb"), {
            $0.musicMissing = "/srv/usb"
            $0.shown = status("stopped", of: 2, message: "waiting for music: /srv/usb is not there")
        }, commands: [
            .report("waiting for music: /srv/usb is not there"),
            .render(status("stopped", of: 2, message: "waiting for music: /srv/usb is not there")),
        ])
        m.send(.play, {
            $0.cursor = 0
            $0.phase = .waitingForMusic
            $0.shownFrame = DisplayFrame(rows: ["Waiting for         ", "music               ", "/srv/usb is not ther", "                    "])
            $0.titleShown = "Song 1"
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("waiting", song: 1, index: 1, of: 2, message: "waiting for music: /srv/usb is not there")
        }, commands: [
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("waiting", song: 1, index: 1, of: 2, message: "waiting for music: /srv/usb is not there")),
            .show(DisplayFrame(rows: ["Waiting for         ", "music               ", "/srv/usb is not ther", "                    "])),
        ])
        XCTAssertEqual(shown(m), ["Waiting for         ", "music               ", "/srv/usb is not ther", "                    "])
        let i = panel(.lcd20x4, showing: ["Song 1              ", "                    ", "                    ", "■ --:--/--:--       "])
        let frame = DisplayFrame(rows: ["Song 1              ", "Band                ", "                    ", "▶ 0:00/1:40         "])
        i.playFromStopped(2, also: { $0.shownFrame = frame; $0.titleShown = "Song 1" },
                          after: [.show(frame)])
        let interrupted = DisplayFrame(rows: ["Interrupted         ", "doorbell            ", "                    ", "                    "])
        i.interruptTrack1(of: 2, id: "manual", reason: "doorbell", also: { $0.shownFrame = interrupted }, then: [.show(interrupted)])
        XCTAssertEqual(shown(i), ["Interrupted         ", "doorbell            ", "                    ", "                    "])
        let e = panel(.lcd16x2, tracks: [], showing: ["jukebox         ", "queue empty     "])
        e.send(.tick(now: 1), {
            $0.now = 1
        }, commands: [])
        XCTAssertEqual(shown(e), ["jukebox         ", "queue empty     "])
    }

    func testASkippedFileIsShownForAWhile() {
        let h = panel(.lcd16x2, showing: ["Song 1          ", "■ --:--/--:--   "])
        h.send(.tick(now: 50), {
            $0.now = 50
        }, commands: [])
        let playing = DisplayFrame(rows: ["Song 1          ", "▶ 0:00/1:40     "])
        h.playFromStopped(2, also: {
            $0.shownFrame = playing
            $0.titleShown = "Song 1"
            $0.titleSince = 50
            $0.savedAt = 50
        }, after: [.show(playing)])
        let skipped = DisplayFrame(rows: ["Song 2          ", "skipped 1.flac: "])
        h.track1FailsAndTrack2Plays(of: 2, reason: "bad", also: {
            $0.shownFrame = skipped
            $0.messageUntil = 56
            $0.messageSince = 50
            $0.titleShown = "Song 2"
            $0.messageShown = "skipped 1.flac: bad"
        }, after: [.show(skipped)])
        XCTAssertEqual(shown(h)[1], "skipped 1.flac: ")
        h.send(.tick(now: 57), {
            $0.shownFrame = DisplayFrame(rows: ["Song 2          ", "▶ 0:00/1:40     "])
            $0.now = 57
        }, commands: [
            .show(DisplayFrame(rows: ["Song 2          ", "▶ 0:00/1:40     "])),
        ])
        XCTAssertEqual(shown(h)[1].hasPrefix("▶ 0:00/1:40"), true)
    }

    func testTheOLEDShowsArtistProgressAndVolume() {
        let h = panel(.oled128x64, showing: ["Song 1               ", "                     ", "                     ", "                     ",
                                    "                     ", "                     ", "                     ", "■ --:--/--:--     100"])
        let atStart = DisplayFrame(rows: ["Song 1               ", "Band                 ", "                     ", "                     ", "                     ", "                     ", "                     ", "▶ 0:00/1:40       100"], progress: 0, progressRow: 5)
        h.playFromStopped(2, also: { $0.shownFrame = atStart; $0.titleShown = "Song 1" },
                          after: [.show(atStart)])
        h.send(.heard(playID: 1, seconds: 25), {
            $0.position = 25
            $0.shownFrame = DisplayFrame(rows: ["Song 1               ", "Band                 ", "                     ", "                     ", "                     ", "                     ", "                     ", "▶ 0:25/1:40       100"], progress: 0.25, progressRow: 5)
            $0.shown = status("playing", song: 1, index: 1, of: 2, elapsed: "0:25")
        }, commands: [
            .render(status("playing", song: 1, index: 1, of: 2, elapsed: "0:25")),
            .show(DisplayFrame(rows: ["Song 1               ", "Band                 ", "                     ", "                     ", "                     ", "                     ", "                     ", "▶ 0:25/1:40       100"], progress: 0.25, progressRow: 5)),
        ])
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
        h.send(.tick(now: 0.5), {
            $0.shownFrame = DisplayFrame(rows: ["jukebox         ", "starting…       "])
            $0.now = 0.5
            $0.shown = status("stopped")
        }, commands: [
            .render(status("stopped")),
            .show(DisplayFrame(rows: ["jukebox         ", "starting…       "])),
        ])
        XCTAssertEqual(shown(h), ["jukebox         ", "starting…       "])
        h.send(.tick(now: 2), {
            $0.shownFrame = DisplayFrame(rows: ["jukebox         ", "queue empty     "])
            $0.now = 2
        }, commands: [
            .show(DisplayFrame(rows: ["jukebox         ", "queue empty     "])),
        ])
        XCTAssertEqual(shown(h)[1].trimmed, "queue empty")
    }

    /// What makes a frame change with time alone: the shell wakes for the panel only then.
    func testAFrameMovesOnlyWhileSomethingOnItDependsOnTheTime() {
        var state = State(settings: Settings())
        state.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: TrackInfo(path: "/m/x.flac", title: "A Very Long Song Title Indeed"))]
        state.order = [1, 2]
        state.cursor = 0
        state.phase = .paused
        state.now = 100
        XCTAssertFalse(DisplayFrame.moves(state, layout: .lcd16x2), "paused, every row fits")
        XCTAssertTrue(DisplayFrame.moves(state, layout: PanelLayout(columns: 4, rows: 2, graphic: false)), "the title scrolls on a narrow panel")
        state.splashUntil = 101
        XCTAssertTrue(DisplayFrame.moves(state, layout: .lcd16x2), "the splash goes at its time")
        state.splashUntil = 0
        state.volumeShownUntil = 102
        XCTAssertTrue(DisplayFrame.moves(state, layout: .lcd16x2), "the volume overlay goes at its time")
        state.volumeShownUntil = 0
        state.message = "skipped"
        state.messageUntil = 106
        XCTAssertTrue(DisplayFrame.moves(state, layout: .lcd16x2), "a message goes at its time")
        state.now = 106
        XCTAssertFalse(DisplayFrame.moves(state, layout: .lcd16x2), "the message's time is up")
        state.cursor = 1
        XCTAssertTrue(DisplayFrame.moves(state, layout: .lcd16x2), "a long title scrolls even while paused")
    }

    func testNoPanelMeansNoFramesAndNoPanelBookkeeping() {
        let h = CoreHarness(playing(2))
        h.setVolume(40, playingTrack1Of: 2)
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    var trimmed: String { String(reversed().drop { $0 == " " }.reversed()) }
}

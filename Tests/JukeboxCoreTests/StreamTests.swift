// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// HTTP(S) streams in the core: what the stream adapter reports becomes the status (station and
/// title, buffering, reconnecting), a stream lost too long is skipped, seeks are refused and a
/// pause disconnects.
final class StreamTests: XCTestCase {
    private let url = "http://radio.example/live.mp3"

    /// `playing(2)` with entry 1 a stream: the engine holds play 1, its successor (file 2) is play 2.
    private func streaming(settings: Settings = Settings()) -> State {
        var s = playing(2, settings: settings)
        s.queue[0].info = TrackInfo(path: url, title: "radio.example/live.mp3")
        s.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2)
        return s
    }

    func testBufferingThenStationAndTitleAreShown() {
        let h = CoreHarness(streaming())
        let filling = StreamStatus(bufferedPercent: 40)
        h.streamReports(filling, shows: status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2,
            message: "buffering 40 %"))
        let onAir = StreamStatus(station: "Test FM", title: "Artist - Song", bufferedPercent: 100)
        h.streamReports(onAir, shows: status("playing", title: "Artist - Song", artist: "Test FM", elapsed: "0:00", index: 1, of: 2,
            message: "buffering 100 %"))
        h.send(.trackStarted(playID: 1), {
            $0.streamStarted = true
            $0.shown = status("playing", title: "Artist - Song", artist: "Test FM", elapsed: "0:00", index: 1, of: 2)
        }, commands: [
            .render(status("playing", title: "Artist - Song", artist: "Test FM", elapsed: "0:00", index: 1, of: 2)),
        ])
        // A report about another play (one replaced meanwhile) changes nothing.
        h.send(.streamStatus(playID: 9, StreamStatus(title: "Old")), commands: [])
    }

    func testALostStreamSaysReconnectingKeepsPlayingAndIsSkippedAfterTheGiveUpTime() {
        var settings = Settings()
        settings.streamGiveUp = 120
        var start = streaming(settings: settings)
        start.streamStarted = true
        let h = CoreHarness(start)
        let lost = StreamStatus(station: "Test FM", bufferedPercent: 0, reconnectingFor: 3, lastError: "Connection reset")
        h.send(.streamStatus(playID: 1, lost), {
            $0.stream = PlayStreamStatus(playID: 1, status: lost)
            $0.shown = status("playing", title: "radio.example/live.mp3", artist: "Test FM", elapsed: "0:00", index: 1, of: 2,
                              message: "reconnecting (Connection reset)")
        }, commands: [
            .report("stream lost (Connection reset): reconnecting"),
            .render(status("playing", title: "radio.example/live.mp3", artist: "Test FM", elapsed: "0:00", index: 1, of: 2,
                           message: "reconnecting (Connection reset)")),
        ])
        XCTAssertEqual(h.state.phase, .playing, "the phase is kept while reconnecting")
        // Still lost: said once.
        let later = StreamStatus(station: "Test FM", bufferedPercent: 0, reconnectingFor: 10, lastError: "Connection reset")
        h.send(.streamStatus(playID: 1, later), { $0.stream = PlayStreamStatus(playID: 1, status: later) }, commands: [])
        let tooLong = StreamStatus(station: "Test FM", bufferedPercent: 0, reconnectingFor: 120.2, lastError: "Connection refused")
        h.send(.streamStatus(playID: 1, tooLong), {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.stream = nil
            $0.streamStarted = false
            $0.failuresInARow = 1
            $0.cursor = 1
            $0.nextPlayID = 4
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = nil
            $0.message = "skipped http://radio.example/live.mp3: no connection for 120 s (Connection refused)"
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: 2,
                              message: "skipped http://radio.example/live.mp3: no connection for 120 s (Connection refused)")
        }, commands: [
            .report("skipped http://radio.example/live.mp3: no connection for 120 s (Connection refused)"),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false),
            .persistPlace(Snapshot(tracks: [TrackInfo(path: url, title: "radio.example/live.mp3"), info(2)], current: 1,
                                   phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: 2,
                           message: "skipped http://radio.example/live.mp3: no connection for 120 s (Connection refused)")),
        ])
    }

    func testAReconnectionIsLoggedAndTheMessageGoes() {
        var start = streaming()
        start.streamStarted = true
        let lost = StreamStatus(station: "Test FM", bufferedPercent: 0, reconnectingFor: 2.5, lastError: "Connection reset")
        start.stream = PlayStreamStatus(playID: 1, status: lost)
        start.shown = status("playing", title: "radio.example/live.mp3", artist: "Test FM", elapsed: "0:00", index: 1, of: 2,
            message: "reconnecting (Connection reset)")
        let h = CoreHarness(start)
        let back = StreamStatus(station: "Test FM", title: "Song 2", bufferedPercent: 30, lastError: "Connection reset",
                                reconnects: 1)
        h.send(.streamStatus(playID: 1, back), {
            $0.stream = PlayStreamStatus(playID: 1, status: back)
            $0.shown = status("playing", title: "Song 2", artist: "Test FM", elapsed: "0:00", index: 1, of: 2)
        }, commands: [
            .report("stream reconnected (1 since it started; last lost: Connection reset)"),
            .render(status("playing", title: "Song 2", artist: "Test FM", elapsed: "0:00", index: 1, of: 2)),
        ])
    }

    func testAStreamsNotesAreLoggedOnce() {
        var start = streaming()
        start.streamStarted = true
        let first = StreamStatus(station: "Test FM", bufferedPercent: 100, notes: ["HLS: variant 128 kbit/s"], noteCount: 1)
        start.stream = PlayStreamStatus(playID: 1, status: first)
        start.shown = status("playing", title: "radio.example/live.mp3", artist: "Test FM", elapsed: "0:00", index: 1, of: 2)
        let h = CoreHarness(start)
        // Two more said since (the oldest kept fell out of the adapter's list): each logged once, in order.
        let later = StreamStatus(station: "Test FM", bufferedPercent: 100,
                                 notes: ["HLS: variant 128 kbit/s", "segment 4 skipped: HTTP 404", "segment 5 skipped: timed out"],
                                 noteCount: 3)
        h.send(.streamStatus(playID: 1, later), {
            $0.stream = PlayStreamStatus(playID: 1, status: later)
        }, commands: [
            .report("stream: segment 4 skipped: HTTP 404"),
            .report("stream: segment 5 skipped: timed out"),
        ])
    }

    func testRunningDryWhilePlayingShowsBufferingAgain() {
        var start = streaming()
        start.streamStarted = true
        let h = CoreHarness(start)
        let dry = StreamStatus(station: "Test FM", bufferedPercent: 35, rebuffering: true)
        h.streamReports(dry, shows: status("playing", title: "radio.example/live.mp3", artist: "Test FM", elapsed: "0:00", index: 1, of: 2,
            message: "buffering 35 %"))
    }

    /// A live stream refuses seeks; so does one while another entry's stream is the one that said
    /// it is on demand.
    func testSeekIsRefusedOnAStream() {
        var another = streaming()
        another.onDemandStream = OnDemandStream(trackID: 2, duration: 600)
        for start in [streaming(), another] {
            let h = CoreHarness(start)
            h.send(.seekBy(10), {
                $0.message = "cannot seek in a live stream"
                $0.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2,
                                  message: "cannot seek in a live stream")
            }, commands: [
                .render(status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2,
                               message: "cannot seek in a live stream")),
            ])
        }
    }

    func testPauseDisconnectsAndPlayConnectsAgainLive() {
        var start = streaming()
        start.position = 42
        start.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:42", index: 1, of: 2)
        let h = CoreHarness(start)
        h.send(.pause, {
            $0.phase = .paused
            $0.position = 0
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [TrackInfo(path: url, title: "radio.example/live.mp3"), info(2)], current: 0,
                                   phase: .paused)),
            .render(status("paused", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2)),
        ])
        h.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 3, path: url, at: 0, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [TrackInfo(path: url, title: "radio.example/live.mp3"), info(2)], current: 0,
                                   phase: .playing)),
            .render(status("playing", title: "radio.example/live.mp3", elapsed: "0:00", index: 1, of: 2)),
        ])
    }

    /// The adapter reports the stream on demand (an HLS playlist with ENDLIST) and its length: the
    /// length is shown, a seek goes to the engine clamped to it, a pause disconnects and keeps
    /// the place, and play starts there.
    func testAnOnDemandStreamSeeksAndResumesAtThePlace() {
        var start = streaming()
        start.streamStarted = true
        let h = CoreHarness(start)
        let vod = StreamStatus(bufferedPercent: 100, onDemandDuration: 600)
        let track = TrackInfo(path: url, title: "radio.example/live.mp3")
        h.send(.streamStatus(playID: 1, vod), {
            $0.stream = PlayStreamStatus(playID: 1, status: vod)
            $0.onDemandStream = OnDemandStream(trackID: 1, duration: 600)
            $0.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:00", duration: "10:00", index: 1, of: 2)
        }, commands: [
            .render(status("playing", title: "radio.example/live.mp3", elapsed: "0:00", duration: "10:00", index: 1, of: 2)),
        ])
        // A seek goes to the engine as for a file, saved at once; past the end: at the end.
        for (event, place, elapsed) in [(Event.seekBy(90), 90.0, "1:30"), (.seek(to: 700), 600, "10:00"), (.seek(to: 42), 42, "0:42")] {
            let shown = status("playing", title: "radio.example/live.mp3", elapsed: elapsed, duration: "10:00", index: 1, of: 2)
            h.send(event, {
                $0.position = place
                $0.savedPosition = place
                $0.shown = shown
            }, commands: [
                .seekOutput(to: place),
                .persistPlace(Snapshot(tracks: [track, info(2)], current: 0, position: place, phase: .playing)),
                .render(shown),
            ])
        }
        h.send(.pause, {
            $0.phase = .paused
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused)
            $0.shown = status("paused", title: "radio.example/live.mp3", elapsed: "0:42", duration: "10:00", index: 1, of: 2)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: [track, info(2)], current: 0, position: 42, phase: .paused)),
            .render(status("paused", title: "radio.example/live.mp3", elapsed: "0:42", duration: "10:00", index: 1, of: 2)),
        ])
        h.send(.play, {
            $0.phase = .playing
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.streamStarted = false
            $0.stream = nil
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:42", duration: "10:00", index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 3, path: url, at: 42, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [track, info(2)], current: 0, position: 42, phase: .playing)),
            .render(status("playing", title: "radio.example/live.mp3", elapsed: "0:42", duration: "10:00", index: 1, of: 2)),
        ])
    }

    /// A restart resumes a stream as saved, at its place: the engine opens an on-demand one there
    /// and joins a live one on air (HLSStreamTests, `DecodeJob.startFrame`).
    func testARestartStartsAStreamAtItsSavedPlace() {
        let track = TrackInfo(path: url, title: "radio.example/live.mp3")
        let snap = Snapshot(tracks: [track], current: 0, position: 42, phase: .playing)
        let h = CoreHarness()
        let shown = status("playing", title: "radio.example/live.mp3", elapsed: "0:42", index: 1, of: 1)
        h.send(.restore(snap), {
            $0.queue = [Track(id: 1, info: track)]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .playing
            $0.position = 42
            $0.nextTrackID = 2
            $0.nextPlayID = 2
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.savedPosition = 42
            $0.shown = shown
        }, commands: [
            .setVolume(100),
            .startTrack(playID: 1, path: url, at: 42, paused: false),
            .render(shown),
        ])
    }

    func testThePanelShowsStationTitleBufferingAndNoLength() {
        var s = streaming()
        s.stream = PlayStreamStatus(playID: 1, status: StreamStatus(station: "Test FM", title: "Artist - Song",
                                                                      bufferedPercent: 45))
        // Title, station (as the artist), album (none), and the message in the time's row.
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd20x4).rows, [
            "Artist - Song       ",
            "Test FM             ",
            "                    ",
            "buffering 45 %      ",
        ])
        s.streamStarted = true
        XCTAssertEqual(DisplayFrame.make(s, layout: .lcd20x4).rows, [
            "Artist - Song       ",
            "Test FM             ",
            "                    ",
            "\u{25B6} 0:00/--:--        ",
        ])
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import XCTest

final class RuntimeTests: XCTestCase {
    func testCommandsReachThePortsAndTheStateFile() throws {
        let dir = TempDir()
        let audio = RecordingAudio()
        let status = RecordingStatus()
        let store = StateStore(path: dir.file("state.json"))
        let runtime = Runtime(state: State(), audio: audio, store: store, status: status, log: Log(level: .error))
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/b.flac")]))
        XCTAssertEqual(audio.calls, [.play(id: 1, file: "a.flac", at: 0, next: 2, nextFile: "b.flac")])
        runtime.waitForSaves()
        XCTAssertEqual(store.load().snapshot?.phase, .playing)
        XCTAssertEqual(status.views.last?.title, "a")

        audio.heard = (1, 17.5)
        runtime.dispatch(.heard(playID: 1, seconds: 17.5))
        runtime.dispatch(.quit)
        XCTAssertEqual(audio.calls.suffix(1), [.stop])
        runtime.waitForSaves()
        let saved = store.load().snapshot
        XCTAssertEqual(saved?.position, 17.5)
        XCTAssertEqual(saved?.current, 0)
    }

    /// Paused with a panel whose rows all fit, nothing on it moves: the loop has no reason to
    /// wake (no tick); a title that scrolls keeps the ticks coming.
    func testAPausedPanelThatShowsNothingMovingWakesTheLoopNever() {
        var settings = Settings()
        settings.display = .lcd16x2
        settings.splashSeconds = 0
        settings.releaseDelay = 0  // the device is released at once: no timer for it
        let runtime = Runtime(state: State(settings: settings), audio: RecordingAudio(), store: nil,
                              status: RecordingStatus(), log: Log(level: .error), clock: { 100 })
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac", title: "a"),
                                        TrackInfo(path: "/m/b.flac", title: "A Very Long Song Title Indeed")]))
        XCTAssertEqual(runtime.state.phase, .playing)
        XCTAssertNotNil(runtime.nextDeadline(), "playing: ticks")
        runtime.dispatch(.pause)
        XCTAssertNil(runtime.nextDeadline(), "paused, every row fits: no wake-up")
        runtime.dispatch(.next)
        XCTAssertNotNil(runtime.nextDeadline(), "paused on a long title: it scrolls")
    }

    func testASaveFailureIsReportedOnceAndPlaybackGoesOn() {
        let dir = TempDir()
        dir.write("blocker", "")
        let audio = RecordingAudio()
        let status = RecordingStatus()
        let runtime = Runtime(state: State(), audio: audio, store: StateStore(path: dir.file("blocker/state.json")),
                              status: status, log: Log(level: .error))
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac")]))
        runtime.waitForSaves()
        runtime.dispatch(.pause)
        runtime.waitForSaves()
        XCTAssertEqual(status.reports.count, 1)
        XCTAssertTrue(status.reports[0].hasPrefix("could not save state: "), status.reports[0])
        XCTAssertEqual(audio.calls, [.play(id: 1, file: "a.flac", at: 0), .pause])
    }

    func testAPlayFailingBecauseItsFolderIsGoneWaitsForTheMusicInsteadOfSkipping() {
        let dir = TempDir()
        let audio = RecordingAudio()
        let status = RecordingStatus()
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: status, log: Log(level: .error))
        let stick = dir.file("usb")
        runtime.dispatch(.replaceQueue([TrackInfo(path: stick + "/album/a.flac"), TrackInfo(path: stick + "/album/b.flac"),
                                        TrackInfo(path: dir.file("c.flac"))]))
        runtime.dispatch(.trackFailed(playID: 1, reason: "No such file or directory"))
        XCTAssertEqual(runtime.state.phase, .waitingForMusic)
        XCTAssertEqual(runtime.state.musicMissing, stick)
        XCTAssertEqual(runtime.state.currentTrack?.info.path, stick + "/album/a.flac", "the place is kept")
        XCTAssertEqual(status.reports, ["waiting for music: \(stick) is not there"])
        XCTAssertEqual(audio.calls, [.play(id: 1, file: "a.flac", at: 0, next: 2, nextFile: "b.flac"), .stop])

        // A file gone from a folder that is there is the file's problem: skipped when reached.
        let other = Runtime(state: State(), audio: RecordingAudio(), store: nil, status: RecordingStatus(), log: Log(level: .error))
        other.dispatch(.replaceQueue([TrackInfo(path: dir.file("gone.flac")), TrackInfo(path: dir.file("c.flac"))]))
        other.dispatch(.trackFailed(playID: 1, reason: "No such file or directory"))
        XCTAssertEqual(other.state.phase, .playing)
        XCTAssertEqual(other.state.currentTrack?.info.path, dir.file("c.flac"))
        XCTAssertNil(other.state.musicMissing)
    }

    func testTheLoopRunsEngineReportsUntilTheQueueEnds() {
        let (runtime, audio) = RuntimeTests.endingWithTheQueue()
        let code = runtime.run(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac")])])
        XCTAssertEqual(code, 0)
        XCTAssertEqual(runtime.state.phase, .stopped)
        // The start volume reaches the engine before anything plays.
        XCTAssertEqual(audio.calls, [.volume(100), .play(id: 1, file: "a.flac", at: 0), .stop, .shutdown])
    }

    /// Runs a loop over `audio` until the queue ends (device probes 0.01 s apart); its exit code.
    func runUntilTheQueueEnds(_ audio: FailingDeviceAudio, _ initial: [Event]) -> Int32 {
        var settings = Settings()
        settings.exitWhenQueueEnds = true
        settings.deviceRetryInitial = 0.01
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: RecordingStatus(),
                              log: Log(level: .error), mailbox: audio.mailbox)
        return runtime.run(initial: initial)
    }

    func testALostDeviceResumesAtTheFrameTheEngineHeldNotAtTheLastTick() {
        let audio = FailingDeviceAudio(.lost, heldAt: 12.5)
        XCTAssertEqual(runUntilTheQueueEnds(audio, [.replaceQueue([TrackInfo(path: "/m/a.flac")])]), 0)
        XCTAssertEqual(audio.plays, [0, 12.5])
    }

    func testTheLoopProbesABusyDeviceOnItsTimerAndReopensTheTrackOnlyWhenItIsFree() {
        let audio = FailingDeviceAudio(.busy, busyProbes: 2)
        XCTAssertEqual(runUntilTheQueueEnds(audio, [.replaceQueue([TrackInfo(path: "/m/a.flac")]), .seek(to: 4)]), 0)
        XCTAssertEqual(audio.plays, [0, 4], "probes while busy; the play after them resumes at the remembered position")
        XCTAssertEqual(audio.probes, 3)
    }
}

/// Fails the first play because of the device (`problem`; holding `heldAt` as the engine holds the
/// frame heard), answers `busyProbes` probes busy, then plays and finishes.
final class FailingDeviceAudio: AudioPort, @unchecked Sendable {
    let mailbox = Mailbox()
    let problem: DeviceProblem, heldAt: Double?, busyProbes: Int
    /// Where each play started, in seconds.
    var plays: [Double] = []
    var probes = 0
    var held: (id: UInt64, seconds: Double)?
    init(_ problem: DeviceProblem, heldAt: Double? = nil, busyProbes: Int = 0) {
        self.problem = problem
        self.heldAt = heldAt
        self.busyProbes = busyProbes
    }
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        plays.append(seconds)
        if plays.count == 1 {
            held = heldAt.map { (id, $0) }
            mailbox.post(.deviceUnavailable(reason: "\(problem)", problem: problem))
        } else {
            mailbox.post(.trackStarted(playID: id))
            mailbox.post(.trackFinished(playID: id, next: nil))
        }
    }
    func probe() {
        probes += 1
        mailbox.post(probes <= busyProbes ? .deviceUnavailable(reason: "busy", problem: .busy) : .deviceAvailable)
    }
    func setNext(id: UInt64, path: String) {}
    func clearNext() {}
    func pause() {}
    func resume() {}
    func stop() {}
    func release(token: UInt64) { mailbox.post(.deviceReleased(token: token, heard: nil)) }
    func seek(to seconds: Double) {}
    func setVolume(_ percent: Int) {}
    func position() -> (id: UInt64, seconds: Double)? { held }
    func shutdown() {}
}

/// A source whose fd is a pipe: each byte written becomes a media-key press.
final class PipeSource: EventSource {
    let readEnd: Int32
    let writeEnd: Int32
    var maintained = 0
    init() {
        var p: [Int32] = [0, 0]
        pipe(&p)
        readEnd = p[0]
        writeEnd = p[1]
    }
    deinit { close(readEnd); close(writeEnd) }
    var fds: [Int32] { [readEnd] }
    func read(fd: Int32) -> [Event] {
        var b: UInt8 = 0
        guard Glibc.read(fd, &b, 1) == 1 else { return [] }
        return [.mediaKey(code: Int(b), value: 1, at: 0)]
    }
    func maintain() { maintained += 1 }
}

final class EventSourceTests: XCTestCase {
    func testTheLoopFeedsSourceEventsToTheCore() {
        var settings = Settings()
        settings.exitWhenQueueEnds = true
        let source = PipeSource()
        let audio = RecordingAudio()
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: RecordingStatus(),
                              log: Log(level: .error), sources: [source])
        var stop = UInt8(MediaKey.stopCD), next = UInt8(MediaKey.nextSong)
        _ = write(source.writeEnd, &next, 1)  // next on the last track ends the queue
        _ = write(source.writeEnd, &stop, 1)
        let code = runtime.run(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac")])])
        XCTAssertEqual(code, 0)
        XCTAssertEqual(audio.calls, [.volume(100), .play(id: 1, file: "a.flac", at: 0), .stop, .shutdown])
    }
}

extension RuntimeTests {
    /// A runtime whose engine (returned too) ends each track as soon as it starts, exiting when
    /// the queue ends.
    static func endingWithTheQueue() -> (Runtime, RecordingAudio) {
        var settings = Settings()
        settings.exitWhenQueueEnds = true
        let audio = RecordingAudio()
        let mailbox = Mailbox()
        audio.mailbox = mailbox
        audio.finishImmediately = true
        return (Runtime(state: State(settings: settings), audio: audio, store: nil, status: RecordingStatus(),
                        log: Log(level: .error), mailbox: mailbox), audio)
    }
}

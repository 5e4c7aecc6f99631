// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxTestSupport

/// Steps that many scenes share, each asserted in full with literal values like any other `send`.
extension CoreHarness {
    /// The engine reports `seconds` heard of play `playID`: the position moves and the status,
    /// which must change, shows `view`.
    func heard(_ playID: UInt64, at seconds: Double, shows view: StatusView,
               file: StaticString = #filePath, line: UInt = #line) {
        send(.heard(playID: playID, seconds: seconds), file: file, line: line, {
            $0.position = seconds
            $0.shown = view
        }, commands: [.render(view)])
    }

    /// The stream of play 1 reports `report`: the core keeps it and the status shows `view`.
    func streamReports(_ report: StreamStatus, shows view: StatusView, file: StaticString = #filePath, line: UInt = #line) {
        send(.streamStatus(playID: 1, report), file: file, line: line, {
            $0.stream = PlayStreamStatus(playID: 1, status: report)
            $0.shown = view
        }, commands: [.render(view)])
    }

    /// `next` (or `event`, another way on to the next track: a media key, the end of a track the
    /// engine did not continue from) on `playing(3)` before anything else happened: track 2 starts
    /// as play 3 with track 3 handed as play 4, and the new place is saved.
    func nextToTrack2Of3(by event: Event = .next, file: StaticString = #filePath, line: UInt = #line) {
        nextToTrack2(of: 3, by: event, file: file, line: line)
    }

    /// The same on `playing(count)` (with two tracks nothing is handed after track 2), the queue
    /// at `revision`; `also` is what else the event changes.
    func nextToTrack2(of count: Int, revision: Int = 1, by event: Event = .next, also: (inout State) -> Void = { _ in },
                      file: StaticString = #filePath, line: UInt = #line) {
        let last = count == 2
        send(event, file: file, line: line, {
            $0.cursor = 1
            $0.nextPlayID = last ? 4 : 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = last ? nil : PlayRef(playID: 4, trackID: 3)
            $0.savedMark = mark(revision: revision, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 2, of: count)
            also(&$0)
        }, commands: [
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false,
                        next: last ? nil : NextPlay(playID: 4, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: infos(count), current: 1, phase: .playing)),
            .render(status("playing", song: 2, index: 2, of: count)),
        ])
    }

    /// `previous` (or `event`) on track 2 of `playing(3)` after `nextToTrack2Of3`, within the
    /// restart threshold: track 1 starts again as play 5 with track 2 handed as play 6, and the
    /// new place is saved; `also` is what else the event changes.
    func previousToTrack1Of3(by event: Event = .previous, also: (inout State) -> Void = { _ in },
                             file: StaticString = #filePath, line: UInt = #line) {
        send(event, file: file, line: line, {
            $0.cursor = 0
            $0.nextPlayID = 7
            $0.loaded = PlayRef(playID: 5, trackID: 1)
            $0.handedNext = PlayRef(playID: 6, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3)
            also(&$0)
        }, commands: [
            .startTrack(playID: 5, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: infos(3), current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
    }

    /// The device turns out busy (or `problem`) while track 1 of `count` plays at 0:00 (`playing(count)`): the
    /// player waits, first probe in 0.125 s, the next ones 0.25 s apart. Nothing is saved: waiting
    /// is saved as playing. `also` is what else changes (a panel's frame), `after` the commands
    /// that follow (showing it).
    func deviceBusyOnTrack1(of count: Int, reason: String = "busy", problem: DeviceProblem = .busy,
                            also: (inout State) -> Void = { _ in }, after: [Command] = [],
                            file: StaticString = #filePath, line: UInt = #line) {
        send(.deviceUnavailable(reason: reason, problem: problem), file: file, line: line, {
            $0.phase = .waitingForDevice(reason: reason)
            $0.loaded = nil
            $0.handedNext = nil
            $0.retryDelay = 0.25
            $0.shown = status("waiting", song: 1, index: 1, of: count, message: "waiting for audio device: \(reason)")
            also(&$0)
        }, commands: [
            .report("waiting for audio device: \(reason)"),
            .startTimer(.deviceRetry, after: 0.125),
            .render(status("waiting", song: 1, index: 1, of: count, message: "waiting for audio device: \(reason)")),
        ] + after)
    }
}

extension CoreHarness {
    /// `interruptBegan` while track 1 of `count` is loaded as play 1 (playing, or paused before
    /// the release): the first release (token 1) is asked for, the grant waits for it, and the
    /// phase to come back to is `after`. `event` is another way in (a mute line), `also` is what
    /// else changes (a button, a panel's frame), `before` and `then` the commands around these.
    func interruptTrack1(of count: Int, id: String, reason: String, after: PlayerPhase = .playing,
                         elapsed: String = "0:00", by event: Event? = nil, also: (inout State) -> Void = { _ in },
                         before: [Command] = [], then: [Command] = [], file: StaticString = #filePath, line: UInt = #line) {
        send(event ?? .interruptBegan(id: id, reason: reason), file: file, line: line, {
            $0.phase = .interrupted(reason: reason)
            $0.interruptions = [Interruption(id: id, reason: reason)]
            $0.afterInterruption = after
            $0.pendingGrants = [id]
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = status("interrupted", song: 1, index: 1, of: count, elapsed: elapsed, message: "interrupted: \(reason)")
            also(&$0)
        }, commands: before + [
            .releaseDevice(token: 1),
            .render(status("interrupted", song: 1, index: 1, of: count, elapsed: elapsed, message: "interrupted: \(reason)")),
        ] + then)
    }

    /// The engine reports release 1 of track 1 of 2 done, the sound stopped at `seconds` (a fade
    /// played out after the request): that is the place, saved at once, and `id` is granted.
    func releasedTrack1Of2(at seconds: Double, granting id: String, file: StaticString = #filePath, line: UInt = #line) {
        send(.deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: seconds)), file: file, line: line, {
            $0.position = seconds
            $0.pendingGrants = []
            $0.releaseToken = nil
            $0.releasedPlay = nil
            $0.savedPosition = seconds
        }, commands: [
            .grant(id: id),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, position: seconds, phase: .playing)),
        ])
    }

    /// `event` (another source beginning) while track 1 of 2 plays at 31.4 s puts `interruption`
    /// in force: the device is released, the status says who has it, and the grant waits for the
    /// release, which gives the heard place (31.6 s).
    func sourceTakesTrack1(by event: Event, _ interruption: Interruption, file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("interrupted", song: 1, index: 1, of: 2, elapsed: "0:31", message: interruption.reason)
        send(event, file: file, line: line, {
            $0.phase = .interrupted(reason: interruption.reason)
            $0.interruptions = [interruption]
            $0.afterInterruption = .playing
            $0.pendingGrants = [interruption.id]
            $0.releaseToken = 1
            $0.releasedPlay = 1
            $0.nextReleaseToken = 2
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = shown
        }, commands: [.releaseDevice(token: 1), .render(shown)])
        releasedTrack1Of2(at: 31.6, granting: interruption.id, file: file, line: line)
    }

    /// The engine reports release 1 done (nothing heard after it): the waiting interruption `id`
    /// is granted.
    func grantAfterRelease(_ id: String, file: StaticString = #filePath, line: UInt = #line) {
        send(.deviceReleased(token: 1, heard: nil), file: file, line: line, {
            $0.pendingGrants = []
            $0.releaseToken = nil
            $0.releasedPlay = nil
        }, commands: [
            .grant(id: id),
        ])
    }
}

extension CoreHarness {
    /// `pause` while track 1 of `count` plays at `position` (shown as `elapsed`): the output
    /// pauses, the device is let go in 3 s, and the place is saved.
    /// `event` is another way to pause (a button, a second swipe); `also` is what else it changes.
    func pauseTrack1(of count: Int, at position: Double = 0, elapsed: String = "0:00", by event: Event = .pause,
                     also: (inout State) -> Void = { _ in }, file: StaticString = #filePath, line: UInt = #line) {
        pause(track: 1, of: count, at: position, elapsed: elapsed, by: event, also: also, file: file, line: line)
    }

    /// The same while track `song` of `count` plays (and was saved as the place).
    func pause(track song: Int, of count: Int, at position: Double = 0, elapsed: String = "0:00", by event: Event = .pause,
               also: (inout State) -> Void = { _ in }, file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("paused", song: song, index: song, of: count, elapsed: elapsed)
        send(event, file: file, line: line, {
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: UInt64(song), phase: .paused)
            $0.savedPosition = position
            $0.shown = shown
            also(&$0)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: infos(count), current: song - 1, position: position, phase: .paused)),
            .render(shown),
        ])
    }
}

extension CoreHarness {
    /// `stop` (or `event`, another way to stop: a long press, the end of the queue) while track 1
    /// of `count` plays: the output stops, the engine's plays are dropped, the position goes back
    /// to 0 and the stopped place is saved. `also` is what else the event changes.
    func stopTrack1(of count: Int, by event: Event = .stop, also: (inout State) -> Void = { _ in },
                    file: StaticString = #filePath, line: UInt = #line) {
        stop(track: 1, of: count, by: event, also: also, file: file, line: line)
    }

    /// The same while track `song` of `count` plays at `volume`; a saved position goes back to 0 too.
    func stop(track song: Int, of count: Int, volume: Int = 100, by event: Event = .stop,
              also: (inout State) -> Void = { _ in }, file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("stopped", song: song, index: song, of: count, volume: volume)
        send(event, file: file, line: line, {
            $0.phase = .stopped
            $0.position = 0
            $0.loaded = nil
            $0.handedNext = nil
            $0.savedMark = mark(revision: 1, current: UInt64(song), phase: .stopped, volume: volume)
            $0.savedPosition = 0
            $0.shown = shown
            also(&$0)
        }, commands: [
            .stopOutput,
            .persistPlace(Snapshot(tracks: infos(count), current: song - 1, volume: volume)),
            .render(shown),
        ])
    }

    /// `play` on track `song` of `count` after the engine's plays were dropped (stopped, or paused
    /// and the device let go) at `position`, shown as `elapsed`: the track opens again there as
    /// play 3 with the next track handed as play 4, and the place is saved.
    func reopen(song: Int = 1, of count: Int, at position: Double = 0, elapsed: String = "0:00",
                file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("playing", song: song, index: song, of: count, elapsed: elapsed)
        send(.play, file: file, line: line, {
            $0.phase = .playing
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: UInt64(song))
            $0.handedNext = PlayRef(playID: 4, trackID: UInt64(song + 1))
            $0.savedMark = mark(revision: 1, current: UInt64(song), phase: .playing)
            $0.shown = shown
        }, commands: [
            .startTrack(playID: 3, path: "/music/\(song).flac", at: position, paused: false,
                        next: NextPlay(playID: 4, path: "/music/\(song + 1).flac")),
            .persistPlace(Snapshot(tracks: infos(count), current: song - 1, position: position, phase: .playing)),
            .render(shown),
        ])
    }

    /// `setVolume(volume)` (or `event`: a card, a new configuration's limit) while track 1 of
    /// `count` plays: the output's volume is set and saved at once. `also` is what else changes.
    func setVolume(_ volume: Int, playingTrack1Of count: Int, by event: Event? = nil, also: (inout State) -> Void = { _ in },
                   file: StaticString = #filePath, line: UInt = #line) {
        send(event ?? .setVolume(volume), file: file, line: line, {
            $0.volume = volume
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: volume)
            $0.shown = status("playing", song: 1, index: 1, of: count, volume: volume)
            also(&$0)
        }, commands: [
            .setVolume(volume),
            .persistPlace(Snapshot(tracks: infos(count), current: 0, phase: .playing, volume: volume)),
            .render(status("playing", song: 1, index: 1, of: count, volume: volume)),
        ])
    }
}

extension CoreHarness {
    /// `play` (or `event`) on `queued(count)`: track 1 starts as play 1 with track 2 handed as
    /// play 2 (`count` > 1), and the place is saved. `also` is what else the event changes, `before`
    /// and `after` the commands it gives around these. `tracks` is the queue's info when it is not
    /// `infos(count)`; `gain` and `nextGain` the ReplayGain the two plays get, `speed` their speed
    /// (the queue's own speed, already set, is saved with the place).
    func playFromStopped(_ count: Int, by event: Event = .play, also: (inout State) -> Void = { _ in },
                         before: [Command] = [], after: [Command] = [], tracks: [TrackInfo]? = nil,
                         gain: Double? = nil, nextGain: Double? = nil, speed: Double? = nil,
                         file: StaticString = #filePath, line: UInt = #line) {
        let queueSpeed = state.queueSpeed
        send(event, file: file, line: line, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, speed: queueSpeed)
            $0.shown = status("playing", song: 1, index: 1, of: count, speed: speed.map(Speed.text))
            also(&$0)
        }, commands: before + [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false,
                        next: NextPlay(playID: 2, path: "/music/2.flac", gain: nextGain, speed: speed), gain: gain, speed: speed),
            .persistPlace(Snapshot(tracks: tracks ?? infos(count), current: 0, phase: .playing, speed: queueSpeed)),
            .render(status("playing", song: 1, index: 1, of: count, speed: speed.map(Speed.text))),
        ] + after)
    }
}

extension CoreHarness {
    /// `play` (or `event`: a toggle, a button, a card) while track 1 of `count` is paused with the
    /// engine still holding it: the output resumes and the place is saved. `also` is what else
    /// the event changes.
    func resumeTrack1(of count: Int, by event: Event = .play, also: (inout State) -> Void = { _ in },
                      file: StaticString = #filePath, line: UInt = #line) {
        send(event, file: file, line: line, {
            $0.phase = .playing
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: count)
            also(&$0)
        }, commands: [
            .resumeOutput,
            .persistPlace(Snapshot(tracks: infos(count), current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: count)),
        ])
    }
}

extension CoreHarness {
    /// Card A1 read (as `id`) at `at` by an empty stopped player whose map plays "/music/album"
    /// for it: its folder is read, then its two tracks play (what `playing(2)` holds, with A1
    /// active over queue entries 1 and 2), the read's `messages` reported first.
    func cardA1Plays(readAs id: String = "A1", at: Double, messages: [String] = [],
                     file: StaticString = #filePath, line: UInt = #line) {
        send(.cardRead(id: id, at: at), file: file, line: line, {
            $0.cards.lastReadID = "A1"
            $0.cards.lastReadAt = at
            $0.cards.loading = "A1"
        }, commands: [.loadCard(card: "A1", paths: ["/music/album"])])
        send(.cardTracks(card: "A1", tracks: [info(1), info(2)], messages: messages), file: file, line: line, {
            $0.cards.loading = nil
            $0.cards.active = ActiveCard(id: "A1", tracks: 1..<3)
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2))]
            $0.order = [1, 2]
            $0.nextTrackID = 3
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.nextPlayID = 3
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: messages.map { .report("card A1: " + $0) } + [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 2, path: "/music/2.flac")),
            .persist(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
    }
}

extension CoreHarness {
    /// Play 1 of track 1 fails (`trackFailed`, or `event`: a format the device refuses) for
    /// `reason` while track 1 of `count` plays at 0:00: the track is skipped with a message naming
    /// it, and track 2 starts as play 3, track 3 (if any) handed as play 4. `also` is what else
    /// changes (a panel), `after` the commands that follow.
    func track1FailsAndTrack2Plays(of count: Int, reason: String, by event: Event? = nil,
                                   also: (inout State) -> Void = { _ in }, after: [Command] = [],
                                   file: StaticString = #filePath, line: UInt = #line) {
        let last = count == 2
        let shown = status("playing", song: 2, index: 2, of: count, message: "skipped 1.flac: \(reason)")
        send(event ?? .trackFailed(playID: 1, reason: reason), file: file, line: line, {
            $0.failuresFrom = FailurePlace(cursor: 0, position: 0.0, wantedSound: true)
            $0.cursor = 1
            $0.message = "skipped 1.flac: \(reason)"
            $0.nextPlayID = last ? 4 : 5
            $0.loaded = PlayRef(playID: 3, trackID: 2)
            $0.handedNext = last ? nil : PlayRef(playID: 4, trackID: 3)
            $0.failuresInARow = 1
            $0.savedMark = mark(revision: 1, current: 2, phase: .playing)
            $0.shown = shown
            also(&$0)
        }, commands: [
            .report("skipped /music/1.flac: \(reason)"),
            .startTrack(playID: 3, path: "/music/2.flac", at: 0, paused: false,
                        next: last ? nil : NextPlay(playID: 4, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: infos(count), current: 1, phase: .playing)),
            .render(shown),
        ] + after)
    }
}

extension CoreHarness {
    /// `restore(snapshot)` of track 1 alone that comes back paused at `position` (shown as
    /// `elapsed`): the queue holds it, paused there with `volume` (the saved one, or the boot
    /// volume) set on the output; the place is taken as saved. `message` is what the status says
    /// besides.
    /// `also` is what else the restore changes; `report` a line it reports after setting the volume.
    func restorePausedTrack1(_ snapshot: Snapshot, at position: Double = 0, elapsed: String = "0:00", volume: Int = 100,
                             message: String? = nil, also: (inout State) -> Void = { _ in }, report: String? = nil,
                             file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("paused", song: 1, index: 1, of: 1, elapsed: elapsed, volume: volume, message: message)
        send(.restore(snapshot), file: file, line: line, {
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.cursor = 0
            $0.phase = .paused
            $0.position = position
            $0.volume = volume
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, volume: volume)
            $0.savedPosition = position
            $0.shown = shown
            also(&$0)
        }, commands: [.setVolume(volume)] + (report.map { [Command.report($0)] } ?? []) + [.render(shown)])
    }
}

extension CoreHarness {
    /// The last interruption `id` ends (or `event`: the mute line let go) while track 1 of `count`
    /// waits at `position` (shown as `elapsed`) to play again: it reopens as play 3 there with
    /// track 2 handed as play 4. `also` is what else changes, `before` the commands ahead of these.
    func interruptionEndsPlayingTrack1(of count: Int, id: String, at position: Double = 0, elapsed: String = "0:00",
                                       by event: Event? = nil, also: (inout State) -> Void = { _ in }, before: [Command] = [],
                                       file: StaticString = #filePath, line: UInt = #line) {
        let shown = status("playing", song: 1, index: 1, of: count, elapsed: elapsed)
        send(event ?? .interruptEnded(id: id), file: file, line: line, {
            $0.phase = .playing
            $0.interruptions = []
            $0.nextPlayID = 5
            $0.loaded = PlayRef(playID: 3, trackID: 1)
            $0.handedNext = PlayRef(playID: 4, trackID: 2)
            $0.shown = shown
            also(&$0)
        }, commands: before + [
            .startTrack(playID: 3, path: "/music/1.flac", at: position, paused: false, next: NextPlay(playID: 4, path: "/music/2.flac")),
            .render(shown),
        ])
    }
}

extension CoreHarness {
    /// Card `card` read at `at` starts the reading of its folders `paths` off the loop: it is the
    /// last card read, at `at`, and loading. `also` is what else the read changes.
    func cardLoads(_ card: String, at: Double, paths: [String], also: (inout State) -> Void = { _ in },
                   file: StaticString = #filePath, line: UInt = #line) {
        send(.cardRead(id: card, at: at), file: file, line: line, {
            $0.cards.lastReadID = card
            $0.cards.lastReadAt = at
            $0.cards.loading = card
            also(&$0)
        }, commands: [.loadCard(card: card, paths: paths)])
    }
}

/// Where the `startTrack` among `commands` starts, nil when there is none.
func startedAt(_ commands: [Command]) -> Double? {
    for command in commands {
        if case .startTrack(_, _, let at, _, _, _, _) = command { return at }
    }
    return nil
}

/// A coin for a randomized test: its seed from `variable` when set (to replay a run), else
/// random, printed either way.
struct SeededCoin {
    let seed: UInt64
    private var state: UInt64

    init(variable: String, test: String) {
        let given = ProcessInfo.processInfo.environment[variable].flatMap { UInt64($0) }
        seed = given ?? UInt64.random(in: 1...UInt64.max)
        state = seed
        print("\(test) seed: \(seed) (\(variable)=\(seed) repeats it)")
    }

    /// The next side (a linear congruential step; its top bit).
    mutating func flip() -> Bool {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 63 == 1
    }
}

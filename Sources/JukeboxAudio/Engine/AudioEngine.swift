// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Plays tracks gaplessly: a decoder thread decodes up to a second ahead into a bounded queue and a writer
/// thread feeds a `PCMOutput`, keeping count of which device frames belong to which track.
///
/// Every command returns at once (it only posts to the threads); outcomes come back through `report`,
/// called on an engine thread, in the order they happened. Commands that make no sense in the current
/// state (pause while paused, resume while playing, seek or setNext while idle) are no-ops.
/// The device is opened when playback starts and closed when the engine becomes idle (stop, failure,
/// device loss; half a second after the last track ended by itself) or when a paused device cannot hold
/// its audio. The engine never
/// retries a device by itself: after `.deviceUnavailable` it is idle and `position()` keeps the point
/// to resume from. Call `shutdown()` when done: the threads keep the engine alive until then.
public final class AudioEngine: @unchecked Sendable {
    /// An outcome, reported from an engine thread.
    public enum Report: Sendable, Equatable {
        /// The first frame of this track was handed to the output (also when it continues gaplessly).
        /// Not repeated after a seek within the track.
        case started(id: UInt64)
        /// The last frame of this track has been heard; when the next track continues gaplessly, the
        /// last frame was written and `.started` of the next follows at once. `next` names the track
        /// the engine goes on with (also one that then reports `.failed`), nil when it stops here: a
        /// successor set too late is not played, and the caller must start it itself.
        case finished(id: UInt64, next: UInt64? = nil)
        /// The track could not be opened or sought; `reason` says why (the caller names the file).
        /// After a failed `play` the engine is idle; after a failed gapless next, the current track ends normally.
        case failed(id: UInt64, reason: String)
        /// The output could not be opened or was lost. The engine is idle and holds no device.
        case deviceUnavailable(OutputError)
        /// A `probe()` found the device free (a probe that could not have it reports
        /// `.deviceUnavailable`).
        case deviceAvailable
        /// Once per engine lifetime: the first frames were handed to the output (start-up latency).
        case firstSample
        /// The device asked for by `release(token:)` is closed (or none was open); `heard` is where
        /// the sound stopped when the release itself played out a fade (it lags the call by up to a
        /// device buffer), nil when nothing was playing.
        case released(token: UInt64, heard: HeardPoint?)
    }

    /// Seconds of audio decoded ahead of the writer (besides what the device buffer holds).
    static let decodeAheadSeconds = 1.0
    /// Once the queue is full the decoder sleeps until it holds less than this, then decodes up to
    /// `decodeAheadSeconds` in one burst: it wakes twice a second, not once a chunk.
    static let refillBelowSeconds = 0.5
    /// Frames left queued ahead of the play point when a cut rewinds the device (10 ms): what the
    /// hardware may already have fetched.
    static let rewindKeepSeconds = 0.010
    /// A volume change on a device that only drops cuts what is queued only when more than this is
    /// (20 ms): less is heard about as soon, without the cut's moment of silence.
    static let minimumCutSeconds = 0.020
    /// At the end of the queue the writer waits for commands while the device plays out, and blocks
    /// in `drain` only for the last 50 ms.
    static let playOutSlackSeconds = 0.05
    /// Seconds the device stays open after the last track ended by itself, or a play failed,
    /// unless `stop()` or a new `play` comes first: a play right after the end then needs no
    /// reopen (a reopen costs a gap, on some cards a click). Each skipped file is a round trip
    /// through the loop (the failure reported, the next play asked for), which a loaded machine can
    /// stretch past half a second: a CI run at load 11 reopened the device between two skipped
    /// files and the good track after them when this was 0.5. Held two seconds longer, a card is
    /// still released long before a pause releases it (`Settings.releaseDelay`, 3 s).
    public static let lingerSeconds = 2.0
    /// Frames per decoded chunk (about 93 ms at 44.1 kHz): small enough to react quickly to
    /// commands (the decoder looks at them between chunks), large enough to keep per-chunk work rare.
    static let chunkFrames = 4096
    /// Frames the writer joins into one write when the queue holds them (about 372 ms at 44.1 kHz:
    /// more than a period, so one write fills what the device asks for).
    static let writeBlockFrames = 16384

    let monitor = Monitor()
    var state = EngineState()
    let makeOutput: () -> PCMOutput
    let report: @Sendable (Report) -> Void
    /// Monotonic seconds: where the heard position is extrapolated from, when a pause held its
    /// frame, how long the device lingers after an end. Injected so a test can drive it.
    let clock: @Sendable () -> Double
    /// The hardware volume, when one is used instead of the software gain.
    let mixer: AlsaMixer?
    private var threads: [NativeThread] = []
    private var isShutDown = false
    /// A pipe made readable by commands the writer must see at once (play, seek, pause, stop,
    /// release, shutdown): a write waiting for room in a long device buffer returns early.
    let interruptPipe: (read: Int32, write: Int32)

    /// Starts the decoder and writer threads. `makeOutput` is called on the writer thread the first time a
    /// device is needed (the output object is then reused); `report` receives every outcome. With a
    /// `mixer`, `setVolume` sets that control and the samples stay untouched (see `setVolume`).
    /// `clock` gives monotonic seconds (CLOCK_MONOTONIC unless a test drives its own); it is read
    /// on the caller's and the writer's threads.
    public init(makeOutput: @escaping () -> PCMOutput, mixer: AlsaMixer? = nil,
                clock: @escaping @Sendable () -> Double = monotonicNow,
                report: @escaping @Sendable (Report) -> Void) {
        self.mixer = mixer
        self.clock = clock
        self.makeOutput = makeOutput
        self.report = report
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe failed")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        interruptPipe = (fds[0], fds[1])
        threads = [NativeThread(name: "jukebox-decode") { [self] in decoderLoop() },
                   NativeThread(name: "jukebox-write") { [self] in writerLoop() }]
    }

    /// Stops whatever plays, opens `path` at `seconds` and starts it, or leaves it ready but paused (the
    /// device is then opened on `resume`). Replaces any gapless next track with `next` (set in the same
    /// step, so even a very short track cannot end before its successor is known). `id` names the track
    /// in reports. Each track's samples are scaled by its linear `gain`/`nextGain` (ReplayGain),
    /// saturating, from its first frame; at 1 they pass untouched. Each plays at `speed`/`nextSpeed`
    /// with the pitch kept (`TimeStretch`; at 1 no stretcher is in the path); `seconds` and every
    /// position reported are in the file's own time.
    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool,
                     next: (id: UInt64, path: String)? = nil, gain: Double = 1, nextGain: Double = 1,
                     speed: Double = 1, nextSpeed: Double = 1) {
        command(interrupting: true) { state in
            state.restart(track: TrackRef(id: id, path: path, gain: gain, speed: speed), at: seconds, announce: true)
            state.nextSpec = next.map { TrackRef(id: $0.id, path: $0.path, gain: nextGain, speed: nextSpeed) }
            state.active = true
            state.paused = paused
            state.currentStarted = false
        }
    }

    /// Sets the track to continue with, without a gap, when the current one ends (replacing an earlier
    /// choice, even one already decoded ahead). Honoured as long as the current track's `.finished` has
    /// not been reported; if it comes late, playback continues after a short gap. No-op while idle.
    /// Its samples are scaled by the linear `gain` from its first frame (1: untouched), at `speed`.
    public func setNext(id: UInt64, path: String, gain: Double = 1, speed: Double = 1) {
        command { state in
            guard state.active else { return }
            state.cancelTakenNext()
            state.nextSpec = TrackRef(id: id, path: path, gain: gain, speed: speed)
        }
    }

    /// Changes the playback speed of play `id` in place (1: no stretcher, bit-exact again), the
    /// file kept open and the device untouched: what is decoded ahead of the writer and not yet
    /// written is dropped and decoded again from the same source frame at `speed` (the decoder
    /// seeks back and puts in a new stretcher, or takes it out), so only what the device already
    /// holds plays at the old speed. A successor set with that id takes the speed too (decoded
    /// again if it was decoded ahead). The place heard does not move. A stream (a podcast episode
    /// from its URL) cannot decode again what it dropped: its queued audio (at most
    /// `decodeAheadSeconds`) plays at the old speed and the new one follows it. No-op for an id
    /// that is not loaded, and while idle.
    public func setSpeed(id: UInt64, speed: Double) {
        command { state in
            guard state.active, TimeStretch.speeds.contains(speed) || speed == 1 else { return }
            state.speedSet = (id, speed)
            if state.current?.id == id { state.current?.speed = speed }
            if state.job?.track.id == id { state.job?.track.speed = speed }
            if state.frozen?.track.id == id { state.frozen?.track.speed = speed }
            if let next = state.nextSpec, next.id == id, next.speed != speed {
                state.cancelTakenNext()
                state.nextSpec?.speed = speed
            }
            guard let serial = state.decoderSerial, state.decoderTrackID == id, state.cancelSerial != serial else { return }
            // A stream keeps what it decoded ahead (`respeeded`): its decoder cannot go back.
            if state.liveStream?.id == id {
                state.respeed = Respeed(serial: serial, speed: speed, fromSource: nil)
                return
            }
            // Where the dropped audio began is where the new speed begins; with nothing queued,
            // where the decoder's output got to (or an earlier order's place, not yet carried out).
            var from: Int64?
            if let first = state.queue.first(where: { $0.serial == serial }), case .pcm(let chunk) = first {
                from = chunk.track.sourceFrame(atFrame: chunk.startFrame)
            } else if let earlier = state.respeed, earlier.serial == serial {
                from = earlier.fromSource
            }
            state.queue.removeAll { $0.serial == serial }
            state.queuedSeconds = state.queue.reduce(0) { $0 + $1.seconds }
            state.decoderFull = false
            state.respeed = Respeed(serial: serial, speed: speed, fromSource: from)
        }
    }

    /// Withdraws the gapless next track unless it has already started.
    public func clearNext() {
        command { state in
            state.cancelTakenNext()
            state.nextSpec = nil
        }
    }

    /// Pauses where the sound stops: at once on a device that pauses or rewinds, after a short
    /// fade and what the device holds on one that only drains. Until then `position()` follows the
    /// sound; then it stays where the sound stopped (it never goes back). No-op unless playing.
    public func pause() {
        command(interrupting: true) { state in
            guard state.active, !state.paused else { return }
            if let point = state.heardPoint(now: clock()) { state.frozen = point }
            state.paused = true
            state.pauseSettling = true
        }
    }

    /// Resumes after `pause()` or a paused `play`. No-op unless paused.
    public func resume() {
        command { state in
            guard state.active, state.paused else { return }
            state.paused = false
            state.pauseSettling = false
            // The device stood still while paused: restart the extrapolation clock.
            state.live?.at = clock()
        }
    }

    /// Stops playback, forgets the current and next track and releases the device. Reports nothing.
    public func stop() {
        command(interrupting: true) { state in state.becomeIdle(keep: nil) }
    }

    /// Like `stop()`, then reports `.released(token:heard:)` once the device is really closed, so a
    /// caller can tell another program the device is free and resume later at the exact frame.
    /// Reported even when no device was open.
    public func release(token: UInt64) {
        command(interrupting: true) { state in
            state.becomeIdle(keep: nil)
            state.releaseTokens.append(token)
        }
    }

    /// While idle: checks on the writer thread whether the device could be opened now (opened and
    /// closed at once, nothing decoded) and reports `.deviceAvailable` or `.deviceUnavailable`. A
    /// probe that finds the engine playing again (a `play` came first) reports nothing: that play
    /// answers for the device.
    public func probe() {
        command { state in state.probeRequested = true }
    }

    /// Moves to `seconds` in the track being heard, keeping the paused state and the next track.
    /// Sample-exact except Ogg Vorbis (libsndfile may land a few hundred frames off). No-op while idle.
    public func seek(to seconds: Double) {
        command(interrupting: true) { state in
            guard state.active else { return }
            let heard = state.heardPoint(now: clock())?.track
            guard var target = heard ?? state.current else { return }
            // A speed set in place holds for the play from here on.
            if let set = state.speedSet, set.id == target.id { target.speed = set.speed }
            if let current = state.current, current != target, state.nextSpec == nil {
                // The writer already started the next track but it is not heard yet: keep it as next.
                state.nextSpec = current
            }
            state.restart(track: target, at: seconds, announce: !state.currentStarted)
        }
    }

    /// Sets the volume, 0...100 (clamped), on ALSA's mapped-volume curve (`VolumeCurve`): 0 is
    /// silence, 100 is full scale.
    ///
    /// Without a mixer this is the software gain: at 100 samples pass untouched (bit-perfect); any
    /// change is applied to audio written from now on, ramped over at most 15 ms (`GainRamp`), never
    /// as a step. With a mixer the control is set at once on the caller's thread (a few ioctls) and
    /// the software gain stays at 100; if the mixer fails (its card went away) the software gain takes
    /// this value instead, so the volume keeps working, and the mixer is tried again next time.
    public func setVolume(_ percent: Int) {
        let p = min(max(percent, 0), 100)
        var software = p
        if let mixer {
            do throws(MixerError) {
                try mixer.set(percent: p)
                software = 100
            } catch {
                software = p
            }
        }
        // Interrupting: on a device that rewinds, the writer rewrites its queued audio at once.
        command(interrupting: true) { state in state.volume = software }
    }

    /// The track and second being heard now (frames written minus the device delay, across gapless
    /// boundaries), the held point while paused or after `.deviceUnavailable`, nil when idle.
    public func position() -> (id: UInt64, seconds: Double)? {
        monitor.withLock {
            if state.active, !state.paused || state.pauseSettling,
               let point = state.heardPoint(now: clock()) {
                return (point.track.id, point.seconds)
            }
            return state.frozen.map { ($0.track.id, $0.seconds) }
        }
    }

    /// The settings streams opened from now on run with (the config's `radio` section).
    public func setStreamSettings(_ settings: StreamSettings) {
        monitor.withLock { state.streamSettings = settings }
    }

    /// What the HTTP stream being decoded has found (station, title, buffering, reconnecting), with
    /// its track's id; nil when no stream is open. Pulled by the loop, like `position()`.
    public func streamFacts() -> (id: UInt64, facts: StreamFacts, capacity: Int, target: Int)? {
        guard let live = monitor.withLock({ state.liveStream }) else { return nil }
        // The stream's own lock, taken after the engine's is released: the two never nest.
        let facts = live.stream.facts
        let target = StreamDecoder.bufferTarget(facts: facts, settings: live.stream.settings, capacity: live.stream.capacity)
        return (live.id, facts, live.stream.capacity, target)
    }

    /// Device faults the output met and recovered from or lost to (for diagnostics), as the writer
    /// last saw them; zero for outputs that count nothing.
    public func counters() -> DeviceCounters {
        monitor.withLock { state.counters }
    }

    /// Stops both threads and closes the device. Blocks until they have ended; later calls do nothing.
    /// Must not be called from the `report` closure.
    public func shutdown() {
        let first = monitor.withLock { () -> Bool in
            if isShutDown { return false }
            isShutDown = true
            state.shutdown = true
            interruptWriter()
            monitor.broadcast()
            return true
        }
        guard first else { return }
        for thread in threads { thread.join() }
        close(interruptPipe.read)
        close(interruptPipe.write)
    }

    private func command(interrupting: Bool = false, _ body: (inout EngineState) -> Void) {
        monitor.withLock {
            body(&state)
            if interrupting { interruptWriter() }
            monitor.broadcast()
        }
    }

    // Called with the lock held.
    private func interruptWriter() {
        guard !state.writerInterrupted else { return }
        state.writerInterrupted = true
        var byte: UInt8 = 1
        _ = Glibc.write(interruptPipe.write, &byte, 1)
    }

    /// Called by the writer with the lock held, before it looks at the state: every command so far
    /// is about to be seen, so the pipe is emptied.
    func clearWriterInterrupt() {
        guard state.writerInterrupted else { return }
        state.writerInterrupted = false
        var bytes = [UInt8](repeating: 0, count: 16)
        while read(interruptPipe.read, &bytes, bytes.count) > 0 {}
    }
}

/// A point in a play: its id and the second heard.
public struct HeardPoint: Sendable, Equatable {
    /// The play's id (as given to `play`/`setNext`).
    public var id: UInt64
    /// Seconds into the track.
    public var seconds: Double

    /// Creates a point.
    public init(id: UInt64, seconds: Double) {
        self.id = id
        self.seconds = seconds
    }
}

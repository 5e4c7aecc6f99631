// SPDX-License-Identifier: MIT

/// A track as the caller named it.
struct TrackRef: Equatable {
    var id: UInt64
    var path: String
    /// The linear factor the decoder scales this track's samples by (ReplayGain); 1: untouched.
    /// Kept with the track, so a seek or a reopen after device loss plays at the same gain.
    var gain: Double = 1
    /// The playback speed with the pitch kept (1.25: a minute in 48 s); 1: no stretcher, untouched.
    /// Kept with the track, like `gain`.
    var speed: Double = 1

    /// The source time of frame `frame` of this track's chunks at `rate`. Chunks of a track played
    /// at another speed count output frames on a scale where frame f is source frame f × speed
    /// (`TimeStretch`), so positions, seeks and resumes stay in the source's time.
    func seconds(atFrame frame: Int64, rate: Int) -> Double {
        speed == 1 ? Double(frame) / Double(rate) : Double(frame) * speed / Double(rate)
    }

    /// The source frame that frame `frame` of this track's chunks stands for (the same scale).
    func sourceFrame(atFrame frame: Int64) -> Int64 {
        speed == 1 ? frame : Int64((Double(frame) * speed).rounded())
    }
}

/// A speed change for the opening the decoder has open (`AudioEngine.setSpeed`): before its next
/// chunk it seeks back to `fromSource` (source frames; nil: to where its output got to) and goes
/// on at `speed` with a new stretcher, or none at 1.
struct Respeed: Equatable {
    var serial: UInt64
    var speed: Double
    var fromSource: Int64?
}

/// An order to the decoder thread: open `track` at `fromSeconds`.
struct DecodeJob {
    var track: TrackRef
    var fromSeconds: Double
    /// Whether the writer reports `.started` when its first frames go out (false for a seek).
    var announce: Bool
}

extension DecodeJob {
    /// The frame this play starts at, decided in one place: a live stream (`live`) joins what is
    /// on air now, whatever place it is asked for (a resume after a restart or a lost device
    /// names where listening had got to); a file starts at `fromSeconds`, rounded to a frame at
    /// `rate`, and at most at its end (`frameCount`: past it, the track plays nothing and ends at
    /// once instead of failing the seek).
    static func startFrame(fromSeconds: Double, rate: Int, frameCount: Int64?, live: Bool) -> Int64 {
        var frame = live ? 0 : Int64((fromSeconds * Double(rate)).rounded())
        if let frameCount { frame = min(frame, frameCount) }
        return frame
    }
}

/// Decoded frames of one track, in the decoder's format.
struct PCMChunk {
    /// Distinguishes two openings of the same track (a seek opens anew).
    var serial: UInt64
    var track: TrackRef
    var format: AudioFormat
    /// Frame index within the track of the first frame here.
    var startFrame: Int64
    var frames: Int
    var bytes: [UInt8]
    var announce: Bool

    /// Where frame `frame` of this chunk's track is, in source time.
    func point(atFrame frame: Int64) -> TrackPoint {
        TrackPoint(track: track, seconds: track.seconds(atFrame: frame, rate: format.sampleRate))
    }
}

/// What the decoder hands the writer, in playing order.
enum QueueItem {
    case pcm(PCMChunk)
    case trackEnd(serial: UInt64, id: UInt64)
    case failed(serial: UInt64, id: UInt64, reason: String, wasNext: Bool)

    var serial: UInt64 {
        switch self {
        case .pcm(let chunk): chunk.serial
        case .trackEnd(let serial, _), .failed(let serial, _, _, _): serial
        }
    }

    var seconds: Double {
        guard case .pcm(let chunk) = self else { return 0 }
        return Double(chunk.frames) / Double(chunk.format.sampleRate)
    }
}

/// What the decoder thread is doing.
enum DecoderPhase {
    /// Nothing to do until a job arrives.
    case idle
    /// Opening or decoding a track.
    case busy
    /// Decoded the current track to its end; will continue with the next track if one is set.
    case awaitingNext
}

/// A run of device frames belonging to one track.
struct Segment {
    var serial: UInt64
    var track: TrackRef
    var rate: Int
    var trackStartFrame: Int64
    var deviceStart: Int64
    var frames: Int64
}

/// The writer's last account of the device: frames written, frames still queued, and when.
struct LivePosition {
    var written: Int64
    var delay: Int64
    var at: Double
    var rate: Int

    /// Device frames heard at `now`, extrapolated from the last write (the device keeps playing).
    func heardFrame(now: Double) -> Int64 {
        let elapsed = Int64(max(0, now - at) * Double(rate))
        return min(written, written - delay + elapsed)
    }
}

/// A point in a track.
struct TrackPoint {
    var track: TrackRef
    var seconds: Double
}

/// Everything the caller, the decoder and the writer share; guarded by the engine's monitor.
struct EngineState {
    var shutdown = false
    /// A command made the interrupt pipe readable and the writer has not looked yet.
    var writerInterrupted = false
    /// Bumped by every command that discards what is queued (play, stop, seek, device loss).
    var generation: UInt64 = 0
    /// A track is loaded (playing or paused).
    var active = false
    var paused = false
    var volume = 100
    /// `release(token:)` calls the writer acknowledges after its next flush closes the device.
    var releaseTokens: [UInt64] = []
    /// The output's fault counters as the writer last saw them.
    var counters = DeviceCounters()
    /// `probe()` was called and the writer has not answered yet.
    var probeRequested = false

    var job: DecodeJob?
    /// The gapless successor the caller asked for; cleared once the writer starts it.
    var nextSpec: TrackRef?
    /// The serial the decoder gave `nextSpec` when it took it; nil while not taken.
    var nextTakenSerial: UInt64?
    var decoderPhase = DecoderPhase.idle
    var decoderSerial: UInt64?
    /// The id of the track `decoderSerial` is an opening of.
    var decoderTrackID: UInt64?
    /// A speed change the decoder has yet to carry out (see `Respeed`).
    var respeed: Respeed?
    /// The last speed set in place (`AudioEngine.setSpeed`): a seek of that play goes on at it.
    var speedSet: (id: UInt64, speed: Double)?
    /// Asks the decoder to abandon this serial (the caller changed the next track).
    var cancelSerial: UInt64?
    var serialCounter: UInt64 = 0

    var queue: [QueueItem] = []
    /// The settings a stream opened from now on runs with (`AudioEngine.setStreamSettings`).
    var streamSettings = StreamSettings()
    /// The HTTP stream the decoder has open (or is opening), for `AudioEngine.streamFacts`.
    var liveStream: (id: UInt64, stream: HTTPStream)?
    var queuedSeconds = 0.0
    /// The decoder filled the queue and sleeps until it falls below `refillBelowSeconds`.
    var decoderFull = false

    /// The track the writer last started (target of `seek`).
    var current: TrackRef?
    /// Whether `.started` was reported for `current`.
    var currentStarted = false
    /// The position to report while nothing live is known (paused, not yet written, device lost).
    var frozen: TrackPoint?
    /// `pause()` was called and the writer has not yet stopped the sound: on a device that only
    /// drains, what it holds is still being heard (faded out), so the position keeps following it.
    var pauseSettling = false
    var live: LivePosition?
    var segments: [Segment] = []

    mutating func newSerial() -> UInt64 {
        serialCounter += 1
        return serialCounter
    }

    mutating func clearQueue() {
        queue.removeAll()
        queuedSeconds = 0
        decoderFull = false
    }

    /// The frame heard now, mapped to its track; nil when nothing has been written since the last reset.
    func heardPoint(now: Double) -> TrackPoint? {
        guard let live else { return nil }
        return point(atDeviceFrame: live.heardFrame(now: now))
    }

    /// Device frame `frame` mapped to its track; nil when nothing has been written since the last reset.
    func point(atDeviceFrame frame: Int64) -> TrackPoint? {
        guard let segment = segments.last(where: { $0.deviceStart <= frame }) ?? segments.first else { return nil }
        let inTrack = segment.trackStartFrame + max(0, frame - segment.deviceStart)
        return TrackPoint(track: segment.track, seconds: segment.track.seconds(atFrame: inTrack, rate: segment.rate))
    }

    /// Nothing more will reach the queue unless a command arrives.
    var decoderHasNothingComing: Bool {
        guard queue.isEmpty, job == nil else { return false }
        switch decoderPhase {
        case .idle: return true
        case .busy: return false
        case .awaitingNext: return nextSpec == nil || nextTakenSerial != nil
        }
    }

    /// Discards queued audio and has the decoder reopen `track` at `seconds` (play, seek, pause fallback).
    mutating func restart(track: TrackRef, at seconds: Double, announce: Bool) {
        generation += 1
        job = DecodeJob(track: track, fromSeconds: max(0, seconds), announce: announce)
        nextTakenSerial = nil
        cancelSerial = nil
        respeed = nil
        speedSet = nil
        clearQueue()
        if decoderPhase == .awaitingNext { decoderPhase = .idle }
        current = track
        frozen = TrackPoint(track: track, seconds: max(0, seconds))
        pauseSettling = false
        live = nil
        segments = []
    }

    /// Forgets everything loaded; `keep` stays as the reported position (for a retry after device loss).
    mutating func becomeIdle(keep: TrackPoint?) {
        generation += 1
        job = nil
        nextSpec = nil
        nextTakenSerial = nil
        cancelSerial = nil
        respeed = nil
        speedSet = nil
        clearQueue()
        if decoderPhase == .awaitingNext { decoderPhase = .idle }
        active = false
        paused = false
        current = nil
        currentStarted = false
        frozen = keep
        pauseSettling = false
        live = nil
        segments = []
    }

    /// Withdraws a next track the decoder already took but the writer has not started.
    mutating func cancelTakenNext() {
        guard let serial = nextTakenSerial else { return }
        queue.removeAll { $0.serial == serial }
        queuedSeconds = queue.reduce(0) { $0 + $1.seconds }
        if decoderSerial == serial { cancelSerial = serial }
        nextTakenSerial = nil
    }
}

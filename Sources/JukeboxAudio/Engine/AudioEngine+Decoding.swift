// SPDX-License-Identifier: MIT

extension AudioEngine {
    private enum DecodeStep {
        case exit
        case open(DecodeJob, serial: UInt64, generation: UInt64, isNext: Bool)
        case read
        case respeed(Respeed)
    }

    private struct OpenTrack {
        var decoder: any PCMSource
        var job: DecodeJob
        var serial: UInt64
        var generation: UInt64
        var nextFrame: Int64
        /// Opened as the gapless next track and not a frame decoded yet (a failure then counts as the next's).
        var isUnstartedNext: Bool
        /// The track's tempo change when its speed is not 1 (a file, or an episode streamed); `nextFrame` then counts
        /// output frames (`TrackRef.seconds(atFrame:rate:)`). Its chunks keep the decoder's format.
        var stretch: TimeStretch?
    }

    /// The decoder thread: opens jobs and gapless next tracks and decodes ahead until the queue is full.
    /// It never holds the lock while in libsndfile.
    func decoderLoop() {
        var open: OpenTrack?
        while true {
            monitor.lock()
            let step = nextDecodeStep(&open)
            monitor.unlock()
            switch step {
            case .exit:
                open?.decoder.close()
                monitor.withLock { state.liveStream = nil }
                return
            case .open(let job, let serial, let generation, let isNext):
                open = openTrack(job, serial: serial, generation: generation, isNext: isNext)
            case .read:
                if let track = open { open = decodeChunk(track) }
            case .respeed(let order):
                if let track = open { open = respeeded(track, order) }
            }
        }
    }

    // Called with the lock held; waits until there is something to do.
    private func nextDecodeStep(_ open: inout OpenTrack?) -> DecodeStep {
        while true {
            if state.shutdown { return .exit }
            if let track = open {
                let cancelled = state.cancelSerial == track.serial
                if state.generation != track.generation || cancelled {
                    track.decoder.close()
                    if state.liveStream?.stream === (track.decoder as? StreamDecoder)?.stream { state.liveStream = nil }
                    open = nil
                    state.decoderSerial = nil
                    if cancelled && state.generation == track.generation {
                        state.cancelSerial = nil
                        state.decoderPhase = .awaitingNext
                    } else if state.decoderPhase == .busy {
                        state.decoderPhase = .idle
                    }
                    continue
                }
                if let order = state.respeed, order.serial == track.serial {
                    state.respeed = nil
                    return .respeed(order)
                }
                if state.queuedSeconds >= Self.decodeAheadSeconds { state.decoderFull = true }
                if state.decoderFull && state.queuedSeconds >= Self.refillBelowSeconds {
                    monitor.wait()
                    continue
                }
                state.decoderFull = false
                return .read
            }
            if let job = state.job {
                state.job = nil
                let serial = state.newSerial()
                state.decoderPhase = .busy
                state.decoderSerial = serial
                state.decoderTrackID = job.track.id
                return .open(job, serial: serial, generation: state.generation, isNext: false)
            }
            if state.decoderPhase == .awaitingNext, let next = state.nextSpec, state.nextTakenSerial == nil {
                let serial = state.newSerial()
                state.nextTakenSerial = serial
                state.decoderPhase = .busy
                state.decoderSerial = serial
                state.decoderTrackID = next.id
                return .open(DecodeJob(track: next, fromSeconds: 0, announce: true),
                             serial: serial, generation: state.generation, isNext: true)
            }
            monitor.wait()
        }
    }

    private func openTrack(_ job: DecodeJob, serial: UInt64, generation: UInt64, isNext: Bool) -> OpenTrack? {
        var result: Result<OpenTrack, DecodeError>
        do throws(DecodeError) {
            let decoder = try openSource(job.track, from: job.fromSeconds, serial: serial, generation: generation)
            let frame: Int64
            if let stream = decoder as? StreamDecoder, decoder.frameCount == nil {
                // A stream opened where it could (a file on a server at its place by a range
                // request, a live stream on air now): its frames count from where it landed.
                frame = DecodeJob.startFrame(fromSeconds: stream.startSeconds, rate: decoder.format.sampleRate,
                                             frameCount: nil, live: false)
            } else {
                // A file or an on-demand stream (HLS with ENDLIST: it knows its length) starts
                // where asked, at most at its end.
                frame = DecodeJob.startFrame(fromSeconds: job.fromSeconds, rate: decoder.format.sampleRate,
                                             frameCount: decoder.frameCount, live: false)
                if frame > 0 { try decoder.seek(toFrame: frame) }
            }
            let speed = job.track.speed
            var stretch: TimeStretch?
            // A stream too: the core asks another speed than 1 only of a podcast episode (a file on
            // a server), never of a live stream (it cannot be played faster than it arrives).
            if speed != 1 {
                guard let made = TimeStretch(speed: speed, rate: decoder.format.sampleRate, channels: decoder.format.channels) else {
                    decoder.close()
                    throw DecodeError(path: job.track.path, reason: "cannot play at speed \(speed) (\(decoder.format.channels) channels)")
                }
                stretch = made
            }
            // Stretched, chunks count output frames from the source frame divided by the speed.
            let first = stretch == nil ? frame : Int64((Double(frame) / speed).rounded())
            result = .success(OpenTrack(decoder: decoder, job: job, serial: serial, generation: generation,
                                        nextFrame: first, isUnstartedNext: isNext, stretch: stretch))
        } catch {
            result = .failure(error)
        }
        return monitor.withLock { () -> OpenTrack? in
            let stillWanted = state.generation == generation && state.cancelSerial != serial
            switch result {
            case .success(let track) where stillWanted:
                return track
            case .success(let track):
                track.decoder.close()
            case .failure(let error) where stillWanted:
                if state.liveStream?.id == job.track.id { state.liveStream = nil }
                state.queue.append(.failed(serial: serial, id: job.track.id, reason: error.reason, wasNext: isNext))
                if isNext {
                    state.nextSpec = nil
                    state.nextTakenSerial = nil
                    state.decoderPhase = .awaitingNext
                } else {
                    state.decoderPhase = .idle
                }
                state.decoderSerial = nil
                monitor.broadcast()
                return nil
            case .failure:
                break
            }
            // Abandoned while opening: the loop's next pass sees no open track.
            state.decoderSerial = nil
            if state.cancelSerial == serial && state.generation == generation {
                state.cancelSerial = nil
                state.decoderPhase = .awaitingNext
            } else if state.decoderPhase == .busy {
                state.decoderPhase = .idle
            }
            return nil
        }
    }

    /// A file through libsndfile, or an HTTP(S) URL through `HTTPStream` and the `StreamCodec` its
    /// format needs (`StreamDecoder`, which waits for its buffer to fill; a stop, play or seek
    /// meanwhile cancels it within 50 ms; a file on a server starts near `seconds` by a range
    /// request, the decoder saying where).
    private func openSource(_ track: TrackRef, from seconds: Double, serial: UInt64, generation: UInt64) throws(DecodeError) -> any PCMSource {
        guard isStreamURL(track.path) else { return try FileDecoder.open(path: track.path) }
        let settings = monitor.withLock { state.streamSettings }
        // An on-demand HLS playlist starts at the segment holding `seconds` (live ones ignore it).
        let stream = HTTPStream(url: track.path, settings: settings, startAt: seconds)
        monitor.withLock { state.liveStream = (track.id, stream) }
        return try StreamDecoder(stream: stream, startSeconds: seconds, isCancelled: { [self] in
            monitor.withLock { state.shutdown || state.generation != generation || state.cancelSerial == serial }
        })
    }

    private func decodeChunk(_ track: OpenTrack) -> OpenTrack? {
        let format = track.decoder.format
        let capacity = Self.chunkFrames * format.bytesPerFrame
        var frames = 0
        let gain = track.job.track.gain
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            frames = track.decoder.read(into: buffer.baseAddress!, frames: Self.chunkFrames)
            count = max(0, frames) * format.bytesPerFrame
            // The track's ReplayGain, here rather than in the writer's ramp (which is bounded to
            // 0...1 and follows the volume): every frame of this track from its first, whatever
            // follows, and a gapless successor's from its own first frame.
            if frames > 0 && gain != 1 {
                SampleConversion.applyGain(gain, to: buffer.baseAddress!, type: format.sample, samples: frames * format.channels)
            }
        }
        // A stream with nothing yet (buffering, reconnecting): ask again; the loop checks for commands first.
        if frames == pcmSourcePending { return track }
        var out = (bytes: bytes, frames: max(0, frames), format: format)
        if let stretch = track.stretch {
            out = Self.stretched(bytes, frames: frames, format: format, through: stretch,
                                 ending: frames <= 0 && track.decoder.failure == nil)
        }
        return monitor.withLock { () -> OpenTrack? in
            // A stale chunk is dropped; the loop then closes the decoder. So is one decoded at a
            // speed just changed: the decoder goes back to its place (`respeeded`).
            // A stream's chunk is kept: its decoder cannot go back to decode it again.
            guard state.generation == track.generation, state.cancelSerial != track.serial,
                  state.respeed?.serial != track.serial || track.decoder is StreamDecoder else { return track }
            defer { monitor.broadcast() }
            var advanced = track
            if out.frames > 0 {
                let chunk = PCMChunk(serial: track.serial, track: track.job.track, format: out.format,
                                     startFrame: track.nextFrame, frames: out.frames, bytes: out.bytes,
                                     announce: track.job.announce)
                state.queue.append(.pcm(chunk))
                state.queuedSeconds += Double(out.frames) / Double(format.sampleRate)
                advanced.nextFrame += Int64(out.frames)
            }
            // Frames went into the stretcher: the track has started, whatever came out yet.
            if frames > 0 {
                advanced.isUnstartedNext = false
                return advanced
            }
            // End of file (damaged data mid-file also ends the track: play what could be decoded),
            // unless the decoder gave up on the file (too slow, or the medium failed under the
            // read): that is a failure with its reason.
            track.decoder.close()
            if state.liveStream?.id == track.job.track.id { state.liveStream = nil }
            if let failure = track.decoder.failure {
                state.queue.append(.failed(serial: track.serial, id: track.job.track.id, reason: failure.reason,
                                           wasNext: track.isUnstartedNext))
                if track.isUnstartedNext {
                    state.nextSpec = nil
                    state.nextTakenSerial = nil
                }
            } else {
                state.queue.append(.trackEnd(serial: track.serial, id: track.job.track.id))
            }
            state.decoderSerial = nil
            state.decoderPhase = .awaitingNext
            return nil
        }
    }

    /// `order` carried out on the decoder's thread: the decoder seeks back to the source frame
    /// where the dropped audio began and the track goes on at the new speed, through a new
    /// stretcher or none (at 1 the samples pass untouched again). A seek that fails ends the
    /// track with its reason, as a damaged file does.
    ///
    /// A stream (a podcast episode from its URL) cannot go back: what is queued plays at the old
    /// speed, what the stretcher still holds is flushed out at it, and the new speed starts at
    /// the next source frame, so no audio is dropped or heard twice.
    private func respeeded(_ track: OpenTrack, _ order: Respeed) -> OpenTrack? {
        var changed = track
        let from: Int64
        let format = track.decoder.format
        var failure: String?
        if track.decoder is StreamDecoder {
            guard let flushed = flushedStretch(track) else { return track }
            changed = flushed
            from = flushed.job.track.sourceFrame(atFrame: flushed.nextFrame)
        } else {
            from = order.fromSource ?? track.job.track.sourceFrame(atFrame: track.nextFrame)
            do throws(DecodeError) {
                try track.decoder.seek(toFrame: max(0, from))
            } catch {
                failure = error.reason
            }
        }
        changed.job.track.speed = order.speed
        changed.stretch = nil
        changed.nextFrame = max(0, from)
        if failure == nil, order.speed != 1 {
            if let made = TimeStretch(speed: order.speed, rate: format.sampleRate, channels: format.channels) {
                changed.stretch = made
                changed.nextFrame = Int64((Double(max(0, from)) / order.speed).rounded())
            } else {
                failure = "cannot play at speed \(order.speed) (\(format.channels) channels)"
            }
        }
        guard let failure else { return changed }
        track.decoder.close()
        return monitor.withLock { () -> OpenTrack? in
            defer { monitor.broadcast() }
            state.decoderSerial = nil
            guard state.generation == track.generation, state.cancelSerial != track.serial else {
                // Abandoned meanwhile: as an opening abandoned (`openTrack`).
                if state.cancelSerial == track.serial && state.generation == track.generation {
                    state.cancelSerial = nil
                    state.decoderPhase = .awaitingNext
                } else if state.decoderPhase == .busy {
                    state.decoderPhase = .idle
                }
                return nil
            }
            state.queue.append(.failed(serial: track.serial, id: track.job.track.id, reason: failure, wasNext: track.isUnstartedNext))
            if track.isUnstartedNext {
                state.nextSpec = nil
                state.nextTakenSerial = nil
            }
            state.decoderPhase = .awaitingNext
            return nil
        }
    }

    /// `track` with what its stretcher still holds queued at its speed (as at its end: the
    /// flush cuts the padding, so its output stays `input / speed`); nil when the track was
    /// abandoned meanwhile (the loop then closes it).
    private func flushedStretch(_ track: OpenTrack) -> OpenTrack? {
        guard let stretch = track.stretch else { return track }
        let rest = Self.stretched([], frames: 0, format: track.decoder.format, through: stretch, ending: true)
        return monitor.withLock { () -> OpenTrack? in
            guard state.generation == track.generation, state.cancelSerial != track.serial else { return nil }
            var flushed = track
            flushed.stretch = nil
            guard rest.frames > 0 else { return flushed }
            state.queue.append(.pcm(PCMChunk(serial: track.serial, track: track.job.track, format: rest.format,
                                             startFrame: track.nextFrame, frames: rest.frames, bytes: rest.bytes,
                                             announce: track.job.announce)))
            state.queuedSeconds += Double(rest.frames) / Double(rest.format.sampleRate)
            flushed.nextFrame += Int64(rest.frames)
            monitor.broadcast()
            return flushed
        }
    }

    /// `frames` decoded frames (0 or less: the end) through `stretch`, in the decoder's format
    /// (stretched as float, then back to its sample type: the device stays as it is, so a speed
    /// change needs no new stream): what it has ready, and at the `ending` all it still holds.
    private static func stretched(_ bytes: [UInt8], frames: Int, format: AudioFormat, through stretch: TimeStretch,
                                  ending: Bool) -> (bytes: [UInt8], frames: Int, format: AudioFormat) {
        let floatFormat = AudioFormat(sampleRate: format.sampleRate, channels: format.channels, sample: .float32)
        var out: [UInt8] = []
        if frames > 0 {
            let samples = frames * format.channels
            if format.sample == .float32 {
                out = bytes.withUnsafeBytes { stretch.process($0.baseAddress!.assumingMemoryBound(to: Float.self), frames: frames) }
            } else {
                var floats = [Float](repeating: 0, count: samples)
                floats.withUnsafeMutableBytes { target in
                    bytes.withUnsafeBytes { source in
                        SampleConversion.convert(source.baseAddress!, from: format.sample, to: .float32, target.baseAddress!, samples: samples)
                    }
                }
                out = floats.withUnsafeBufferPointer { stretch.process($0.baseAddress!, frames: frames) }
            }
        }
        if ending { out += stretch.finish() }
        let outFrames = out.count / floatFormat.bytesPerFrame
        return (format.sample == .float32 ? out : converted(out, to: format), outFrames, format)
    }

    /// Float bytes as `format`'s sample type (rounded and clipped, as a device fed float would).
    private static func converted(_ floats: [UInt8], to format: AudioFormat) -> [UInt8] {
        let samples = floats.count / MemoryLayout<Float>.size
        guard samples > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: samples * format.sample.bytesPerSample) { target, count in
            floats.withUnsafeBytes { source in
                SampleConversion.convert(source.baseAddress!, from: .float32, to: format.sample, target.baseAddress!, samples: samples)
            }
            count = samples * format.sample.bytesPerSample
        }
    }
}

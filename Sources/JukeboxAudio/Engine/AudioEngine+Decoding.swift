// SPDX-License-Identifier: MIT

extension AudioEngine {
    private enum DecodeStep {
        case exit
        case open(DecodeJob, serial: UInt64, generation: UInt64, isNext: Bool)
        case read
    }

    private struct OpenTrack {
        var decoder: any PCMSource
        var job: DecodeJob
        var serial: UInt64
        var generation: UInt64
        var nextFrame: Int64
        /// Opened as the gapless next track and not a frame decoded yet (a failure then counts as the next's).
        var isUnstartedNext: Bool
        /// The track's tempo change when its speed is not 1 (a file only); its chunks are then
        /// float and `nextFrame` counts output frames (`TrackRef.seconds(atFrame:rate:)`).
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
                return .open(job, serial: serial, generation: state.generation, isNext: false)
            }
            if state.decoderPhase == .awaitingNext, let next = state.nextSpec, state.nextTakenSerial == nil {
                let serial = state.newSerial()
                state.nextTakenSerial = serial
                state.decoderPhase = .busy
                state.decoderSerial = serial
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
            // A live stream joins what is on air now; a file or an on-demand stream (HLS with
            // ENDLIST: it knows its length) starts where asked, at most at its end.
            let frame = DecodeJob.startFrame(fromSeconds: job.fromSeconds, rate: decoder.format.sampleRate,
                                             frameCount: decoder.frameCount, live: decoder is StreamDecoder && decoder.frameCount == nil)
            if frame > 0 { try decoder.seek(toFrame: frame) }
            let speed = job.track.speed
            var stretch: TimeStretch?
            if speed != 1 && !(decoder is StreamDecoder) {
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
    /// meanwhile cancels it within 50 ms).
    private func openSource(_ track: TrackRef, from seconds: Double, serial: UInt64, generation: UInt64) throws(DecodeError) -> any PCMSource {
        guard isStreamURL(track.path) else { return try FileDecoder.open(path: track.path) }
        let settings = monitor.withLock { state.streamSettings }
        // An on-demand HLS playlist starts at the segment holding `seconds` (live ones ignore it).
        let stream = HTTPStream(url: track.path, settings: settings, startAt: seconds)
        monitor.withLock { state.liveStream = (track.id, stream) }
        return try StreamDecoder(stream: stream, isCancelled: { [self] in
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
            // A stale chunk is dropped; the loop then closes the decoder.
            guard state.generation == track.generation, state.cancelSerial != track.serial else { return track }
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

    /// `frames` decoded frames (0 or less: the end) through `stretch`, as float chunks' bytes:
    /// what it has ready, and at the `ending` all it still holds.
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
        return (out, out.count / floatFormat.bytesPerFrame, floatFormat)
    }
}

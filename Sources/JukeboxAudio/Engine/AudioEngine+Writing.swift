// SPDX-License-Identifier: MIT

extension AudioEngine {
    private enum WriteStep {
        case exit
        case flush(release: Bool)
        case probe
        case pauseDevice
        case resumeDevice
        case item(QueueItem, volume: Int, starts: Bool)
        case rest(volume: Int)
        case finishIfDrained
    }

    /// The writer thread's own bookkeeping; only it touches this.
    private struct Writer {
        var output: PCMOutput?
        /// The source format the device is configured for, and the sample type it accepted.
        var sourceFormat: AudioFormat?
        var deviceSample = SampleType.int16
        var generation: UInt64 = 0
        /// Writing, ending, paused or lingering: every change is a transition of it (`WriterPhase`).
        var phase = WriterPhase.writing
        var currentSerial: UInt64?
        /// Reports held until the frames before them are heard (or the next track continues).
        var pending: [Report] = []
        var written: Int64 = 0
        var firstSampleSent = false
        var scratch: [UInt8] = []
        /// Gain, held-back tail and fades (see `FadeState`).
        var fade = FadeState()
        /// What the device holds and has not played (see `WriteHistory`).
        var history = WriteHistory()
        /// The last write returned early for a command: the rest of that step waits in `rest`.
        var interrupted = false
        /// What an interrupted step had still to write, in order; written next unless the command
        /// discards it (a new generation or a pause resets the stream).
        var rest: [(chunk: PCMChunk, starts: Bool)] = []

        var isOpen: Bool { output?.isOpen ?? false }
    }

    /// The writer thread: takes decoded chunks in order, writes them to the output and reports.
    /// It never holds the lock while in the output.
    func writerLoop() {
        var writer = Writer()
        while true {
            monitor.lock()
            let step = nextWriteStep(&writer)
            monitor.unlock()
            switch step {
            case .exit:
                // A clean end (SIGTERM, quit) is cut like a stop: faded out at once on a device that
                // rewinds, dropped on one that cannot, faded after a short buffer elsewhere.
                _ = fadeOut(&writer, bookkeeping: false)
                writer.output?.close()
                return
            case .flush(let release):
                // Fade out the held-back frames and play them out first, so nothing clicks.
                let end = fadeOut(&writer, bookkeeping: false)
                let faded = end != nil
                if release { writer.output?.close() } else if !faded { writer.output?.drop() }
                resetStream(&writer)
                writer.phase.stopLingering()
                if release { writer.sourceFormat = nil }
                // Acknowledged on any flush: when a play already followed the release, the caller
                // has resumed and nobody waits for the device any more.
                let released = monitor.withLock { () -> [UInt64] in
                    defer { state.releaseTokens = [] }
                    return state.releaseTokens
                }
                let heard = end.map { HeardPoint(id: $0.track.id, seconds: $0.seconds) }
                for token in released { report(.released(token: token, heard: heard)) }
            case .probe:
                // A device kept open (lingering after an end) is ours: free for the next play.
                let problem = writer.isOpen ? nil : makeOutputOnce(&writer).probe()
                let stillIdle = monitor.withLock { !state.active }
                if stillIdle { report(problem.map { .deviceUnavailable($0) } ?? .deviceAvailable) }
            case .pauseDevice:
                pauseDevice(&writer)
            case .resumeDevice:
                resumeDevice(&writer)
            case .item(.pcm(let chunk), let volume, let starts):
                // Restarted from the frame heard: this chunk comes again, decoded anew.
                if volume != writer.fade.volume, rewrite(at: volume, &writer) == .restarted { continue }
                let parts = writer.fade.take(chunk, volume: volume, starts: starts)
                // A rewrite cut short by another command left its rest first: these follow it.
                if writer.interrupted { writer.rest += parts } else { writeParts(parts, volume: volume, &writer) }
            case .rest(let volume):
                let pending = writer.rest
                writer.rest = []
                if volume != writer.fade.volume, rewrite(at: volume, &writer) == .restarted { continue }
                if writer.interrupted { writer.rest += pending } else { writeParts(pending, volume: volume, &writer) }
            case .item(.trackEnd(_, let id), _, _):
                // The track's own end: its held-back frames go out unchanged, before its report.
                if let tail = writer.fade.takeTail() {
                    let generation = writer.generation
                    write(tail.chunk, volume: writer.fade.volume, starts: tail.starts, &writer)
                    if writer.generation != generation { continue }
                }
                writer.pending.append(.finished(id: id))
                writer.phase.wroteEnd()
            case .item(.failed(_, let id, let reason, let wasNext), _, _):
                if writer.phase.endWritten {
                    writer.pending.append(.failed(id: id, reason: reason))
                } else {
                    if !wasNext { idleAfterFailedPlay(&writer) }
                    report(.failed(id: id, reason: reason))
                }
            case .finishIfDrained:
                finishIfDrained(&writer)
            }
        }
    }

    // Called with the lock held; waits until there is something to do.
    private func nextWriteStep(_ writer: inout Writer) -> WriteStep {
        writer.interrupted = false
        while true {
            clearWriterInterrupt()
            if state.shutdown { return .exit }
            if state.generation != writer.generation {
                writer.generation = state.generation
                return .flush(release: !state.active || state.paused)
            }
            if state.probeRequested {
                state.probeRequested = false
                if !state.active { return .probe }
            }
            if state.paused {
                if writer.isOpen && !writer.phase.isPaused { return .pauseDevice }
                state.pauseSettling = false // nothing sounds: the held point is final
                monitor.wait()
                continue
            }
            if writer.phase.isPaused { return .resumeDevice }
            if !writer.rest.isEmpty { return .rest(volume: state.volume) }
            if !state.queue.isEmpty {
                var item = state.queue.removeFirst()
                state.queuedSeconds = max(0, state.queuedSeconds - item.seconds)
                if case .pcm(var chunk) = item {
                    // The chunks that follow in the same opening go out in the same write: each
                    // device call can wake a sound server's client thread (pulse), so fewer is cheaper.
                    // Not the first chunk of an opening: `.started` is reported when its write
                    // returns, and on a short device buffer a long write returns only once most
                    // of it has played (the display would lag a skip by that much).
                    while chunk.serial == writer.currentSerial, chunk.frames < Self.writeBlockFrames, case .pcm(let more)? = state.queue.first,
                          more.serial == chunk.serial, more.format == chunk.format, more.track == chunk.track,
                          more.startFrame == chunk.startFrame + Int64(chunk.frames) {
                        state.queue.removeFirst()
                        state.queuedSeconds = max(0, state.queuedSeconds - QueueItem.pcm(more).seconds)
                        chunk.bytes += more.bytes
                        chunk.frames += more.frames
                    }
                    item = .pcm(chunk)
                }
                // Only the decoder waits for room, and only once the queue ran low.
                if state.decoderFull && state.queuedSeconds < Self.refillBelowSeconds { monitor.broadcast() }
                var starts = false
                if case .pcm(let chunk) = item, chunk.serial != writer.currentSerial {
                    writer.currentSerial = chunk.serial
                    starts = chunk.announce
                    state.current = chunk.track
                    state.currentStarted = true
                    if chunk.serial == state.nextTakenSerial {
                        state.nextSpec = nil
                        state.nextTakenSerial = nil
                    }
                }
                return .item(item, volume: state.volume, starts: starts)
            }
            if writer.phase.endWritten && state.decoderHasNothingComing { return .finishIfDrained }
            if let until = writer.phase.lingerUntil {
                let left = until - clock()
                if left <= 0 { return .flush(release: true) }
                monitor.wait(seconds: left)
                continue
            }
            monitor.wait()
        }
    }

    private func resetStream(_ writer: inout Writer) {
        writer.fade.reset()
        writer.history.reset()
        writer.rest = []
        writer.written = 0
        writer.currentSerial = nil
        writer.pending = []
        writer.phase.forgotStream()
    }

    /// The output, made on first use (on this thread, as `makeOutput` requires).
    private func makeOutputOnce(_ writer: inout Writer) -> PCMOutput {
        if let output = writer.output { return output }
        let output = makeOutput()
        output.setInterrupt(interruptPipe.read)
        writer.output = output
        return output
    }

    private func write(_ chunk: PCMChunk, volume: Int, starts: Bool, _ writer: inout Writer) {
        let output = makeOutputOnce(&writer)
        if !output.isOpen || writer.sourceFormat != chunk.format {
            if output.isOpen {
                // A new format needs a new stream: let the old one play out first. A device that
                // stands still meanwhile is lost, the old track's end unheard (see `finishIfDrained`).
                let unheard = output.delayFrames()
                let stallsBefore = output.counters.stalls
                output.drain()
                if output.counters.stalls > stallsBefore, playOutStalled(output, unheard: unheard, drainCounted: true, &writer) {
                    return
                }
                flushPending(&writer, continuing: chunk.track.id)
                output.close()
            }
            writer.written = 0
            writer.history.reset()
            monitor.withLock {
                state.live = nil
                state.segments = []
            }
            if let error = openDevice(output, for: chunk.format, &writer) {
                deviceFailed(error, fallback: chunk.point(atFrame: chunk.startFrame), &writer)
                return
            }
        }
        flushPending(&writer, continuing: chunk.track.id)

        let applying = writer.fade.prepare(for: chunk, volume: volume)
        let deviceSample = writer.deviceSample
        let result = SampleConversion.render(chunk, as: deviceSample, ramp: &writer.fade.gain, applying: applying,
                                             scratch: &writer.scratch) { buffer in
            Self.write(output, buffer, frames: chunk.frames)
        }
        if case .failure(let error) = result {
            let fallback = chunk.point(atFrame: chunk.startFrame)
            // The output may know what was really heard when it failed (written minus delay then).
            let heard = output.failurePoint.map { writer.written + Int64($0.accepted) - Int64($0.unheard) }
            deviceFailed(error, fallback: fallback, heardFrame: heard.map { ($0, writer.written, chunk.format.sampleRate) }, &writer)
            return
        }
        // A command cut the write short: only what went out is counted; the rest waits (`rest`).
        let accepted = (try? result.get()) ?? chunk.frames
        var chunk = chunk
        if accepted < chunk.frames {
            writer.interrupted = true
            writer.rest = [(chunk.frames(accepted..<chunk.frames), accepted == 0 && starts)]
            guard accepted > 0 else { return }
            chunk = chunk.frames(0..<accepted)
        }
        if starts { report(.started(id: chunk.track.id)) }
        if !writer.firstSampleSent {
            writer.firstSampleSent = true
            report(.firstSample)
        }
        let delay = Int64(output.delayFrames())
        let now = clock()
        let deviceStart = writer.written
        writer.written += Int64(chunk.frames)
        let written = writer.written
        writer.history.remember(chunk, at: deviceStart, keepBytes: output.cutMethod == .rewind, heard: written - delay)
        monitor.withLock {
            state.counters = output.counters
            guard state.generation == writer.generation else { return }
            if let last = state.segments.last, last.serial == chunk.serial, last.track == chunk.track,
               last.deviceStart + last.frames == deviceStart, last.trackStartFrame + last.frames == chunk.startFrame {
                state.segments[state.segments.count - 1].frames += Int64(chunk.frames)
            } else {
                state.segments.append(Segment(serial: chunk.serial, track: chunk.track, rate: chunk.format.sampleRate,
                                              trackStartFrame: chunk.startFrame, deviceStart: deviceStart,
                                              frames: Int64(chunk.frames)))
            }
            state.live = LivePosition(written: written, delay: delay, at: now, rate: chunk.format.sampleRate)
            let heard = written - delay
            while state.segments.count > 1 && state.segments[1].deviceStart <= heard {
                state.segments.removeFirst()
            }
        }
    }

    private static func write(_ output: PCMOutput, _ buffer: UnsafeRawPointer, frames: Int) -> Result<Int, OutputError> {
        do throws(OutputError) {
            return .success(try output.write(buffer, frames: frames))
        } catch {
            return .failure(error)
        }
    }

    // Tries the source's sample type first (bit-perfect), then the fallbacks the device may take.
    private func openDevice(_ output: PCMOutput, for format: AudioFormat, _ writer: inout Writer) -> OutputError? {
        var lastError = OutputError(kind: .unsupported, message: "no sample format accepted")
        for sample in SampleConversion.candidates(for: format.sample) {
            do throws(OutputError) {
                try output.open(format: AudioFormat(sampleRate: format.sampleRate, channels: format.channels, sample: sample))
                writer.sourceFormat = format
                writer.deviceSample = sample
                writer.phase.openedDevice()
                return nil
            } catch {
                lastError = error
                if error.kind != .unsupported { break }
            }
        }
        return lastError
    }

    /// Writes `parts` in order; when a command interrupts one, what is left of it and the parts
    /// after it wait in `writer.rest`.
    private func writeParts(_ parts: [(chunk: PCMChunk, starts: Bool)], volume: Int, _ writer: inout Writer) {
        let generation = writer.generation
        writer.interrupted = false
        for (index, part) in parts.enumerated() where writer.generation == generation {
            write(part.chunk, volume: volume, starts: part.starts, &writer)
            if writer.interrupted {
                writer.rest += parts[(index + 1)...]
                return
            }
        }
    }

    /// Sends the held reports; a held `.finished` names `continuing` as the track that follows.
    private func flushPending(_ writer: inout Writer, continuing: UInt64?) {
        let reports = writer.pending
        writer.pending = []
        writer.phase.sentReports()
        for item in reports {
            if case .finished(let id, _) = item {
                report(.finished(id: id, next: continuing))
            } else {
                report(item)
            }
        }
    }

    /// `heardFrame`: the device frame heard at the failure, frames written before the failed chunk (which
    /// starts at `fallback`) and its rate, when the output could tell.
    private func deviceFailed(_ error: OutputError, fallback: TrackPoint,
                              heardFrame: (frame: Int64, written: Int64, rate: Int)? = nil, _ writer: inout Writer) {
        let counters = writer.output?.counters
        writer.fade.reset()
        writer.output?.close()
        writer.sourceFormat = nil
        writer.pending = []
        writer.phase.forgotStream()
        writer.currentSerial = nil
        writer.written = 0
        writer.history.reset()
        writer.rest = []
        let owned = monitor.withLock { () -> Bool in
            if let counters { state.counters = counters }
            guard state.generation == writer.generation else { return false }
            var heard = state.heardPoint(now: clock()) ?? state.frozen ?? fallback
            if let exact = heardFrame {
                if exact.frame >= exact.written {
                    heard = TrackPoint(track: fallback.track,
                                       seconds: fallback.seconds + fallback.track.seconds(atFrame: exact.frame - exact.written, rate: exact.rate))
                } else if let point = state.point(atDeviceFrame: max(0, exact.frame)) {
                    heard = point
                }
            }
            state.becomeIdle(keep: heard)
            writer.generation = state.generation
            return true
        }
        if owned { report(.deviceUnavailable(error)) }
    }

    private func pauseDevice(_ writer: inout Writer) {
        guard let output = writer.output else { return }
        if output.isOpen, output.cutMethod != .drain, let end = cutQueued(output, &writer, bookkeeping: true) {
            // A long device buffer was cut short where the sound stopped. What was queued after that
            // point is gone, so the track is decoded again from there (and the device released)
            // like on a device that cannot pause; resuming fades in at that frame.
            restartAtHeard(&writer, at: end)
            return
        }
        if let end = fadeOut(&writer, bookkeeping: true) {
            // Faded out and played out: the device holds nothing, so there is nothing to pause. The
            // position held is where the sound stopped (up to one device buffer after `pause()`).
            writer.phase.paused(drained: true)
            monitor.withLock {
                guard state.generation == writer.generation else { return }
                state.frozen = end
                state.pauseSettling = false
            }
            return
        }
        do throws(OutputError) {
            try output.pause(true)
            writer.phase.paused(drained: false)
            monitor.withLock {
                guard state.generation == writer.generation else { return }
                // The sound stopped now, not when `pause()` was called: hold that frame, and make
                // it where the extrapolation restarts on resume, so the position never goes back.
                if var live = state.live {
                    let now = clock()
                    let heard = live.heardFrame(now: now)
                    live.delay = live.written - heard
                    live.at = now
                    state.live = live
                    if let point = state.point(atDeviceFrame: heard) { state.frozen = point }
                }
                state.pauseSettling = false
            }
        } catch {
            // The device cannot hold its audio: drop it and decode again from the frame heard.
            restartAtHeard(&writer)
            output.drop()
        }
    }

    private func resumeDevice(_ writer: inout Writer) {
        guard let output = writer.output else { return }
        switch writer.phase.resumed() {
        case .none:
            return
        case .fadeIn:
            // The pause was played out: nothing is held, the next frames fade in.
            writer.fade.fadeInNext = true
        case .resumeDevice:
            do throws(OutputError) {
                try output.pause(false)
            } catch {
                restartAtHeard(&writer)
                output.drop()
            }
        }
    }

    private func restartAtHeard(_ writer: inout Writer, at exact: TrackPoint? = nil) {
        monitor.withLock {
            guard state.generation == writer.generation else { return }
            let point = exact ?? state.heardPoint(now: clock()) ?? state.frozen
            guard let point else { return }
            let paused = state.paused
            if let current = state.current, current != point.track, state.nextSpec == nil { state.nextSpec = current }
            state.restart(track: point.track, at: point.seconds, announce: !state.currentStarted)
            state.paused = paused
            monitor.broadcast()
        }
    }

    /// A play failed before any of its frames were written (a file that cannot be decoded). The
    /// engine goes idle before the report, so a caller reacting to it sees it idle, but without a
    /// flush: the device stays open for `lingerSeconds` as after a natural end, and the play the
    /// caller starts next (the track after the skipped one) continues the same stream, with no
    /// reopen and nothing dropped, across any number of skipped files.
    private func idleAfterFailedPlay(_ writer: inout Writer) {
        let owned = monitor.withLock { () -> Bool in
            guard state.generation == writer.generation else { return false }
            state.becomeIdle(keep: nil)
            writer.generation = state.generation
            return true
        }
        guard owned else { return }
        resetStream(&writer)
        writer.phase.linger(until: writer.isOpen ? clock() + Self.lingerSeconds : nil)
    }

    private func finishIfDrained(_ writer: inout Writer) {
        // The device plays out its long buffer; a command meanwhile is taken at once (the next
        // step cuts what is queued), so only the last few milliseconds are waited out in `drain`.
        // A device that stands still meanwhile (its delay shrinks no more for `stallTimeout`) is
        // lost, as in `write`: the track did not end, and the frame heard is held for the resume.
        if let output = writer.output, output.isOpen, let rate = writer.sourceFormat?.sampleRate {
            let generation = writer.generation
            var delay = output.delayFrames()
            var least = delay
            var lastProgress = clock()
            while true {
                let left = Double(delay) / Double(rate)
                if left < Self.playOutSlackSeconds { break }
                let still = clock() - lastProgress
                if still >= output.stallTimeout {
                    if playOutStalled(output, unheard: delay, drainCounted: false, &writer) { return }
                    break
                }
                let interrupted = monitor.withLock { () -> Bool in
                    let changed = { self.state.generation != generation || self.state.shutdown || self.state.paused }
                    if !changed() {
                        monitor.wait(seconds: max(0.001, min(left - Self.playOutSlackSeconds * 0.8, output.stallTimeout - still)))
                    }
                    return changed()
                }
                if interrupted { return }
                delay = output.delayFrames()
                if delay < least {
                    least = delay
                    lastProgress = clock()
                }
            }
            // `drain` gives up on a device that stands still for its last few milliseconds (and counts
            // the stall): that end was not heard either.
            let stallsBefore = output.counters.stalls
            output.drain()
            if output.counters.stalls > stallsBefore, playOutStalled(output, unheard: delay, drainCounted: true, &writer) {
                return
            }
        } else {
            writer.output?.drain()
        }
        let done = monitor.withLock { () -> Bool in
            guard state.generation == writer.generation, writer.phase.endWritten, state.decoderHasNothingComing else { return false }
            state.becomeIdle(keep: nil)
            // Idle without a flush: the drained device stays open for a moment, so a play that
            // follows at once (a successor the caller named too late) continues on the same stream.
            writer.generation = state.generation
            return true
        }
        guard done else { return }
        // The linger is timed from the end, before the end is reported: whoever hears the report
        // and then reads the clock is never before the linger began.
        let lingerUntil = clock() + Self.lingerSeconds
        // A successor that failed to open still counts as the one the engine went on with.
        let failedNext = writer.pending.lazy.compactMap { report -> UInt64? in
            if case .failed(let id, _) = report { return id } else { return nil }
        }.first
        flushPending(&writer, continuing: failedNext)
        resetStream(&writer)
        writer.phase.linger(until: lingerUntil)
    }

    /// The device stood still while the end of the queue played out: lost, as a stall in `write`
    /// is. `unheard`: the frames it held when it stopped (its delay, which no longer shrank). The
    /// held reports (`.finished` and what followed it) are dropped: the track did not end, and the
    /// caller resumes it from the frame heard once the device is back. False (nothing done) when
    /// no frame of this stream can be named: the caller then ends as before.
    private func playOutStalled(_ output: PCMOutput, unheard: Int, drainCounted: Bool, _ writer: inout Writer) -> Bool {
        guard let rate = writer.sourceFormat?.sampleRate else { return false }
        let heard = max(0, writer.written - Int64(unheard))
        let written = writer.written
        let fallback = monitor.withLock { state.point(atDeviceFrame: heard) ?? state.frozen }
            ?? writer.history.point(atDeviceFrame: heard)
        guard let fallback else { return false }
        output.noteLost(stalled: !drainCounted)
        let error = OutputError(kind: .lost, message: "the audio device stalled: nothing played for \(output.stallTimeout) s")
        deviceFailed(error, fallback: fallback, heardFrame: (heard, written, rate), &writer)
        return true
    }

    /// Writes the held-back tail ramped down to silence and plays it out (`drain`); returns the track
    /// point just after it, nil when there was nothing to fade (no tail, device closed or paused).
    /// With `bookkeeping` the frames count as heard (pause); without, they belong to a generation
    /// already discarded (stop, seek, skip) and only go to the device.
    private func fadeOut(_ writer: inout Writer, bookkeeping: Bool) -> TrackPoint? {
        if let output = writer.output, output.isOpen, !writer.phase.isPaused, output.cutMethod != .drain,
           let end = cutQueued(output, &writer, bookkeeping: bookkeeping) {
            return end
        }
        guard let output = writer.output, output.isOpen, !writer.phase.isPaused,
              let (tail, starts) = writer.fade.takeTail() else {
            _ = writer.fade.takeTail()
            return nil
        }
        writer.fade.fadingOut = true
        defer { writer.fade.fadingOut = false }
        if bookkeeping {
            let generation = writer.generation
            write(tail, volume: writer.fade.volume, starts: starts, &writer)
            guard writer.generation == generation else { return nil }
        } else if writer.sourceFormat == tail.format {
            let applying = writer.fade.prepare(for: tail, volume: 0)
            _ = SampleConversion.render(tail, as: writer.deviceSample, ramp: &writer.fade.gain, applying: applying,
                                        scratch: &writer.scratch) { Self.write(output, $0, frames: tail.frames) }
        }
        output.drain()
        return tail.point(atFrame: tail.startFrame + Int64(tail.frames))
    }

    /// Takes back what a long device buffer holds, so a command is heard at once: on a device that
    /// rewinds, all but `rewindKeepSeconds` are taken back and the first frames taken back are
    /// written again faded out (then played out: about 25 ms); on one that only drops, the sound
    /// stops at once at the frame the device had reached (no fade). Returns the track point where the
    /// sound stops (nothing after it is heard or counted); nil when there was too little to cut
    /// (the caller then fades the held-back tail as on a short buffer).
    private func cutQueued(_ output: PCMOutput, _ writer: inout Writer, bookkeeping: Bool) -> TrackPoint? {
        guard let format = writer.sourceFormat else { return nil }
        let rate = format.sampleRate
        switch output.cutMethod {
        case .drain:
            return nil
        case .drop:
            let heard = max(0, writer.written - Int64(output.delayFrames()))
            guard let point = writer.history.point(atDeviceFrame: heard) else { return nil }
            output.drop()
            _ = writer.fade.takeTail()
            writer.fade.reset()
            takeBack(to: heard, &writer, bookkeeping: bookkeeping)
            return point
        case .rewind:
            let fadeFrames = GainRamp.frames(rate: rate)
            let keep = Int(Double(rate) * Self.rewindKeepSeconds)
            let rewound = output.rewind(keeping: keep, atLeast: fadeFrames)
            guard rewound > 0 else { return nil }
            let from = writer.written - Int64(rewound)
            _ = writer.fade.takeTail()
            guard let faded = writer.history.frames(from: from, count: fadeFrames) else {
                // Not held (cannot happen while the history covers the buffer): stop where it is.
                output.drop()
                let point = writer.history.point(atDeviceFrame: from)
                writer.fade.reset()
                takeBack(to: from, &writer, bookkeeping: bookkeeping)
                return point
            }
            takeBack(to: from, &writer, bookkeeping: bookkeeping)
            writer.fade.fadingOut = true
            defer { writer.fade.fadingOut = false }
            if bookkeeping {
                write(faded, volume: writer.fade.volume, starts: false, &writer)
            } else {
                let applying = writer.fade.prepare(for: faded, volume: 0)
                _ = SampleConversion.render(faded, as: writer.deviceSample, ramp: &writer.fade.gain, applying: applying,
                                            scratch: &writer.scratch) { Self.write(output, $0, frames: faded.frames) }
            }
            output.drain()
            return faded.point(atFrame: faded.startFrame + Int64(faded.frames))
        }
    }

    /// Forgets what was written from device frame `frame` on (taken back from the device).
    private func takeBack(to frame: Int64, _ writer: inout Writer, bookkeeping: Bool) {
        writer.written = frame
        writer.history.truncate(at: frame)
        guard bookkeeping else { return }
        monitor.withLock {
            guard state.generation == writer.generation else { return }
            state.segments.removeAll { $0.deviceStart >= frame }
            if let last = state.segments.last, last.deviceStart + last.frames > frame {
                state.segments[state.segments.count - 1].frames = frame - last.deviceStart
            }
            if let live = state.live {
                state.live = LivePosition(written: frame, delay: 0, at: clock(), rate: live.rate)
            }
        }
    }

    private enum Rewrite { case none, rewritten, restarted }

    /// A volume change is heard at once, not after the long device buffer. On a device that rewinds,
    /// what is queued beyond `rewindKeepSeconds` is taken back and written again from the history,
    /// the gain ramping from the old volume to the new one (`GainRamp`, no step). On one that only
    /// drops (pulse, PipeWire, the test device), what is queued is dropped at the frame the device
    /// had reached and the track is decoded again from there (`restartAtHeard`), fading in at the
    /// new volume: a cut of a few milliseconds (measured in `jukebox-bench latency`). The history
    /// keeps no audio for such a device, as a second of it would cost as much memory as the rest
    /// of the player's heap; decoding it again costs a seek. The writer reads the newest volume at
    /// each step, so changes that come while it writes cost one cut. On a device that only drains,
    /// and when less than `minimumCutSeconds` is queued, the change applies to frames written from
    /// now on.
    private func rewrite(at volume: Int, _ writer: inout Writer) -> Rewrite {
        guard let output = writer.output, output.isOpen, !writer.phase.isPaused,
              let format = writer.sourceFormat else { return .none }
        switch output.cutMethod {
        case .drain:
            return .none
        case .drop:
            // A cut costs a moment of silence: not worth it for what is heard within the target anyway.
            guard Double(output.delayFrames()) > Double(format.sampleRate) * Self.minimumCutSeconds,
                  let heard = cutQueued(output, &writer, bookkeeping: true) else { return .none }
            writer.fade.volume = volume
            restartAtHeard(&writer, at: heard)
            return .restarted
        case .rewind:
            let end = writer.written
            let keep = Int(Double(format.sampleRate) * Self.rewindKeepSeconds)
            let rewound = output.rewind(keeping: keep, atLeast: 1)
            guard rewound > 0 else { return .none }
            let from = end - Int64(rewound)
            var parts: [PCMChunk] = []
            var position = from
            while position < end, let part = writer.history.frames(from: position, count: Int(end - position)) {
                parts.append(part)
                position += Int64(part.frames)
            }
            takeBack(to: from, &writer, bookkeeping: true)
            // The frames taken back were written at the old volume: the ramp starts from there.
            writer.fade.gain.jump(to: VolumeCurve.gain(percent: writer.fade.volume))
            writeParts(parts.map { ($0, false) }, volume: volume, &writer)
            writer.fade.volume = volume
            return .rewritten
        }
    }
}

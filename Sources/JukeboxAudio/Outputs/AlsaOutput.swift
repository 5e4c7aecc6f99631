// SPDX-License-Identifier: MIT
import CALSA
import Glibc
import JukeboxSystem

/// Plays PCM through an ALSA device (`default`, `hw:CARD=DAC`, `plughw:0`, `file:FILE=/tmp/x.raw,FORMAT=raw`…).
///
/// Opens non-blocking so a busy device fails at once (`.busy`, with the holder when /proc or the
/// device's lock file names it) and stays non-blocking: writes wait for room in `poll` with a timeout,
/// so a stalled device cannot block them forever (alsa-lib 1.2.8 can). Buffer about a second in 4
/// periods, refilled when half of it is free; commands cut it short (`rewind`, `drop`). Underruns and suspends are recovered inside `write` (bounded) and counted; an unplugged or
/// broken device, or one that consumes nothing for `stallTimeout` seconds, throws `.lost`.
/// Use from one thread at a time.
public final class AlsaOutput: PCMOutput {
    /// The ALSA device name given at creation.
    public let device: String
    /// Seconds a device may consume nothing while a write waits before it counts as lost (a stall).
    public var stallTimeout = 2.0
    /// Faults met so far, over all streams of this output.
    public private(set) var counters = DeviceCounters()
    /// Times a write slept waiting for room (each poll or sleep of the wait), over all streams:
    /// one per refill is the aim (a diagnostic; `AlsaRefillTests` reads it where the thread's
    /// context switches are the emulator's too).
    public private(set) var roomWaits = 0
    /// After a failed `write`: frames of that call queued, and frames not heard at the failure.
    public private(set) var failurePoint: (accepted: Int, unheard: Int)?
    private let configText: String?
    private var config: OpaquePointer?
    private var pcm: OpaquePointer?
    private var format: AudioFormat?
    private var canPause = false
    /// What the stream is doing (closed, open, paused): every change is a transition of it.
    private(set) var streamState = AlsaStreamState.closed
    private var pollFds: [pollfd] = []
    /// The last delay read from the device (for the frame heard at a loss). Kept across an xrun
    /// or suspend recovery: a card that goes right after one must not lose what it held.
    private var lastDelay: Int?
    /// Frames written since `lastDelay` was read: queued after it, so not heard at a loss either.
    private var writtenSinceDelay = 0
    /// Frames written since the stream opened (what a loss can say was not heard, at most).
    private var streamWritten = 0
    /// Readable while the engine has a command for the writer (see `setInterrupt`); -1: none.
    private var interruptFD: Int32 = -1
    /// The device buffer of the open stream, in frames.
    public private(set) var bufferFrames = 0
    /// The open stream's `avail_min`: the room a waiting write wakes for, in frames.
    private var availMinFrames = 0
    /// How queued frames are taken back from the open stream (see `CutMethod`).
    public private(set) var cutMethod = CutMethod.drain

    /// The device buffer asked for: about a second (the driver may round it).
    static let bufferMicroseconds: UInt32 = 1_000_000
    /// Periods per buffer (the pulse plugin wants at least 3; it asks for data once a period).
    static let periodsPerBuffer: UInt32 = 3
    /// Seconds queued before a stream starts (or half the buffer, if less).
    static let startSeconds = 0.08

    /// Creates a closed output for `device`; nothing is opened until `open(format:)`. With
    /// `configText` (alsa.conf syntax, e.g. `pcm.x { type … }` and `pcm_type.…`), `device` is looked up
    /// in that configuration alone (`snd_pcm_open_lconf`) instead of the system's and the user's.
    public init(device: String, configText: String? = nil) {
        self.device = device
        self.configText = configText
    }

    deinit {
        close()
        if let config { snd_config_delete(config) }
    }

    /// Whether the machine has at least one sound card (`snd_card_next`).
    public static func hasSoundCard() -> Bool {
        var card: Int32 = -1
        return snd_card_next(&card) == 0 && card >= 0
    }

    /// Whether a stream is open.
    public var isOpen: Bool { streamState.isOpen }

    /// Opens and configures the device for exactly `format` (interleaved, rate not resampled by `hw:`).
    /// Throws `.busy`, `.lost`, `.unsupported` (format, rate or channels refused) or `.other`.
    public func open(format: AudioFormat) throws(OutputError) {
        close()
        let handle = try openHandle()
        // Stay non-blocking (also for ioplug's drain, which reads its own flag): every wait is ours.
        snd_pcm_nonblock(handle, 1)
        do throws(OutputError) {
            try configure(handle, format)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        self.format = format
        streamState.opened()
        forgetDelay()
        let count = max(0, Int(snd_pcm_poll_descriptors_count(handle)))
        pollFds = [pollfd](repeating: pollfd(), count: count)
        if count > 0 {
            let got = pollFds.withUnsafeMutableBufferPointer {
                snd_pcm_poll_descriptors(handle, $0.baseAddress, UInt32(count))
            }
            if got < 0 { pollFds = [] }
        }
    }

    /// Opens the device non-blocking and closes it at once: the cheap check a waiting player makes
    /// before it reopens and decodes a track. Nil when it opened; else the error `open` would throw.
    public func probe() -> OutputError? {
        guard !streamState.isOpen else { return nil }
        do throws(OutputError) {
            snd_pcm_close(try openHandle())
            return nil
        } catch {
            return error
        }
    }

    /// `snd_pcm_open` non-blocking, in the given configuration or the system's.
    private func openHandle() throws(OutputError) -> OpaquePointer {
        var handle: OpaquePointer?
        let rc: Int32
        if let configText {
            if config == nil { config = try Self.loadConfig(configText, device: device) }
            rc = snd_pcm_open_lconf(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK, config)
        } else {
            rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        }
        guard rc >= 0, let handle else { throw openError(rc) }
        return handle
    }

    /// The error for a failed `snd_pcm_open`, naming the holder of a busy device when it can.
    private func openError(_ rc: Int32) -> OutputError {
        var error = AlsaErrors.openError(rc, device: device)
        if error.kind == .busy, let lock = lockFile(), let holder = BusyHolder.fromLockFile(lock) {
            error.holder = holder
        }
        return error
    }

    private static func loadConfig(_ text: String, device: String) throws(OutputError) -> OpaquePointer {
        var top: OpaquePointer?
        guard snd_config_top(&top) >= 0, let top else {
            throw OutputError(kind: .other, message: "\(device): out of memory")
        }
        var input: OpaquePointer?
        var rc = text.withCString { snd_input_buffer_open(&input, $0, -1) }
        if rc >= 0, let input {
            rc = snd_config_load(top, input)
            snd_input_close(input)
        }
        guard rc >= 0 else {
            snd_config_delete(top)
            throw OutputError(kind: .other, message: "\(device): bad configuration: \(AlsaErrors.text(rc))")
        }
        return top
    }

    /// The `lock` file the device's own configuration names (the test device's), if any.
    private func lockFile() -> String? {
        if let config { return Self.lockFile(in: config, device: device) }
        // A device defined in ~/.asoundrc or /etc/asound.conf: look in the global configuration.
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return nil }
        defer { snd_config_unref(top) }
        return Self.lockFile(in: top, device: device)
    }

    private static func lockFile(in config: OpaquePointer, device: String) -> String? {
        var node: OpaquePointer?
        guard snd_config_search(config, "pcm.\(device).lock", &node) >= 0, let node else { return nil }
        var value: UnsafePointer<CChar>?
        guard snd_config_get_string(node, &value) >= 0, let value else { return nil }
        return String(cString: value)
    }

    private func configure(_ handle: OpaquePointer, _ format: AudioFormat) throws(OutputError) {
        var params: OpaquePointer?
        // snd_pcm_hw_params_alloca is a macro Swift cannot call.
        guard snd_pcm_hw_params_malloc(&params) == 0, let params else {
            throw OutputError(kind: .other, message: "\(device): out of memory")
        }
        defer { snd_pcm_hw_params_free(params) }

        func check(_ code: Int32, _ what: String, kind: OutputError.Kind = .unsupported) throws(OutputError) {
            if code < 0 {
                throw OutputError(kind: kind, message: "\(device): \(what): \(AlsaErrors.text(code))")
            }
        }
        try check(snd_pcm_hw_params_any(handle, params), "no configurations", kind: .other)
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access refused")
        try check(snd_pcm_hw_params_set_format(handle, params, Self.alsaFormat(format.sample)), "sample format \(format.sample) refused")
        try check(snd_pcm_hw_params_set_channels(handle, params, UInt32(format.channels)), "\(format.channels) channels refused")
        try check(snd_pcm_hw_params_set_rate(handle, params, UInt32(format.sampleRate), 0), "rate \(format.sampleRate) Hz refused")
        // A long buffer (about a second) lets every layer sleep long: the writer refills it a few
        // times a second, and a sound server behind a plugin (pulse) is asked for data as rarely.
        // Commands do not wait for it: `cut` rewinds or drops what is queued (see `cut`).
        var bufferTime = Self.bufferMicroseconds
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_buffer_time_near(handle, params, &bufferTime, &dir), "buffer time refused")
        var periodTime: UInt32 = bufferTime / Self.periodsPerBuffer
        dir = 0
        try check(snd_pcm_hw_params_set_period_time_near(handle, params, &periodTime, &dir), "period time refused")
        try check(snd_pcm_hw_params(handle, params), "hardware parameters refused")
        canPause = snd_pcm_hw_params_can_pause(params) != 0
        var bufferSize: snd_pcm_uframes_t = 0
        var periodSize: snd_pcm_uframes_t = 0
        _ = snd_pcm_hw_params_get_buffer_size(params, &bufferSize)
        dir = 0
        _ = snd_pcm_hw_params_get_period_size(params, &periodSize, &dir)
        self.bufferFrames = Int(bufferSize)
        // Start the stream only once `startSeconds` are queued. ALSA's default starts it at the first
        // frame, i.e. with one decoded chunk (~46 ms) queued, so a slow next decode underran at every
        // open (seen by board/hil as a gap 31 ms into a bit-exact loopback recording). drain() starts
        // a stream that holds less. On a kernel-backed PCM the writer sleeps until half the buffer is
        // free (avail_min), so it wakes about twice a buffer, not once a period. An external plugin
        // keeps avail_min at a period: pulse's poll reports room once a period is free, and with a
        // larger avail_min libasound would refuse that room (EAGAIN) while poll kept waking the writer.
        let start = min(bufferSize / 2, snd_pcm_uframes_t(Self.startSeconds * Double(format.sampleRate)))
        let cut = Self.cutMethod(of: handle)
        let availMin = cut == .rewind ? max(periodSize, bufferSize / 2) : periodSize
        var sw: OpaquePointer?
        if bufferSize > 0, snd_pcm_sw_params_malloc(&sw) == 0, let sw {
            defer { snd_pcm_sw_params_free(sw) }
            if snd_pcm_sw_params_current(handle, sw) == 0,
               snd_pcm_sw_params_set_start_threshold(handle, sw, max(1, start)) == 0,
               snd_pcm_sw_params_set_avail_min(handle, sw, availMin) == 0 {
                _ = snd_pcm_sw_params(handle, sw)
            }
        }
        self.availMinFrames = Self.appliedAvailMin(handle) ?? Int(periodSize)
        self.cutMethod = cut
        try check(snd_pcm_prepare(handle), "prepare failed", kind: .lost)
    }

    /// Kernel-backed PCMs (and ALSA's own plugins over them) take back queued frames for real with
    /// `snd_pcm_rewind`. An external plugin (`ioplug`: pulse, PipeWire, the test device) has already
    /// passed written frames on, and its rewind only moves a pointer: those and the rest are cut
    /// with `snd_pcm_drop`. (A `plug` over an external plugin rewinds only if that plugin follows its
    /// pointer going back: pulse does not; the test device does, and the benchmark stacks `plug`
    /// on it to stand in for a kernel-backed device.)
    private static func cutMethod(of handle: OpaquePointer) -> CutMethod {
        switch snd_pcm_type(handle) {
        case SND_PCM_TYPE_HW, SND_PCM_TYPE_DMIX, SND_PCM_TYPE_PLUG, SND_PCM_TYPE_SOFTVOL, SND_PCM_TYPE_HOOKS,
             SND_PCM_TYPE_LINEAR, SND_PCM_TYPE_ROUTE, SND_PCM_TYPE_RATE:
            return .rewind
        default:
            return .drop
        }
    }

    /// Takes back queued frames, leaving about `keeping` frames ahead of the play point, when at
    /// least `atLeast` can be taken; returns the frames taken back (0 when the device cannot rewind
    /// or holds too little).
    public func rewind(keeping: Int, atLeast: Int) -> Int {
        guard let pcm, cutMethod == .rewind, streamState.takesWrites else { return 0 }
        // snd_pcm_rewindable counts from the play pointer libasound last read, which may be up to
        // half a buffer old (the writer sleeps until half is free): snd_pcm_avail reads it afresh.
        // Without this, a plugin that does not clamp the rewind itself (ioplug under plug: the
        // test device) took back frames already played, so they were heard twice after a pause
        // (jukebox-bench latency: 54 to 10358 frames), and the 10 ms kept ahead were not kept.
        _ = snd_pcm_avail(pcm)
        let rewindable = Int(snd_pcm_rewindable(pcm))
        guard rewindable - keeping >= max(1, atLeast) else { return 0 }
        let done = max(0, Int(snd_pcm_rewind(pcm, snd_pcm_uframes_t(rewindable - keeping))))
        // The newest frames went back: those written since the last delay reading first.
        let newer = min(writtenSinceDelay, done)
        streamWritten = max(0, streamWritten - done)
        writtenSinceDelay -= newer
        lastDelay = lastDelay.map { max(0, $0 - (done - newer)) }
        return done
    }

    static func alsaFormat(_ sample: SampleType) -> snd_pcm_format_t {
        switch sample {
        case .int16: SND_PCM_FORMAT_S16_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    /// Makes a waiting `write` return early while `fd` is readable.
    public func setInterrupt(_ fd: Int32) { interruptFD = fd }

    /// Writes all frames, waiting (in `poll`, never spinning) while the device buffer is full; returns
    /// early (fewer frames) when the interrupt descriptor is readable. Recovers
    /// up to a few xruns or suspends per call and counts them; throws `.lost` when the device is gone,
    /// recovery keeps failing, or nothing was consumed for `stallTimeout` seconds (`failurePoint` then
    /// says what was heard).
    public func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard let pcm, let format, frames > 0, streamState.takesWrites else { return 0 }
        failurePoint = nil
        var done = 0
        var recoveries = 0
        var lastProgress = monotonicNow()
        // What the next writei asks for: the rest, or the room a wake found below avail_min.
        var take = frames
        while done < frames {
            let n = snd_pcm_writei(pcm, buf + done * format.bytesPerFrame, snd_pcm_uframes_t(take))
            take = frames - done - max(0, Int(n))
            if n > 0 {
                // No delay read here: the caller reads it once per write, and a wait below notes it.
                done += Int(n)
                writtenSinceDelay += Int(n)
                streamWritten += Int(n)
                recoveries = 0
                lastProgress = monotonicNow()
                continue
            }
            let code = n == 0 ? -EAGAIN : Int32(n)
            if code == -EAGAIN {
                let waited = monotonicNow() - lastProgress
                if waited >= stallTimeout {
                    counters.stalls += 1
                    counters.lost += 1
                    // The device stood still: what it had not played when it stopped, it never played.
                    failurePoint = (done, unheardAtLoss())
                    throw OutputError(kind: .lost, message: "\(device): stalled: nothing played for \(stallTimeout) s")
                }
                // Room comes once half the buffer is free (avail_min): about half a second.
                switch waitForRoom(pcm, seconds: min(1, stallTimeout - waited)) {
                case .interrupted: return done
                case .room: break
                case .below(let room): take = min(take, room)
                }
                noteDelay(pcm)
                continue
            }
            if code == -EINTR { continue }
            recoveries += 1
            if code == -EPIPE { counters.xruns += 1 }
            if code == -ESTRPIPE { counters.suspends += 1 }
            if (code == -EPIPE || code == -ESTRPIPE) && recoveries <= 5 && recover(pcm, code) {
                counters.recoveries += 1
                lastProgress = monotonicNow()
                // `lastDelay` stays: a card lost before the next reading resumes from it (an
                // xrun dropped what was queued, so that repeats a little; nothing is skipped).
                continue
            }
            // -ENODEV (unplugged), -EIO, -EBADFD or a failed recovery: the device is gone.
            counters.lost += 1
            failurePoint = (done, unheardAtLoss())
            throw AlsaErrors.streamError(code, device: device, doing: "write")
        }
        return done
    }

    // snd_pcm_recover would wait for a resume in an unbounded sleep(1) loop: bounded here.
    private func recover(_ pcm: OpaquePointer, _ code: Int32) -> Bool {
        if code == -ESTRPIPE {
            for _ in 0..<20 {
                let rc = snd_pcm_resume(pcm)
                if rc == 0 { return true }
                if rc != -EAGAIN { break }
                sleepSeconds(0.05)
            }
        }
        return snd_pcm_prepare(pcm) >= 0
    }

    /// What ended a wait for room.
    private enum Wake {
        /// The interrupt descriptor is readable: the engine has a command.
        case interrupted
        /// The device reports room (or an error), or the time is up: write what fits.
        case room
        /// The device woke it with this much room, below `avail_min` but worth a write.
        case below(Int)
    }

    /// Sleeps until the device reports room (or an error), the interrupt descriptor is readable,
    /// or `seconds` pass.
    ///
    /// A descriptor may wake it without `avail_min` frames free: the test device's timer ticks once
    /// a period while `avail_min` is half the buffer under `plug` (and dmix's slave timer ticks at
    /// the slave's periods the same way); a stalled device's timer goes on ticking. With at least
    /// half of `avail_min` free, that room is written at once (`.below`): one wake a period. With
    /// less, it waits on the same descriptors only until `avail_min` frames would have been played
    /// at the stream's rate. (A fixed 5 ms retry woke once more for nothing and then usually waited
    /// for the next tick, a period later, letting the queue fall to a third of the buffer.) The
    /// caller's stall check runs after every return.
    private func waitForRoom(_ pcm: OpaquePointer, seconds: Double) -> Wake {
        roomWaits += 1
        guard !pollFds.isEmpty else {
            sleepSeconds(min(seconds, 0.01))
            return .room
        }
        var fds = pollFds
        if interruptFD >= 0 { fds.append(pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)) }
        let deadline = monotonicNow() + seconds
        var wait = seconds, instant = 0
        while true {
            for i in fds.indices { fds[i].revents = 0 }
            let polled = monotonicNow()
            let ready = poll(&fds, nfds_t(fds.count), Int32(max(1, (wait * 1000).rounded(.up))))
            guard ready > 0 else { return .room }
            if interruptFD >= 0, fds[fds.count - 1].revents != 0 { return .interrupted }
            var revents: UInt16 = 0
            _ = snd_pcm_poll_descriptors_revents(pcm, &fds, UInt32(pollFds.count), &revents)
            if revents & UInt16(POLLOUT | POLLERR) != 0 { return .room }
            // Woken without room. An error shows at the write, which recovers it or throws.
            let now = monotonicNow(), avail = Int(snd_pcm_avail_update(pcm))
            guard avail >= 0, let rate = format?.sampleRate, rate > 0, now < deadline else { return .room }
            if avail > 0, avail * 2 >= availMinFrames { return .below(avail) }
            wait = min(deadline - now, max(0.001, Double(max(0, availMinFrames - avail)) / Double(rate)))
            // The poll or the sleep below: another wait of the same refill.
            roomWaits += 1
            // A descriptor that stays readable without room would spin here: after two wakes in a
            // row that came at once (one can be a tick that was already due), sleep instead.
            instant = now - polled < 0.0005 ? instant + 1 : 0
            if instant >= 2 { return sleepListening(wait) ? .interrupted : .room }
        }
    }

    /// Sleeps `seconds`, returning early (true) when the interrupt descriptor becomes readable.
    private func sleepListening(_ seconds: Double) -> Bool {
        guard interruptFD >= 0 else {
            sleepSeconds(seconds)
            return false
        }
        var fd = pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, Int32(max(1, (seconds * 1000).rounded(.up)))) > 0 && fd.revents != 0
    }

    /// The `avail_min` the device took (it may round the one asked for); nil when unreadable.
    private static func appliedAvailMin(_ handle: OpaquePointer) -> Int? {
        var sw: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&sw) == 0, let sw else { return nil }
        defer { snd_pcm_sw_params_free(sw) }
        var frames: snd_pcm_uframes_t = 0
        guard snd_pcm_sw_params_current(handle, sw) == 0, snd_pcm_sw_params_get_avail_min(sw, &frames) == 0, frames > 0 else { return nil }
        return Int(frames)
    }

    private func noteDelay(_ pcm: OpaquePointer) {
        var delay: snd_pcm_sframes_t = 0
        if snd_pcm_delay(pcm, &delay) >= 0 { rememberDelay(Int(delay)) }
    }

    private func rememberDelay(_ frames: Int) {
        lastDelay = max(0, frames)
        writtenSinceDelay = 0
    }

    private func forgetDelay() {
        lastDelay = nil
        writtenSinceDelay = 0
        streamWritten = 0
    }

    /// Frames not heard when the device was lost: the last delay read, plus what was written
    /// after it. No estimate of what the card played since that reading: a card that vanishes
    /// often stops playing before the failure shows (a USB card stops, its driver goes later),
    /// and an estimate then skipped what sat in its buffer (0.4-1.0 s). Resuming from the last
    /// delay known repeats at most what was played between that reading and the loss. With no
    /// reading in this stream, everything it was given counts as unheard.
    private func unheardAtLoss() -> Int {
        guard let lastDelay else { return streamWritten }
        return min(streamWritten, lastDelay + writtenSinceDelay)
    }

    /// Frames queued and not yet heard (`snd_pcm_delay`); 0 when stopped, underrun or on error.
    public func delayFrames() -> Int {
        guard let pcm else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &delay) >= 0 else { return 0 }
        // Also the last delay known, for the frame heard if a later write fails.
        rememberDelay(Int(delay))
        return max(0, Int(delay))
    }

    /// Pauses or resumes with `snd_pcm_pause`, keeping queued frames. Throws `.unsupported` when the device
    /// cannot pause (the Pi headphone jack): the engine then drops and rewrites from the heard position.
    public func pause(_ on: Bool) throws(OutputError) {
        guard let pcm else { return }
        // Paused while nothing is playing (not yet started, or underrun): there is nothing to hold,
        // and snd_pcm_pause would fail with -EBADFD. Writes are refused until resume.
        let state = snd_pcm_state(pcm)
        switch streamState.pause(on, canPause: canPause, running: state == SND_PCM_STATE_RUNNING,
                                 devicePaused: state == SND_PCM_STATE_PAUSED) {
        case .none:
            return
        case .refuse:
            throw OutputError(kind: .unsupported, message: "\(device): cannot pause")
        case .pauseDevice(let on):
            let rc = snd_pcm_pause(pcm, on ? 1 : 0)
            if rc < 0 { throw AlsaErrors.streamError(rc, device: device, doing: on ? "pause" : "resume") }
            streamState.pauseDone(on)
        }
    }

    /// Discards queued frames (`snd_pcm_drop`) and prepares the stream for new writes.
    public func drop() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
        emptied()
    }

    /// The queue is empty (dropped or played out): a loss before the next write loses nothing of it.
    private func emptied() {
        streamState.emptied()
        forgetDelay()
        lastDelay = 0
    }

    /// Plays out queued frames (`snd_pcm_drain`, waiting in bounded sleeps) and prepares the stream for
    /// new writes. Gives up (dropping the rest) when the device consumes nothing for `stallTimeout`
    /// with frames still queued: a stall, counted. An empty queue whose drain has not ended is
    /// waited for as long and is no stall: every frame was heard.
    public func drain() {
        guard let pcm, let format else { return }
        if case .pauseDevice(let on) = streamState.draining() { _ = snd_pcm_pause(pcm, on ? 1 : 0) }
        var rc = snd_pcm_drain(pcm)
        var least = Int.max
        var lastProgress = monotonicNow()
        // The state tells when the drain is over, not the answer: a kernel driver's non-blocking
        // drain answers EAGAIN to every call, also once the stream is back in SETUP (seen on
        // snd-aloop in board/hil: the drain waited out the whole stall timeout after each track).
        while rc == -EAGAIN, snd_pcm_state(pcm) == SND_PCM_STATE_DRAINING {
            var delay: snd_pcm_sframes_t = 0
            let left = snd_pcm_delay(pcm, &delay) >= 0 ? max(0, Int(delay)) : 0
            let now = monotonicNow()
            if left < least {
                least = left
                lastProgress = now
            } else if now - lastProgress >= stallTimeout {
                if left > 0 { counters.stalls += 1 }
                break
            }
            sleepSeconds(min(0.05, max(0.002, Double(left) / Double(format.sampleRate))))
            rc = snd_pcm_drain(pcm)
        }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
        emptied()
    }

    /// Counts a loss the engine found outside `write` (see `PCMOutput.noteLost`).
    public func noteLost(stalled: Bool) {
        if stalled { counters.stalls += 1 }
        counters.lost += 1
    }

    /// Closes the device; safe to call when closed.
    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
        format = nil
        streamState.closed()
        pollFds = []
        forgetDelay()
        bufferFrames = 0
        cutMethod = .drain
    }
}

// SPDX-License-Identifier: MIT
import CALSA
import Glibc

/// Plays PCM through an ALSA device (`default`, `hw:CARD=DAC`, `plughw:0`, `file:FILE=/tmp/x.raw,FORMAT=raw`…).
///
/// Opens non-blocking so a busy device fails at once (`.busy`, with the holder when /proc names it),
/// then writes in blocking mode. Buffer about 200 ms in 4 periods. Underruns and suspends are recovered
/// inside `write` (bounded); an unplugged or broken device throws `.lost`. Use from one thread at a time.
public final class AlsaOutput: PCMOutput {
    /// The ALSA device name given at creation.
    public let device: String
    private var pcm: OpaquePointer?
    private var format: AudioFormat?
    private var canPause = false
    private var devicePaused = false

    /// Creates a closed output for `device`; nothing is opened until `open(format:)`.
    public init(device: String) {
        self.device = device
    }

    deinit { close() }

    /// Whether the machine has at least one sound card (`snd_card_next`).
    public static func hasSoundCard() -> Bool {
        var card: Int32 = -1
        return snd_card_next(&card) == 0 && card >= 0
    }

    /// Whether a stream is open.
    public var isOpen: Bool { pcm != nil }

    /// Opens and configures the device for exactly `format` (interleaved, rate not resampled by `hw:`).
    /// Throws `.busy`, `.lost`, `.unsupported` (format, rate or channels refused) or `.other`.
    public func open(format: AudioFormat) throws(OutputError) {
        close()
        var handle: OpaquePointer?
        let rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard rc >= 0, let handle else { throw AlsaErrors.openError(rc, device: device) }
        snd_pcm_nonblock(handle, 0)
        do throws(OutputError) {
            try configure(handle, format)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        self.format = format
        devicePaused = false
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
        var bufferTime: UInt32 = 200_000
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_buffer_time_near(handle, params, &bufferTime, &dir), "buffer time refused")
        var periodTime: UInt32 = bufferTime / 4
        dir = 0
        try check(snd_pcm_hw_params_set_period_time_near(handle, params, &periodTime, &dir), "period time refused")
        try check(snd_pcm_hw_params(handle, params), "hardware parameters refused")
        canPause = snd_pcm_hw_params_can_pause(params) != 0
        try check(snd_pcm_prepare(handle), "prepare failed", kind: .lost)
    }

    static func alsaFormat(_ sample: SampleType) -> snd_pcm_format_t {
        switch sample {
        case .int16: SND_PCM_FORMAT_S16_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    /// Writes all frames, blocking while the device buffer is full. Recovers up to a few xruns or
    /// suspends per call; throws `.lost` when the device is gone or recovery keeps failing.
    public func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard let pcm, let format, frames > 0 else { return 0 }
        if devicePaused { return 0 }
        var done = 0
        var recoveries = 0
        while done < frames {
            let n = snd_pcm_writei(pcm, buf + done * format.bytesPerFrame, snd_pcm_uframes_t(frames - done))
            if n >= 0 {
                done += Int(n)
                recoveries = 0
                continue
            }
            let code = Int32(n)
            if code == -EAGAIN { continue }
            recoveries += 1
            // snd_pcm_recover handles only -EINTR, -EPIPE and -ESTRPIPE; the rest means the device is gone.
            guard code == -EINTR || code == -EPIPE || code == -ESTRPIPE, recoveries <= 5,
                  snd_pcm_recover(pcm, code, 1) >= 0 else {
                throw AlsaErrors.streamError(code, device: device, doing: "write")
            }
        }
        return done
    }

    /// Frames queued and not yet heard (`snd_pcm_delay`); 0 when stopped, underrun or on error.
    public func delayFrames() -> Int {
        guard let pcm else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &delay) >= 0 else { return 0 }
        return max(0, Int(delay))
    }

    /// Pauses or resumes with `snd_pcm_pause`, keeping queued frames. Throws `.unsupported` when the device
    /// cannot pause (the Pi headphone jack): the engine then drops and rewrites from the heard position.
    public func pause(_ on: Bool) throws(OutputError) {
        guard let pcm, on != devicePaused else { return }
        guard canPause else {
            throw OutputError(kind: .unsupported, message: "\(device): cannot pause")
        }
        if on && snd_pcm_state(pcm) != SND_PCM_STATE_RUNNING {
            // Nothing is playing (not yet started, or underrun): there is nothing to hold, and
            // snd_pcm_pause would fail with -EBADFD. Writes are refused until resume.
            devicePaused = true
            return
        }
        if !on && snd_pcm_state(pcm) != SND_PCM_STATE_PAUSED {
            devicePaused = false
            return
        }
        let rc = snd_pcm_pause(pcm, on ? 1 : 0)
        if rc < 0 { throw AlsaErrors.streamError(rc, device: device, doing: on ? "pause" : "resume") }
        devicePaused = on
    }

    /// Discards queued frames (`snd_pcm_drop`) and prepares the stream for new writes.
    public func drop() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
        devicePaused = false
    }

    /// Plays out queued frames (`snd_pcm_drain`, blocking) and prepares the stream for new writes.
    public func drain() {
        guard let pcm else { return }
        if devicePaused {
            _ = snd_pcm_pause(pcm, 0)
            devicePaused = false
        }
        snd_pcm_drain(pcm)
        snd_pcm_prepare(pcm)
    }

    /// Closes the device; safe to call when closed.
    public func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
        format = nil
        devicePaused = false
    }
}

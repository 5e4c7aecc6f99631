// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// A `PCMOutput` that discards audio but keeps real time, as if a ~100 ms device buffer were played out
/// on CLOCK_MONOTONIC: `write` blocks while the virtual buffer is full. For boards without a sound card
/// and for demos. Pausing stops the virtual clock; `drop` forgets what is queued at once, so it cuts
/// as a hardware device does (`.drop`). Use from one thread at a time.
public final class SilentOutput: PCMOutput {
    private let bufferSeconds: Double
    private var interruptFD: Int32 = -1
    private var rate = 0.0
    private var written = 0.0
    private var consumedBase = 0.0
    private var clockStart: Double?
    private var paused = false

    /// Whether a stream is open.
    public private(set) var isOpen = false

    /// Creates a closed output whose virtual device buffer holds `bufferSeconds` of audio.
    public init(bufferSeconds: Double = 0.1) {
        self.bufferSeconds = bufferSeconds
    }

    /// Accepts any format with a positive rate and channel count; throws `.unsupported` otherwise.
    public func open(format: AudioFormat) throws(OutputError) {
        guard format.sampleRate > 0, format.channels > 0 else {
            throw OutputError(kind: .unsupported, message: "invalid format \(format)")
        }
        rate = Double(format.sampleRate)
        reset()
        isOpen = true
    }

    /// The virtual device drops: queued frames are forgotten at once and the position stays exact.
    public var cutMethod: CutMethod { .drop }

    /// Makes a waiting `write` return early while `fd` is readable.
    public func setInterrupt(_ fd: Int32) { interruptFD = fd }

    /// Queues frames as the virtual buffer makes room, never holding more than its size (a write
    /// longer than the buffer waits for it, piece by piece, as a device's does); returns early
    /// (fewer frames) when the interrupt descriptor is readable, so a command never waits for a
    /// long write to be played out.
    public func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard isOpen, frames > 0 else { return 0 }
        if paused { return 0 }
        if clockStart == nil { clockStart = monotonicNow() }
        let capacity = max(1, (bufferSeconds * rate).rounded())
        var done = 0
        while done < frames {
            let room = Int(capacity - (written - consumed()))
            if room > 0 {
                let n = min(room, frames - done)
                written += Double(n)
                done += n
                continue
            }
            // Wake when half the buffer (or the rest of this write) fits, as ALSA's avail_min does:
            // not once per frame.
            let want = min(Double(frames - done), (capacity / 2).rounded(.up))
            if wait(seconds: (written + want - consumed() - capacity) / rate) { return done }
        }
        return done
    }

    // Sleeps `seconds`, or less when the interrupt descriptor becomes readable (then true).
    private func wait(seconds: Double) -> Bool {
        guard seconds > 0 else { return false }
        guard interruptFD >= 0 else {
            sleepSeconds(seconds)
            return false
        }
        var fd = pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)
        // Whole milliseconds, rounded up: a wake a little late costs nothing, one early spins.
        return poll(&fd, 1, Int32(min(10_000, (seconds * 1000).rounded(.up)))) > 0 && fd.revents != 0
    }

    /// Frames queued in the virtual buffer and not yet "heard".
    public func delayFrames() -> Int {
        guard isOpen else { return 0 }
        return Int((written - consumed()).rounded())
    }

    /// Stops (true) or restarts (false) the virtual clock; queued frames are kept.
    public func pause(_ on: Bool) throws(OutputError) {
        guard isOpen, on != paused else { return }
        if on {
            consumedBase = consumed()
            clockStart = nil
        } else if written > consumedBase {
            clockStart = monotonicNow()
        }
        paused = on
    }

    /// Forgets queued frames.
    public func drop() {
        guard isOpen else { return }
        reset()
    }

    /// Sleeps until the queued frames would have been heard.
    public func drain() {
        guard isOpen else { return }
        if !paused { sleepSeconds((written - consumed()) / rate) }
        reset()
    }

    /// Closes the virtual device.
    public func close() {
        isOpen = false
        reset()
    }

    private func reset() {
        written = 0
        consumedBase = 0
        clockStart = nil
        paused = false
    }

    // Frames "played" so far; once it catches up with `written` (an underrun) the clock stops, so a
    // late writer does not earn credit for time nobody was listening.
    private func consumed() -> Double {
        guard let start = clockStart else { return consumedBase }
        let now = monotonicNow()
        let value = consumedBase + (now - start) * rate
        if value >= written {
            consumedBase = written
            clockStart = now
            return written
        }
        return value
    }
}

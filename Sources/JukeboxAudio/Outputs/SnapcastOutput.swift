// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxSystem

/// A `PCMOutput` that feeds a Snapcast server's pipe source (snapserver.conf: `source =
/// pipe:///run/snapserver/jukebox?name=jukebox&sampleformat=44100:16:2`): raw interleaved PCM in
/// the stream's sample format, written to the FIFO snapserver reads. snapserver reads the pipe
/// by its own clock (one chunk every 20 ms), so the pipe's fullness paces the writer as a sound
/// card's buffer does; what the pipe holds is the delay.
///
/// Formats: the stream's rate and channel count are fixed (snapserver does not look at the
/// data). A track whose rate or channel count differs is refused (`.unsupported`, naming both:
/// the engine skips it), except a mono track on a stereo stream, which goes to both channels
/// (lossless). jukebox has no resampler among its dependencies. The sample type is converted
/// as for ALSA (the engine offers the source's type first, then `SampleConversion.candidates`);
/// a 24-bit stream takes `.int32` (left-justified) and gets it right-justified in 4 bytes, as
/// snapserver's `:24:` means.
///
/// Opening: `O_WRONLY|O_NONBLOCK|O_NOFOLLOW`, a FIFO or nothing, then blocking mode. snapserver
/// holds its end open only while there is a writer (at an end of file it closes and looks again
/// 100 ms later), so when nobody reads at the open this output becomes a writer through a
/// reader of its own, closes that at once and waits (at most `attachTimeout`) for snapserver to
/// come: none → `.lost` ("nobody reads"), and the engine waits and probes as for an unplugged
/// card. A writer with no reader left (snapserver stopped) or a pipe that takes nothing for
/// `stallTimeout` is `.lost` too. `close` leaves the pipe open while snapserver reads it (it
/// then sends silence): an end of file would make it throw away the last frames (see `held`),
/// and the next `open` (or `probe`) takes it up again without waiting for snapserver.
///
/// Writes never block: while the pipe is full the writer waits in `poll` for room or for the
/// interrupt descriptor (a command: it returns early), and each write is at most `PIPE_BUF`
/// bytes, which a pipe with room takes at once and whole. `drop`
/// takes back what the pipe holds by reading it out (`.drop`); `pause` is refused, so the engine
/// cuts and decodes again from the frame snapserver read last. What snapserver has read is
/// gone: clients hear it after its `buffer` (1 s by default), which no position here counts.
/// Use from one thread at a time (SIGPIPE is blocked on the thread that opens it).
public final class SnapcastOutput: PCMOutput {
    /// The pipe stream's sample format, as snapserver's `sampleformat` (`44100:16:2`).
    public struct StreamFormat: Sendable, Equatable, CustomStringConvertible {
        /// Frames per second.
        public var rate: Int
        /// Bits per sample: 16, 24 (in 4 bytes) or 32.
        public var bits: Int
        /// Samples per frame.
        public var channels: Int

        /// Creates a format; `bits` must be 16, 24 or 32 (the config checks it).
        public init(rate: Int, bits: Int, channels: Int) {
            self.rate = rate
            self.bits = bits
            self.channels = channels
        }

        /// `RATE:BITS:CHANNELS`, snapserver's notation.
        public var description: String { "\(rate):\(bits):\(channels)" }
        /// The sample type the engine must hand over.
        var sample: SampleType { bits == 16 ? .int16 : .int32 }
        /// Bytes of one frame in the pipe.
        var bytesPerFrame: Int { channels * (bits == 16 ? 2 : 4) }
    }

    /// The FIFO's path.
    public let pipe: String
    /// The stream's format.
    public let stream: StreamFormat
    /// Seconds the pipe may take nothing while a write waits before it counts as lost (a stall).
    public var stallTimeout = 2.0
    /// Seconds an open waits for snapserver to start reading (it looks again every 100 ms).
    public var attachTimeout = 0.5
    /// Faults met so far (stalls and losses), over all streams of this output.
    public private(set) var counters = DeviceCounters()
    /// After a failed `write`: frames of that call queued, and frames still in the pipe, which
    /// nobody will hear.
    public private(set) var failurePoint: (accepted: Int, unheard: Int)?

    private var fd: Int32 = -1
    private var interruptFD: Int32 = -1
    private var source: AudioFormat?
    /// The pipe as `close` left it: still open, so snapserver goes on reading it (silence once it
    /// is empty). At an end of file snapserver throws away the chunk it was filling (up to its
    /// `chunk_ms`), and a client plays its last frames only once chunks after them have come: a
    /// pipe closed after the last frames would lose them. The next `open` takes it up again
    /// (no wait for snapserver's next look); -1: none.
    private var held: Int32 = -1
    /// A write failed: `close` really closes.
    private var broken = false
    private var scratch = [UInt8](repeating: 0, count: Int(PIPE_BUF))

    /// Creates a closed output for the FIFO at `pipe`; nothing is opened until `open(format:)`.
    public init(pipe: String, stream: StreamFormat) {
        self.pipe = pipe
        self.stream = stream
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
        if held >= 0 { Glibc.close(held) }
    }

    /// Whether a stream is open.
    public var isOpen: Bool { fd >= 0 }

    /// Queued frames are taken back by reading them out of the pipe.
    public var cutMethod: CutMethod { .drop }

    /// Makes a waiting `write` return early while `fd` is readable.
    public func setInterrupt(_ fd: Int32) { interruptFD = fd }

    /// Opens the pipe for `format` when the stream carries it: the same rate and channel count
    /// (or mono on a stereo stream) and the stream's sample type. Throws `.unsupported` otherwise,
    /// `.lost` when the pipe is missing or nobody reads it, `.other` when the path is no FIFO or
    /// cannot be opened.
    public func open(format: AudioFormat) throws(OutputError) {
        close()
        let upmix = format.channels == 1 && stream.channels == 2
        guard format.sampleRate == stream.rate, format.channels == stream.channels || upmix else {
            let channels = format.channels == 1 ? "1 channel" : "\(format.channels) channels"
            throw OutputError(kind: .unsupported, message: "\(pipe): the track is \(format.sampleRate) Hz with \(channels), "
                + "the Snapcast stream \(stream) (rate:bits:channels); jukebox does not resample: convert the file "
                + "or set the stream's sampleformat (output.sampleFormat and snapserver.conf) to match")
        }
        guard format.sample == stream.sample else {
            throw OutputError(kind: .unsupported, message: "\(pipe): \(format.sample) samples refused: the stream is \(stream)")
        }
        if let kept = takeHeld() { fd = kept } else { fd = try connect() }
        source = format
    }

    /// Opens the pipe (kept for the next `open`): nil when snapserver read it within `attachTimeout`.
    public func probe() -> OutputError? {
        guard fd < 0 else { return nil }
        do throws(OutputError) {
            if let kept = takeHeld() { held = kept } else { held = try connect() }
            return nil
        } catch {
            return error
        }
    }

    /// The pipe `close` kept, when snapserver still reads it and it is still the FIFO at `pipe`
    /// (not one a restarted snapserver made anew); closed otherwise.
    private func takeHeld() -> Int32? {
        guard held >= 0 else { return nil }
        let kept = held
        held = -1
        var ours = stat()
        var now = stat()
        if Self.hasReader(kept), fstat(kept, &ours) == 0, lstat(cPath(pipe), &now) == 0, ours.st_dev == now.st_dev, ours.st_ino == now.st_ino {
            Self.blockSIGPIPE()
            return kept
        }
        Glibc.close(kept)
        return nil
    }

    /// Opens the FIFO for writing in blocking mode and waits for a reader (see the type's notes).
    private func connect() throws(OutputError) -> Int32 {
        Self.blockSIGPIPE()
        var fd = Glibc.open(cPath(pipe), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 && errno == ENXIO {
            // No reader this instant: snapserver is between two looks, or absent. As a writer we
            // keep it reading when it looks again; to become one, read for a moment ourselves.
            let keeper = Glibc.open(cPath(pipe), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
            guard keeper >= 0 else { throw openError(errno) }
            if let problem = notFIFO(keeper) {
                Glibc.close(keeper)
                throw problem
            }
            fd = Glibc.open(cPath(pipe), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
            let saved = errno
            Glibc.close(keeper)
            errno = saved
        }
        guard fd >= 0 else { throw openError(errno) }
        if let problem = notFIFO(fd) {
            Glibc.close(fd)
            throw problem
        }
        // Blocking from here on: every write is one a pipe with room takes whole (see `write`).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let deadline = monotonicNow() + attachTimeout
        while !Self.hasReader(fd) {
            if monotonicNow() >= deadline {
                Glibc.close(fd)
                throw OutputError(kind: .lost, message: "\(pipe): nobody reads the pipe (is snapserver running with it as a source?)")
            }
            sleepSeconds(0.005)
        }
        return fd
    }

    private func notFIFO(_ fd: Int32) -> OutputError? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return OutputError(kind: .other, message: "\(pipe): \(errnoText(errno))") }
        guard info.st_mode & S_IFMT == S_IFIFO else {
            return OutputError(kind: .other, message: "\(pipe): not a FIFO (snapserver's pipe source makes one)")
        }
        return nil
    }

    private func openError(_ code: Int32) -> OutputError {
        switch code {
        case ENOENT:
            return OutputError(kind: .lost, message: "\(pipe): no such pipe (snapserver makes it when it starts)")
        case ELOOP:
            return OutputError(kind: .other, message: "\(pipe): a symbolic link, refused")
        default:
            return OutputError(kind: .other, message: "\(pipe): \(errnoText(code))")
        }
    }

    /// Whether the FIFO has a reader: Linux reports POLLERR on a pipe's write end with none.
    private static func hasReader(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&p, 1, 0) >= 0 && p.revents & Int16(POLLERR) == 0
    }

    /// A write to a pipe nobody reads raises SIGPIPE: blocked on this thread (the engine's writer),
    /// and a pending one taken after EPIPE (`clearSIGPIPE`), so no process setting is needed.
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    private static func clearSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&set, nil, &zero) == SIGPIPE {}
    }

    /// Writes all frames, waiting (in `poll`) while the pipe is full; returns early (fewer frames)
    /// when the interrupt descriptor is readable while it waits. Throws `.lost` when nobody reads the pipe any
    /// more or it took nothing for `stallTimeout` (`failurePoint` then says what was not heard).
    public func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int {
        guard fd >= 0, let source, frames > 0 else { return 0 }
        failurePoint = nil
        let inFrame = source.bytesPerFrame
        let outFrame = stream.bytesPerFrame
        // At most PIPE_BUF bytes a write: once poll says there is room, the pipe takes them at once.
        let perWrite = max(1, Int(PIPE_BUF) / outFrame)
        let convert = source.channels != stream.channels || stream.bits == 24
        var done = 0
        var lastProgress = monotonicNow()
        while done < frames {
            var room = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&room, 1, 0)
            if room.revents & Int16(POLLERR) != 0 { throw lost(done, "snapserver stopped reading the pipe") }
            if room.revents & Int16(POLLOUT) == 0 {
                // Full: wait for snapserver's next read, or for a command (then return what went out).
                let waited = monotonicNow() - lastProgress
                if waited >= stallTimeout {
                    counters.stalls += 1
                    throw lost(done, "stalled: snapserver read nothing for \(stallTimeout) s")
                }
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                           pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)]
                let timeout = Int32(max(1, (min(1, stallTimeout - waited) * 1000).rounded(.up)))
                if poll(&fds, interruptFD >= 0 ? 2 : 1, timeout) > 0, interruptFD >= 0, fds[1].revents != 0 { return done }
                continue
            }
            let n = min(perWrite, frames - done)
            let from = buf + done * inFrame
            let failure: Int32
            if convert {
                failure = scratch.withUnsafeMutableBytes { out in
                    render(from, frames: n, into: out.baseAddress!)
                    return writeWhole(out.baseAddress!, n * outFrame)
                }
            } else {
                failure = writeWhole(from, n * outFrame)
            }
            if failure != 0 { throw lost(done, failure == EPIPE ? "snapserver stopped reading the pipe" : errnoText(failure)) }
            done += n
            lastProgress = monotonicNow()
        }
        return done
    }

    /// Writes `count` bytes (one write, whole, for at most PIPE_BUF after POLLOUT); 0, or the errno.
    private func writeWhole(_ bytes: UnsafeRawPointer, _ count: Int) -> Int32 {
        var sent = 0
        while sent < count {
            let n = Glibc.write(fd, bytes + sent, count - sent)
            if n > 0 { sent += n; continue }
            let code = n < 0 ? errno : EIO
            if code == EINTR || code == EAGAIN { continue }
            if code == EPIPE { Self.clearSIGPIPE() }
            return code
        }
        return 0
    }

    /// Source frames → pipe frames: mono copied to both channels, 24-bit streams right-justified.
    private func render(_ from: UnsafeRawPointer, frames: Int, into out: UnsafeMutableRawPointer) {
        let inChannels = source?.channels ?? stream.channels
        let samples = frames * stream.channels
        if stream.bits == 16 {
            let src = from.assumingMemoryBound(to: Int16.self)
            let dst = out.assumingMemoryBound(to: Int16.self)
            for i in 0..<samples { dst[i] = src[inChannels == stream.channels ? i : i / stream.channels] }
        } else {
            let shift: Int32 = stream.bits == 24 ? 8 : 0
            let src = from.assumingMemoryBound(to: Int32.self)
            let dst = out.assumingMemoryBound(to: Int32.self)
            for i in 0..<samples { dst[i] = src[inChannels == stream.channels ? i : i / stream.channels] >> shift }
        }
    }

    private func lost(_ accepted: Int, _ what: String) -> OutputError {
        counters.lost += 1
        broken = true
        failurePoint = (accepted, delayFrames())
        return OutputError(kind: .lost, message: "\(pipe): \(what)")
    }

    /// Frames in the pipe, not yet read by snapserver (FIONREAD on the write end).
    public func delayFrames() -> Int {
        guard fd >= 0 else { return 0 }
        var bytes: Int32 = 0
        guard clinux_ioctl_ptr(fd, UInt(FIONREAD), &bytes) == 0 else { return 0 }
        return Int(bytes) / stream.bytesPerFrame
    }

    /// A pipe cannot hold its audio: pausing is refused (`.unsupported`), so the engine cuts
    /// (`drop`) and decodes again from the frame heard; resuming is a no-op.
    public func pause(_ on: Bool) throws(OutputError) {
        guard fd >= 0, on else { return }
        throw OutputError(kind: .unsupported, message: "\(pipe): a pipe cannot pause")
    }

    /// Takes back what the pipe holds: it is read out through a reader of this output's own
    /// (checked to be the same FIFO). snapserver may read a last piece meanwhile; what it read
    /// was counted as heard by the caller's `delayFrames()` just before, to within that piece.
    public func drop() {
        guard fd >= 0 else { return }
        let reader = Glibc.open(cPath(pipe), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard reader >= 0 else { return }
        defer { Glibc.close(reader) }
        var ours = stat()
        var theirs = stat()
        guard fstat(fd, &ours) == 0, fstat(reader, &theirs) == 0,
              ours.st_dev == theirs.st_dev, ours.st_ino == theirs.st_ino else { return }
        var sink = [UInt8](repeating: 0, count: 65536)
        // Only this output writes, and not meanwhile: a few reads empty it.
        for _ in 0..<64 {
            let n = sink.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
            if n > 0 { continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
    }

    /// Waits until snapserver has read everything in the pipe (bounded: nothing read for
    /// `stallTimeout`, or no reader left, and the rest is dropped).
    public func drain() {
        guard fd >= 0 else { return }
        var least = Int.max
        var lastProgress = monotonicNow()
        while true {
            let left = delayFrames()
            if left == 0 || !Self.hasReader(fd) { break }
            let now = monotonicNow()
            if left < least {
                least = left
                lastProgress = now
            } else if now - lastProgress >= stallTimeout {
                counters.stalls += 1
                drop()
                break
            }
            sleepSeconds(min(0.02, max(0.002, Double(left) / Double(stream.rate))))
        }
    }

    /// Counts a loss the engine found outside `write` (see `PCMOutput.noteLost`).
    public func noteLost(stalled: Bool) {
        if stalled { counters.stalls += 1 }
        counters.lost += 1
    }

    /// Ends the stream: the pipe stays open while snapserver reads it (`held`: what was written is
    /// read and followed by silence, never cut by an end of file), and is closed after a failure.
    /// Safe when closed.
    public func close() {
        guard fd >= 0 else { return }
        if broken || !Self.hasReader(fd) {
            Glibc.close(fd)
        } else {
            if held >= 0 { Glibc.close(held) }
            held = fd
        }
        fd = -1
        source = nil
        broken = false
    }
}

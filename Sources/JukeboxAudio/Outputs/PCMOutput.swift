// SPDX-License-Identifier: MIT

/// Why an output could not be opened or went away.
public struct OutputError: Error, Sendable, Equatable {
    /// The class of failure, which decides what the caller does next.
    public enum Kind: Sendable, Equatable {
        /// Another program holds the device; retry when it lets go.
        case busy
        /// The device is gone or broken (unplugged, I/O error, unknown name); retry later.
        case lost
        /// The device refuses this sample format, rate or channel count.
        case unsupported
        /// Anything else.
        case other
    }

    /// The class of failure.
    public var kind: Kind
    /// What the driver said, readable.
    public var message: String
    /// For `.busy`: the name of the process holding the device, when it could be found.
    public var holder: String?

    /// Creates an error.
    public init(kind: Kind, message: String, holder: String? = nil) {
        self.kind = kind
        self.message = message
        self.holder = holder
    }
}

/// How an output takes back frames it has queued but not yet played, when a command (pause, seek,
/// skip, stop) must be heard at once.
public enum CutMethod: Sendable, Equatable {
    /// It cannot: the engine fades out its held-back frames and lets the device play out what it
    /// holds (a short buffer only: test doubles, the silent output).
    case drain
    /// `rewind(keeping:)` takes queued frames back; the engine writes a short fade-out in their place.
    case rewind
    /// Only `drop()`: the sound stops at once (no fade), at the frame the device had reached.
    case drop
}

/// A sink for interleaved PCM frames, used from one thread at a time (the engine's writer thread).
///
/// Life cycle: `open` → any number of `write`/`pause`/`drop`/`drain` → `close`; `open` again after
/// `close` is allowed. Every method except `open` is a no-op (or returns 0) when not open.
public protocol PCMOutput: AnyObject {
    /// Configures the device for `format`. Throws `.unsupported` when the format is refused (the caller
    /// may try another), `.busy` / `.lost` / `.other` when the device cannot be had. Closes any previous stream.
    func open(format: AudioFormat) throws(OutputError)
    /// Blocks until all `frames` frames of `buf` (in the opened format) are queued; returns the frames
    /// queued, fewer when the interrupt descriptor (`setInterrupt`) became readable while it waited.
    /// Throws `.lost` when the device went away (the caller closes it).
    func write(_ buf: UnsafeRawPointer, frames: Int) throws(OutputError) -> Int
    /// A descriptor that, while readable, makes a waiting `write` return early (the engine's
    /// commands: a long device buffer must not keep them waiting). Default: ignored.
    func setInterrupt(_ fd: Int32)
    /// Frames queued but not yet heard; 0 when unknown or idle.
    func delayFrames() -> Int
    /// Pauses (true) or resumes (false) keeping queued frames. Throws `.unsupported` when the device cannot
    /// pause: the caller then uses `drop()` and rewrites from the heard position.
    func pause(_ on: Bool) throws(OutputError)
    /// Discards queued frames at once and leaves the stream ready for new writes.
    func drop()
    /// Blocks until queued frames have been heard, then leaves the stream ready for new writes.
    func drain()
    /// Releases the device.
    func close()
    /// While closed: whether the device could be opened now, by opening and closing it at once
    /// (nothing configured, nothing decoded). Nil when it could; the error `open` would meet
    /// (`.busy` with its holder, `.lost`) when not.
    func probe() -> OutputError?
    /// Whether a stream is open.
    var isOpen: Bool { get }
    /// How queued frames are taken back (default: `.drain`).
    var cutMethod: CutMethod { get }
    /// Takes back queued frames, leaving about `keeping` ahead of the play point, when at least
    /// `atLeast` can be taken; returns how many (default: 0, cannot).
    func rewind(keeping: Int, atLeast: Int) -> Int
    /// Faults met so far (default: none counted).
    var counters: DeviceCounters { get }
    /// After `write` threw: the frames of that call queued before it failed, and the frames queued
    /// but not heard at the failure, so the caller can hold the frame really heard. Nil when the
    /// output cannot tell (the default); the caller then estimates from `delayFrames()`.
    var failurePoint: (accepted: Int, unheard: Int)? { get }
    /// Seconds the device may consume nothing, with frames queued, before it counts as lost (a
    /// stall); the engine applies it too while the end of the queue plays out (default: 2).
    var stallTimeout: Double { get }
    /// The engine gave the stream up as lost outside `write` (it stood still while the end of the
    /// queue played out): counted as a loss, and as a stall unless `drain` counted that already.
    func noteLost(stalled: Bool)
}

extension PCMOutput {
    /// Always available (outputs that no other program can hold).
    public func probe() -> OutputError? { nil }
    /// Writes are never interrupted.
    public func setInterrupt(_ fd: Int32) {}
    /// Cannot take frames back.
    public var cutMethod: CutMethod { .drain }
    /// Cannot take frames back.
    public func rewind(keeping: Int, atLeast: Int) -> Int { 0 }
    /// No faults counted.
    public var counters: DeviceCounters { DeviceCounters() }
    /// Unknown.
    public var failurePoint: (accepted: Int, unheard: Int)? { nil }
    /// Two seconds, as `AlsaOutput` and `SnapcastOutput` default to.
    public var stallTimeout: Double { 2.0 }
    /// Nothing counted.
    public func noteLost(stalled: Bool) {}
}

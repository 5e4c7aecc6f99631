// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import Synchronization

/// A monotonic clock that moves only when the test says so: give `read` where a `clock:` is taken
/// (`Runtime`, `AudioEngine`, `Log`, `ControlSocket`), then `advance` past a deadline instead of
/// sleeping until it. Safe to read from any thread.
public final class ManualClock: Sendable {
    private let seconds: Mutex<Double>

    /// Starts at `start` seconds (any value: only differences count).
    public init(start: Double = 1000) {
        seconds = Mutex(start)
    }

    /// The time now.
    public var now: Double { seconds.withLock { $0 } }

    /// This clock as the closure the `clock:` parameters take.
    public var read: @Sendable () -> Double { { self.now } }

    /// Moves the time on by `interval` seconds (never back).
    public func advance(by interval: Double) {
        precondition(interval >= 0, "a monotonic clock never goes back")
        seconds.withLock { $0 += interval }
    }
}

/// One call an `AudioPort` received, as `RecordingAudio` records it (files by name only).
public enum AudioCall: Equatable, Sendable {
    case play(id: UInt64, file: String, at: Double, paused: Bool = false, next: UInt64? = nil, nextFile: String? = nil)
    case setNext(id: UInt64, file: String)
    case clearNext
    case pause
    case resume
    case stop
    case release(token: UInt64)
    case probe
    case seek(to: Double)
    case volume(Int)
    case shutdown

    /// Whether this is a call that moves playback (play, pause, resume, stop), not a setting.
    public var isTransport: Bool {
        switch self {
        case .play, .pause, .resume, .stop: return true
        default: return false
        }
    }
}

/// An audio port that records its calls in order. With a `mailbox` it answers as an engine would:
/// a release with `.deviceReleased`, a probe with `.deviceAvailable`, and with `finishImmediately`
/// each play with `.trackStarted` then `.trackFinished`. The loop's thread calls it while a test
/// reads it, so everything is behind a lock; `observe` sees each call on the caller's thread.
public final class RecordingAudio: AudioPort, Sendable {
    private struct Recorded {
        var calls: [AudioCall] = []
        var heard: (id: UInt64, seconds: Double)?
        var mailbox: Mailbox?
        var finishImmediately = false
        var observe: (@Sendable (AudioCall) -> Void)?
    }
    private let recorded = Mutex(Recorded())

    /// Starts with no calls.
    public init(mailbox: Mailbox? = nil, finishImmediately: Bool = false) {
        recorded.withLock {
            $0.mailbox = mailbox
            $0.finishImmediately = finishImmediately
        }
    }

    /// The calls so far, in order.
    public var calls: [AudioCall] {
        get { recorded.withLock { $0.calls } }
        set { recorded.withLock { $0.calls = newValue } }
    }

    /// The transport calls so far (`AudioCall.isTransport`), in order.
    public var transport: [AudioCall] { calls.filter(\.isTransport) }

    /// What `position()` answers; a play sets it to its start.
    public var heard: (id: UInt64, seconds: Double)? {
        get { recorded.withLock { $0.heard } }
        set { recorded.withLock { $0.heard = newValue } }
    }

    /// Where the engine's answers go (none without one).
    public var mailbox: Mailbox? {
        get { recorded.withLock { $0.mailbox } }
        set { recorded.withLock { $0.mailbox = newValue } }
    }

    /// Whether each play answers `.trackStarted` then `.trackFinished` at once (with a mailbox).
    public var finishImmediately: Bool {
        get { recorded.withLock { $0.finishImmediately } }
        set { recorded.withLock { $0.finishImmediately = newValue } }
    }

    /// Called with each call as it is recorded (e.g. to time it).
    public var observe: (@Sendable (AudioCall) -> Void)? {
        get { recorded.withLock { $0.observe } }
        set { recorded.withLock { $0.observe = newValue } }
    }

    private func record(_ call: AudioCall, heard: (id: UInt64, seconds: Double)? = nil) {
        let observe = recorded.withLock { (r: inout Recorded) -> (@Sendable (AudioCall) -> Void)? in
            r.calls.append(call)
            if let heard { r.heard = heard }
            return r.observe
        }
        observe?(call)
    }

    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        record(.play(id: id, file: Paths.fileName(path), at: seconds, paused: paused,
                     next: next?.id, nextFile: next.map { Paths.fileName($0.path) }), heard: (id, seconds))
        let (mailbox, finish) = recorded.withLock { ($0.mailbox, $0.finishImmediately) }
        if finish, let mailbox {
            mailbox.post(.trackStarted(playID: id))
            mailbox.post(.trackFinished(playID: id, next: nil))
        }
    }
    public func setNext(id: UInt64, path: String) { record(.setNext(id: id, file: Paths.fileName(path))) }
    public func clearNext() { record(.clearNext) }
    public func pause() { record(.pause) }
    public func resume() { record(.resume) }
    public func stop() { record(.stop) }
    public func release(token: UInt64) {
        record(.release(token: token))
        mailbox?.post(.deviceReleased(token: token, heard: nil))
    }
    public func probe() {
        record(.probe)
        mailbox?.post(.deviceAvailable)
    }
    public func seek(to seconds: Double) { record(.seek(to: seconds)) }
    public func setVolume(_ percent: Int) { record(.volume(percent)) }
    public func position() -> (id: UInt64, seconds: Double)? { heard }
    public func shutdown() { record(.shutdown) }
}

/// A status sink that records what it was given (on the loop's thread; read it there or after the
/// loop ended).
public final class RecordingStatus: StatusSink {
    /// Every status rendered, in order.
    public var views: [StatusView] = []
    /// Every message reported, in order.
    public var reports: [String] = []

    /// Starts empty.
    public init() {}

    public func render(_ view: StatusView) { views.append(view) }
    public func report(_ message: String) { reports.append(message) }
}

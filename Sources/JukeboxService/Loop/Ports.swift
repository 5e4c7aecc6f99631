// SPDX-License-Identifier: MIT
import JukeboxCore

/// What the runtime needs from an audio engine. Every method returns at once; outcomes come
/// back as events posted to the runtime.
public protocol AudioPort: AnyObject {
    /// Stops whatever plays and starts `path` at `seconds` (or holds there when `paused`), with
    /// `next` as the gapless successor.
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?)
    /// `play` with each track's samples scaled by a linear gain (ReplayGain; 1: untouched). A
    /// port without gain (a default: see the extension) plays them untouched.
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
              gain: Double, nextGain: Double)
    /// The track to continue into without a gap.
    func setNext(id: UInt64, path: String)
    /// `setNext` with the successor's samples scaled by `gain` from its first frame (1: untouched).
    func setNext(id: UInt64, path: String, gain: Double)
    /// `play` with each track also at a playback speed with the pitch kept (1: no stretching,
    /// bit-exact); positions stay in the file's time. A port without speed plays at 1.
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
              gain: Double, nextGain: Double, speed: Double, nextSpeed: Double)
    /// `setNext` at a playback speed (1: no stretching).
    func setNext(id: UInt64, path: String, gain: Double, speed: Double)
    /// Play `id` at `speed` from what is not yet heard on, in place (1: no stretching). A port
    /// without speed plays at 1 and ignores it.
    func setSpeed(id: UInt64, speed: Double)
    /// Forget the track to continue into.
    func clearNext()
    /// Pause, keeping the position.
    func pause()
    /// Resume after a pause.
    func resume()
    /// Stop and release the device.
    func stop()
    /// Stop, release the device, then report that it is closed (`Event.deviceReleased(token)`).
    func release(token: UInt64)
    /// While idle: check whether the device could be opened now (reported as
    /// `Event.deviceAvailable` or `Event.deviceUnavailable`).
    func probe()
    /// Move within the current play.
    func seek(to seconds: Double)
    /// Output volume 0–100.
    func setVolume(_ percent: Int)
    /// The play and the position actually heard, if something is loaded.
    func position() -> (id: UInt64, seconds: Double)?
    /// What the HTTP(S) stream being played reports (a default says nil: see the extension).
    func streamStatus() -> (id: UInt64, status: StreamStatus)?
    /// Stop the engine's threads and release everything.
    func shutdown()
}

extension AudioPort {
    /// A port without gain plays the samples untouched.
    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
                     gain: Double, nextGain: Double) {
        play(id: id, path: path, from: seconds, paused: paused, next: next)
    }

    /// A port without gain plays the successor untouched.
    public func setNext(id: UInt64, path: String, gain: Double) { setNext(id: id, path: path) }

    /// A port without speed plays at 1.
    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
                     gain: Double, nextGain: Double, speed: Double, nextSpeed: Double) {
        play(id: id, path: path, from: seconds, paused: paused, next: next, gain: gain, nextGain: nextGain)
    }

    /// A port without speed plays at 1 whatever is asked.
    public func setSpeed(id: UInt64, speed: Double) {}

    /// A port without speed plays the successor at 1.
    public func setNext(id: UInt64, path: String, gain: Double, speed: Double) { setNext(id: id, path: path, gain: gain) }

    /// What the HTTP(S) stream being played reports, with its play id; nil when no stream plays.
    /// Pulled by the loop with each tick (as `position()` is). Ports without streams need not say.
    public func streamStatus() -> (id: UInt64, status: StreamStatus)? { nil }
}

/// Where the status and messages go (terminal line, log, later the console and displays).
public protocol StatusSink: AnyObject {
    /// Shows the current status.
    func render(_ view: StatusView)
    /// Tells the user something (also logged).
    func report(_ message: String)
    /// Whether it shows the position as it moves (a terminal's status line): the loop then feeds
    /// it four times a second while playing, else once a second (the periodic save).
    var showsTime: Bool { get }
}

extension StatusSink {
    /// Only changes of track and phase are shown.
    public var showsTime: Bool { false }
}

/// A panel (I2C display, simulator, terminal view). `show` must not block the loop for more than
/// a few milliseconds; a failing panel reports through its own counters, never by throwing here.
public protocol DisplaySink: AnyObject {
    /// Draws this frame (only what changed reaches the hardware).
    func show(_ frame: DisplayFrame)
    /// Lets the panel finish timed work (an init sequence's waits, a retry, a re-init).
    func tick(now: Double)
    /// When the panel next needs `tick`, if sooner than the loop's own tick.
    var nextDeadline: Double? { get }
}

/// Something with file descriptors that produce events: GPIO line requests, input devices.
/// The loop polls `fds` and calls `read(fd:)` when one is readable; a source never blocks.
public protocol EventSource: AnyObject {
    /// Descriptors to poll (may change between calls, e.g. after a hot-plug).
    var fds: [Int32] { get }
    /// Reads what is ready on `fd` (one of `fds`) and returns the events it stands for.
    func read(fd: Int32) -> [Event]
    /// Called about once a second while `needsMaintenance`: reopen what went away (hot-plug);
    /// report problems once.
    func maintain()
    /// Whether `maintain` has something to look for (a line or device not open); while false the
    /// loop does not wake for it.
    var needsMaintenance: Bool { get }
    /// Whether `button`'s line is active now, read from the line; nil when this source has no such
    /// line or cannot read it.
    func level(of button: Button) -> Bool?
}

extension EventSource {
    /// No buttons here.
    public func level(of button: Button) -> Bool? { nil }
    /// A source that does not say is looked after once a second.
    public var needsMaintenance: Bool { true }
}

/// Where the core's podcast fetches go (`Command.fetchPodcast`): the adapter fetches and reads the
/// feed off the loop and posts `Event.podcastFetched` or `Event.podcastFailed` to the mailbox.
public protocol PodcastPort: AnyObject {
    /// Asks for `name`'s feed at `url`; returns at once.
    func fetch(name: String, url: String)
    /// Asks for episode `id` of `name` to be downloaded from `url` to `file` (relative to the
    /// downloads folder), at most `maxBytes`; `Event.episodeDownloaded` or `.episodeDownloadFailed` follows.
    func download(name: String, id: String, url: String, file: String, maxBytes: Int64)
    /// Deletes a downloaded episode's file (only inside the downloads folder).
    func delete(path: String)
    /// Stops what is in flight (the player quitting).
    func finish()
}

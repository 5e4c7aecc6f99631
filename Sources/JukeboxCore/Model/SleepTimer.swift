// SPDX-License-Identifier: MIT

/// What ends the sleep timer besides a number of minutes: the end of the current track, of the
/// current chapter (a file without chapters: of the track) or of the current folder (the run of
/// tracks in play order from the current one whose folder is its folder; the queue's end too).
public enum SleepEnd: String, Equatable, Sendable, CaseIterable {
    case track, chapter, folder
}

/// A sleep timer as asked for (`sleep MINUTES`, `sleep track|chapter|folder`).
public enum SleepRequest: Equatable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// After this many seconds of the monotonic clock, whatever plays meanwhile.
    case after(Double)
    /// At the end of the current track, chapter or folder, as it plays on (a skip moves it).
    case end(SleepEnd)

    public init(integerLiteral value: Int) { self = .after(Double(value)) }
    public init(floatLiteral value: Double) { self = .after(value) }

    /// The control language's words for it (`sleep 30`, `sleep track`); whole minutes, else seconds
    /// as a fraction of a minute.
    public var words: String {
        switch self {
        case .after(let seconds):
            let minutes = seconds / 60
            return "sleep " + (minutes == minutes.rounded() ? String(Int(minutes)) : String(minutes))
        case .end(let end): return "sleep " + end.rawValue
        }
    }

    /// `minutes`, `track`, `chapter` or `folder` (`status --json`'s `sleep.mode`).
    public var mode: String {
        if case .end(let end) = self { return end.rawValue }
        return "minutes"
    }
}

/// What the sleep timer does once the fade is over (config `sleep.then`).
public enum SleepThen: String, Equatable, Sendable, CaseIterable {
    /// Pause, the place kept (a restart comes back paused).
    case pause
    /// Pause, then run `Settings.powerCommand` (as idle power-off does).
    case poweroff
}

/// The config's `sleep` section.
public struct SleepSettings: Equatable, Sendable {
    /// Seconds over which the sound fades out before the end (0: no fade).
    public var fadeSeconds: Double = 30
    /// What follows the fade.
    public var then: SleepThen = .pause

    public init(fadeSeconds: Double = 30, then: SleepThen = .pause) {
        self.fadeSeconds = fadeSeconds
        self.then = then
    }
}

/// A running sleep timer (`State.sleep`). Time comes in with the `.sleep` timer's firings (the core
/// reads no clock): a timer of minutes takes its end from its first firing, which it asks for at
/// once; the others end where the heard position says.
public struct SleepTimer: Equatable, Sendable {
    /// What was asked.
    public var request: SleepRequest
    /// `.after`: the monotonic second it ends, from its first firing (nil until then).
    public var endsAt: Double?
    /// The latest firing's time (the status counts minutes from it while no tick comes).
    public var seenAt: Double = 0
    /// `.end(.chapter)`: where the chapter ends in the current track (the next chapter's start);
    /// nil in the last chapter or a file without chapters: the track's end.
    public var chapterEnd: Double?
    /// What the `.end` modes last planned their firing for (the current track, whether it
    /// played): another track, a pause or a resume plans again.
    public var plannedFor: SleepPlan?

    public init(request: SleepRequest, endsAt: Double? = nil, seenAt: Double = 0, chapterEnd: Double? = nil,
                plannedFor: SleepPlan? = nil) {
        self.request = request
        self.endsAt = endsAt
        self.seenAt = seenAt
        self.chapterEnd = chapterEnd
        self.plannedFor = plannedFor
    }
}

/// What an `.end` timer's firing was planned for.
public struct SleepPlan: Equatable, Sendable {
    public var trackID: UInt64?
    public var playing: Bool

    public init(trackID: UInt64?, playing: Bool) {
        self.trackID = trackID
        self.playing = playing
    }
}

extension State {
    /// Seconds between the end of a fade and the user's volume being ordered again: the pause's own
    /// short fade-out has played by then, so the volume coming back is never heard.
    public static let sleepRestoreDelay = 1.0
    /// The fastest the fade orders a new volume (seconds): two a second, each a rewrite of what the
    /// engine has queued. Measured (the null output, context switches): the loop wakes 7.3 times a
    /// second while fading, 1.2 playing without a timer, none paused with minutes running.
    public static let sleepFadeStepMin = 0.5
    /// A firing this close to the end is the end (the shell's timers are not exact).
    static let sleepEndSlack = 0.05

    /// Seconds the sleep timer has left at `now` (monotonic), nil without a timer or when it waits
    /// for an end of unknown time (a track without a length). The shell asks with its clock
    /// (`status --json`); the core itself with the latest time it was given.
    public func sleepLeft(now: Double) -> Double? {
        guard let sleep else { return nil }
        switch sleep.request {
        case .after(let seconds):
            guard let end = sleep.endsAt else { return seconds }
            // To the millisecond: `end` is the first firing's clock plus the minutes, and that sum
            // less the same clock is not always the minutes exactly (1800.0000000002 showed as
            // "31 min", rounded up, right after `sleep 30`).
            return max(0, ((end - now) * 1000).rounded() / 1000)
        case .end(.chapter):
            if let end = sleep.chapterEnd { return max(0, end - position) / playingSpeed }
            return trackLeft
        case .end(.track):
            return trackLeft
        case .end(.folder):
            guard let cursor, var left = trackLeft else { return nil }
            var i = cursor
            while !sleepEndsFolder(at: i), let next = skipTarget(from: i) {
                guard let duration = track(id: order[next])?.info.duration else { return nil }
                left += duration / (playSpeed(at: next) ?? 1)
                i = next
            }
            return left
        }
    }

    /// The seconds left as the status shows them, from the latest time the core was given.
    var sleepLeftShown: Double? { sleepLeft(now: max(now, sleep?.seenAt ?? 0)) }

    /// What the status shows of the sleep timer: `29 min`, `45 s`, or the mode while its time is
    /// not known (`track`).
    public var sleepMark: String? {
        guard let sleep else { return nil }
        guard let left = sleepLeftShown else { return sleep.request.mode }
        return left >= 60 ? "\(Int((left / 60).rounded(.up))) min" : "\(Int(left.rounded(.up))) s"
    }

    /// The panel's mark of the sleep timer, beside shuffle and repeat (plain letters: every panel
    /// has them): `z29` minutes, `z45s` seconds, `z` while the end's time is not known.
    var sleepPanelMark: String? {
        guard sleep != nil else { return nil }
        guard let left = sleepLeftShown else { return "z" }
        return left >= 60 ? "z\(min(99, Int((left / 60).rounded(.up))))" : "z\(Int(left.rounded(.up)))s"
    }

    /// Seconds left in the current track as heard, nil without a length: wall seconds, the file's
    /// time left over its playback speed (the timers and the fade run on the clock).
    var trackLeft: Double? {
        guard let duration = currentTrack?.info.duration else { return nil }
        return max(0, duration - position) / playingSpeed
    }

    /// The current track's playback speed (1 when none plays).
    var playingSpeed: Double { cursor.flatMap { playSpeed(at: $0) } ?? 1 }

    /// Whether the track at order index `i` is the last of its folder in play order: the queue ends
    /// after it, wraps (repeat all), or goes on in another folder.
    func sleepEndsFolder(at i: Int) -> Bool {
        guard let next = skipTarget(from: i), next > i, let here = track(id: order[i]), let there = track(id: order[next]) else { return true }
        return Paths.directory(here.info.path) != Paths.directory(there.info.path)
    }

    /// Whether the timer ends with the current track's end: the engine is then handed no successor
    /// (`syncNext`), so it stops there, and its `trackFinished` is the end.
    var sleepEndsWithTrack: Bool {
        guard let sleep, let cursor else { return false }
        switch sleep.request {
        case .after: return false
        case .end(.track): return true
        case .end(.chapter): return sleepChapterEnd == nil
        case .end(.folder): return sleepEndsFolder(at: cursor)
        }
    }

    /// Where the chapter playing ends (the next chapter's start), nil in the last chapter or
    /// without chapters.
    var sleepChapterEnd: Double? {
        guard let info = currentTrack?.info, let chapters = info.chapters else { return nil }
        let next = info.chapterIndex(at: position).map { $0 + 1 } ?? 0
        return next < chapters.count ? chapters[next].start : nil
    }

    /// The seconds to the end while the current track is the last the timer lets play: the track's
    /// end, or the chapter's. Nil when another track comes first, or the time is unknown.
    var sleepFinalLeft: Double? {
        guard let sleep else { return nil }
        if case .end(.chapter) = sleep.request, let end = sleep.chapterEnd { return max(0, end - position) / playingSpeed }
        return sleepEndsWithTrack ? trackLeft : nil
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// Severity of a log line; journald reads the `<N>` prefix as the priority.
public enum LogLevel: Int, Comparable, Sendable {
    /// Something failed.
    case error = 3
    /// Something is wrong but handled.
    case warning = 4
    /// What the player is doing.
    case info = 6
    /// Every event and command.
    case debug = 7

    /// Parses `error`, `warning`/`warn`, `info`, `debug`.
    public init?(name: String) {
        switch name.lowercased() {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    /// Lower raw value = more severe; `a < b` means a is less severe.
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }
}

/// Writes log lines to stderr. Not thread-safe by design: only the loop thread logs.
public final class Log {
    /// Lines less severe than this are dropped.
    public var level: LogLevel
    /// Prefix lines with `<N>` for journald (when stderr is not a terminal).
    public var journalPrefix: Bool
    /// Called before a line is written and after, so a terminal status line can be cleared
    /// and redrawn around it.
    public var aroundWrite: ((Bool) -> Void)?
    /// Also called with every line written (the console's `events` stream).
    public var observer: ((LogLevel, String) -> Void)?
    /// The last lines written, oldest first (for `log` on the console and the socket), at most
    /// `keep`, each stamped with the local wall-clock time: `[2026-12-01 04:47:43] info: …`.
    public private(set) var recent: [String] = []
    /// How many lines `recent` keeps.
    public let keep: Int
    private var repeated: (message: String, severity: LogLevel, count: Int, since: Double)?
    private let clock: () -> Double
    private let wallClock: () -> Double

    /// A log at `level`; `clock` (monotonic seconds) times the repeat summaries, `wallClock`
    /// (seconds since the epoch) stamps the lines kept in `recent`.
    public init(level: LogLevel = .info, keep: Int = 200, clock: @escaping () -> Double = monotonicNow,
                wallClock: @escaping () -> Double = wallClockNow) {
        self.level = level
        self.keep = keep
        self.clock = clock
        self.wallClock = wallClock
        self.journalPrefix = isatty(2) == 0
    }

    /// Writes `message` at `severity` when the level lets it through. The same message again
    /// and again (a device that keeps failing) is written once, then summarised with a count
    /// when something else is logged or a minute has passed, so the journal never floods.
    public func write(_ severity: LogLevel, _ message: String) {
        guard severity >= level else { return }
        let now = clock()
        if var r = repeated, r.message == message, r.severity == severity {
            r.count += 1
            repeated = r
            if now - r.since < 60 { return }
            emit(severity, "\(message) (repeated \(r.count) times in \(Int(now - r.since)) s)")
            repeated = (message, severity, 0, now)
            return
        }
        flushRepeats()
        repeated = (message, severity, 0, now)
        emit(severity, message)
    }

    /// Writes the pending "(repeated N times)" summary, if any.
    public func flushRepeats() {
        guard let r = repeated, r.count > 0 else { return }
        repeated = nil
        emit(r.severity, "previous message repeated \(r.count) more time\(r.count == 1 ? "" : "s")")
    }

    private func emit(_ severity: LogLevel, _ message: String) {
        // One line per message, whatever a file name or tag in it holds.
        let message = DisplayText.inert(message)
        aroundWrite?(true)
        let prefix = journalPrefix ? "<\(severity.rawValue)>" : (severity == .error ? "jukebox: error: " : severity == .warning ? "jukebox: warning: " : "jukebox: ")
        writeAll(2, prefix + message + "\n")
        aroundWrite?(false)
        let name: String
        switch severity {
        case .error: name = "error"
        case .warning: name = "warning"
        case .info: name = "info"
        case .debug: name = "debug"
        }
        recent.append("[" + wallClockText(wallClock()) + "] " + name + ": " + message)
        if recent.count > keep { recent.removeFirst(recent.count - keep) }
        observer?(severity, message)
    }

    /// Convenience for `.error`.
    public func error(_ m: String) { write(.error, m) }
    /// Convenience for `.warning`.
    public func warning(_ m: String) { write(.warning, m) }
    /// Convenience for `.info`.
    public func info(_ m: String) { write(.info, m) }
    /// Convenience for `.debug`.
    public func debug(_ m: String) { write(.debug, m) }
}

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

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

    /// A log at `level`.
    public init(level: LogLevel = .info) {
        self.level = level
        self.journalPrefix = isatty(2) == 0
    }

    /// Writes `message` at `severity` when the level lets it through.
    public func write(_ severity: LogLevel, _ message: String) {
        guard severity >= level else { return }
        aroundWrite?(true)
        let prefix = journalPrefix ? "<\(severity.rawValue)>" : (severity == .error ? "jukebox: error: " : severity == .warning ? "jukebox: warning: " : "jukebox: ")
        let line = prefix + message + "\n"
        writeAll(2, line)
        aroundWrite?(false)
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

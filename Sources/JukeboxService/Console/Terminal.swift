// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc
import JukeboxSystem

/// The foreground player's terminal: single-key input (raw mode, restored on close) and one
/// status line redrawn in place; messages print above it.
public final class Terminal: StatusSink {
    /// The status line shows the position.
    public var showsTime: Bool { true }

    private let input: Int32
    private var saved = termios()
    private var raw = false
    private var line = ""
    private let log: Log
    /// Lines drawn above the status line (a simulated panel), and how many are on screen now.
    private var block: [String] = []
    private var drawn = 0

    /// Whether both stdin and stdout are terminals (keys and a live status line make sense).
    public static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Takes the terminal on `input` (stdin) into raw mode.
    public init(input: Int32 = 0, log: Log) {
        self.input = input
        self.log = log
        if tcgetattr(input, &saved) == 0 {
            var t = saved
            t.c_lflag &= ~tcflag_t(ICANON | ECHO)
            // Keep ISIG off too: Ctrl-C arrives as a key and quits cleanly through the core.
            t.c_lflag &= ~tcflag_t(ISIG)
            withUnsafeMutableBytes(of: &t.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            raw = tcsetattr(input, TCSANOW, &t) == 0
        }
        log.aroundWrite = { [weak self] before in self?.aroundLog(before) }
        writeAll(1, KeyMap.help + "\n")
    }

    /// Restores the terminal; safe to call twice.
    public func close() {
        if raw {
            tcsetattr(input, TCSANOW, &saved)
            raw = false
        }
        draw()
        emit("\n")
        line = ""
        block = []
        drawn = 0
        log.aroundWrite = nil
    }

    /// Shows `lines` (a simulated panel) above the status line, redrawn in place.
    public func setBlock(_ lines: [String]) {
        guard lines != block else { return }
        block = lines
        draw()
    }

    // Moves up over what was drawn, then redraws the block and the status line.
    private func draw() {
        var out = "\r" + (drawn > 0 ? "\u{1B}[\(drawn)A" : "")
        for l in block { out += "\u{1B}[2K" + l + "\n" }
        out += "\u{1B}[2K" + line
        drawn = block.count
        emit(out)
    }

    deinit { close() }

    /// Redraws the status line, cut to the terminal's width.
    public func render(_ view: StatusView) {
        line = Self.fit(view.line, width: Self.width())
        draw()
    }

    /// Prints a message above the status line.
    public func report(_ message: String) {
        log.warning(message)
    }

    private func aroundLog(_ before: Bool) {
        if before {
            // Clear the block and the status line; the message prints there, then they come back below it.
            emit("\r" + (drawn > 0 ? "\u{1B}[\(drawn)A" : "") + "\u{1B}[J")
            drawn = 0
        } else {
            draw()
        }
    }

    private func emit(_ s: String) {
        writeAll(1, s)
    }

    static func width() -> Int {
        var ws = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &ws) == 0, ws.ws_col > 0 { return Int(ws.ws_col) }
        return 80
    }

    /// `text` cut to `width` characters (with an ellipsis), so the line never wraps.
    static func fit(_ text: String, width: Int) -> String {
        guard text.count >= width, width > 1 else { return text }
        return String(text.prefix(width - 2)) + "…"
    }
}

/// Status for a player without a terminal (daemon, pipes): logs what plays when the track or
/// phase changes, not every second.
public final class LogStatus: StatusSink {
    private let log: Log
    private var last: (String, String)?

    /// A sink writing to `log`.
    public init(log: Log) { self.log = log }

    /// Logs a line when the track or the phase changed.
    public func render(_ view: StatusView) {
        let key = (view.phase.rawValue, view.title)
        if let last, last == key { return }
        last = key
        if view.count == 0 {
            log.info("\(view.phase.rawValue): queue empty")
        } else {
            log.info("\(view.phase.rawValue): \(view.title)" + (view.artist.map { " – \($0)" } ?? "") +
                     " [\(view.index)/\(view.count)]" + (view.message.map { " (\($0))" } ?? ""))
        }
    }

    /// Logs the message as a warning: reports are things that went wrong.
    public func report(_ message: String) { log.warning(message) }
}

// SPDX-License-Identifier: MIT
import CAlsaMessages
import JukeboxSystem
import Synchronization

/// libasound's own diagnostics ("Cannot get card index for Loopback", "Unknown PCM …"), which it
/// would otherwise print straight to stderr on every failed open: routed to a sink instead, so the
/// player's log shows them once and counts repeats like any other line.
public enum AlsaMessages {
    private static let sink = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Messages already passed on: how many repeats were held back since, and when it was passed on.
    private static let seen = Mutex<[String: (held: Int, at: Double)]>([:])
    /// A message repeats at most this often (seconds), with the count of repeats held back. A
    /// drain loop alternates two messages, which the log's own "repeated" summary (for
    /// consecutive lines) would not catch.
    static let repeatInterval = 60.0

    /// Sends every later libasound message to `receive`, called on the thread that called ALSA
    /// (the engine's writer, the loop for the mixer): it must only hand the text on. The text is
    /// as libasound wrote it (device names come from configuration): whoever shows it makes it
    /// inert (the log does).
    public static func route(to receive: @escaping @Sendable (String) -> Void) {
        sink.withLock { $0 = receive }
        jukebox_alsa_route_messages { text in
            guard let text else { return }
            let message = String(cString: text)
            if let line = AlsaMessages.admit(message, now: monotonicNow()) { AlsaMessages.sink.withLock { $0 }?(line) }
        }
    }

    /// Answers libasound reports as failures that the output asked for and handles: a non-blocking
    /// drain answers EAGAIN until the stream has played out, and the delay of a stream that has
    /// just run dry is EPIPE (an underrun, which the output counts and `diag` shows). Logged, each
    /// pause or track end put two "failed" lines in a healthy box's journal.
    static let expected = ["SNDRV_PCM_IOCTL_DRAIN failed (-11)", "SNDRV_PCM_IOCTL_DELAY failed (-32)"]

    /// The line to pass on for `message` at `now`, or nil while a repeat is held back or when it is
    /// an `expected` answer.
    static func admit(_ message: String, now: Double) -> String? {
        if expected.contains(where: { message.contains($0) }) { return nil }
        return seen.withLock { seen in
            if let last = seen[message], now - last.at < repeatInterval {
                seen[message] = (last.held + 1, last.at)
                return nil
            }
            let held = seen[message]?.held ?? 0
            // Bounded: device names come from configuration, and each may bring its own text.
            if seen.count >= 64 { seen.removeAll() }
            seen[message] = (0, now)
            return held > 0 ? message + " (repeated \(held) times since)" : message
        }
    }

    /// Gives the messages back to libasound's own printing.
    public static func unroute() {
        jukebox_alsa_route_messages(nil)
        sink.withLock { $0 = nil }
    }
}

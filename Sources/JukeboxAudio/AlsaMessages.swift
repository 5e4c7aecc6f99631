// SPDX-License-Identifier: MIT
import CAlsaMessages
import Synchronization

/// libasound's own diagnostics ("Cannot get card index for Loopback", "Unknown PCM …"), which it
/// would otherwise print straight to stderr on every failed open: routed to a sink instead, so the
/// player's log shows them once and counts repeats like any other line.
public enum AlsaMessages {
    private static let sink = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends every later libasound message to `receive`, called on the thread that called ALSA
    /// (the engine's writer, the loop for the mixer): it must only hand the text on. Control
    /// characters are replaced, since device names come from configuration.
    public static func route(to receive: @escaping @Sendable (String) -> Void) {
        sink.withLock { $0 = receive }
        jukebox_alsa_route_messages { text in
            guard let text else { return }
            let message = String(decoding: Array(String(cString: text).utf8).map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 },
                                 as: UTF8.self)
            AlsaMessages.sink.withLock { $0 }?(message)
        }
    }

    /// Gives the messages back to libasound's own printing.
    public static func unroute() {
        jukebox_alsa_route_messages(nil)
        sink.withLock { $0 = nil }
    }
}

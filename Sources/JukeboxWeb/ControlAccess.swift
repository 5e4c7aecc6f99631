// SPDX-License-Identifier: MIT
import JukeboxCore

/// Which control lines the web face passes on, decided on the parsed command (never on the
/// words): playback and the queue's order are open to anyone allowed to connect (like the box's
/// buttons and MPD without a password); what adds, replaces, saves or maps needs a session;
/// what holds the player or reads its insides is never for the web. Pairing, trusting and
/// forgetting the Bluetooth speaker need a session, every one of them: a pair lets a device
/// near the box into it, a trust lets it reconnect by itself, a forget takes the owner's
/// speaker away, and each runs bluetoothctl for up to 58 s (a pair scans first); none is a guest's to do.
public enum ControlAccess: Equatable, Sendable {
    case open
    case session
    case refused

    public static func of(_ command: ControlCommand) -> ControlAccess {
        switch command {
        case .intent(let event):
            switch event {
            case .play, .pause, .togglePlayPause, .stop, .next, .previous, .nextFile, .previousFile, .seek, .seekBy, .setVolume, .changeVolume,
                 .setShuffle, .setRepeat, .playEntry, .remove, .move, .clear:
                return .open
            case .sleepTimer, .setSpeed, .playPodcast:
                return .session
            default:
                // An intent the language gains later is refused until it is placed here.
                return .refused
            }
        case .status, .statusJSON, .queue, .queueJSON, .lsJSON, .searchJSON, .help, .version, .cardsJSON, .bookmarksJSON, .podcastsJSON:
            return .open
        case .add, .load, .save, .cardAssign, .cardAssignNext, .cardDelete, .bookmarkReset, .reload, .restart, .libraryUpdate:
            return .session
        case .bluetooth(let action, _, _):
            switch action {
            case .pair, .trust, .forget, .disconnect: return .session
            }
        case .interruptBegin, .interruptEnd, .yieldBegin, .yieldEnd, .sourceBegin, .sourceEnd, .events, .log, .diag, .systemJSON:
            return .refused
        }
    }
}

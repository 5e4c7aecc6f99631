// SPDX-License-Identifier: MIT

/// A line of the control language (control socket, later the serial console), parsed.
/// The grammar lives in the core so every front end understands the same words.
public enum ControlCommand: Equatable, Sendable {
    /// A player intent, carried out as this event.
    case intent(Event)
    /// Report the status.
    case status
    /// Begin an interruption that lasts until `interruptEnd` (reason for the status).
    case interruptBegin(reason: String)
    /// End the most recent `interruptBegin`.
    case interruptEnd
    /// Begin an interruption held by this connection: it ends with `yieldEnd` or when the
    /// connection closes (so a crashed helper cannot keep the player silent).
    case yieldBegin(reason: String)
    /// End this connection's interruption.
    case yieldEnd
    /// List the commands.
    case help

    /// The commands, one per line, for `help`.
    public static let helpText = """
    status · play · pause · toggle · stop · next · prev · seek [+|-]m:ss · vol [+|-]N
    shuffle on|off · repeat off|one|all · interrupt begin [reason] · interrupt end
    yield begin [reason] · yield end · help
    """

    /// Longest line accepted, in bytes.
    public static let maxLineLength = 1024

    /// Parses one line (without its newline); the error says what was wrong, for the reply.
    /// `seed` feeds shuffle.
    public static func parse(_ line: String, seed: UInt64) -> Result<ControlCommand, ControlError> {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first?.lowercased() else { return .failure(ControlError("empty command")) }
        let rest = Array(words.dropFirst())
        func none(_ c: ControlCommand) -> Result<ControlCommand, ControlError> {
            rest.isEmpty ? .success(c) : .failure(ControlError("\(verb) takes no arguments"))
        }
        switch verb {
        case "status": return none(.status)
        case "help", "?": return none(.help)
        case "play": return none(.intent(.play))
        case "pause": return none(.intent(.pause))
        case "toggle": return none(.intent(.togglePlayPause))
        case "stop": return none(.intent(.stop))
        case "next": return none(.intent(.next))
        case "prev", "previous": return none(.intent(.previous))
        case "seek":
            guard rest.count == 1, let t = TimeFormat.parse(rest[0]) else {
                return .failure(ControlError("usage: seek [+|-]m:ss"))
            }
            return .success(.intent(t.relative ? .seekBy(t.seconds) : .seek(to: t.seconds)))
        case "vol", "volume":
            guard rest.count == 1, let n = Int(rest[0].hasPrefix("+") ? String(rest[0].dropFirst()) : rest[0]),
                  abs(n) <= 100 else {
                return .failure(ControlError("usage: vol [+|-]N (0-100)"))
            }
            let relative = rest[0].hasPrefix("+") || rest[0].hasPrefix("-")
            return .success(.intent(relative ? .changeVolume(by: n) : .setVolume(n)))
        case "shuffle":
            switch rest.first?.lowercased() {
            case "on"? where rest.count == 1: return .success(.intent(.setShuffle(true, seed: seed)))
            case "off"? where rest.count == 1: return .success(.intent(.setShuffle(false, seed: seed)))
            default: return .failure(ControlError("usage: shuffle on|off"))
            }
        case "repeat":
            guard rest.count == 1, let mode = RepeatMode(rawValue: rest[0].lowercased()) else {
                return .failure(ControlError("usage: repeat off|one|all"))
            }
            return .success(.intent(.setRepeat(mode)))
        case "interrupt", "yield":
            let reason = rest.dropFirst().joined(separator: " ")
            switch (verb, rest.first?.lowercased()) {
            case ("interrupt", "begin"?): return .success(.interruptBegin(reason: reason.isEmpty ? "interrupt" : reason))
            case ("interrupt", "end"?) where rest.count == 1: return .success(.interruptEnd)
            case ("yield", "begin"?): return .success(.yieldBegin(reason: reason.isEmpty ? "yield" : reason))
            case ("yield", "end"?) where rest.count == 1: return .success(.yieldEnd)
            default: return .failure(ControlError("usage: \(verb) begin [reason] | \(verb) end"))
            }
        default:
            return .failure(ControlError("unknown command \"\(verb.prefix(40))\" (try: help)"))
        }
    }
}

/// Why a control line was refused, phrased for the person who typed it.
public struct ControlError: Error, Equatable, Sendable {
    /// The message.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
}

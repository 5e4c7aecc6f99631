// SPDX-License-Identifier: MIT

/// An ANSI escape sequence a terminal sent for a key (cursor keys, function keys, Alt+key).
public enum EscapeSequence: Equatable, Sendable {
    /// ESC [, `parameters` bytes in 0x20...0x3F (digits, `;`…), then `final` in 0x40...0x7E.
    case csi(parameters: Int, final: UInt8)
    /// ESC O and one byte (F1-F4, and cursor keys in application mode).
    case ss3(final: UInt8)
    /// ESC and a byte that starts no sequence: Alt+key on most terminals.
    case alt(UInt8)

    /// The cursor key this sequence stands for, if any: ESC [ A…D or ESC O A…D without
    /// parameters (a modified arrow such as ESC [ 1;5C is not a plain arrow).
    public var cursorKey: Key? {
        let final: UInt8
        switch self {
        case .csi(0, let f), .ss3(let f): final = f
        default: return nil
        }
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        default: return nil
        }
    }
}

/// Recognises escape sequences in terminal input, one byte at a time, so a sequence split across
/// reads is joined and the state is a few bytes whatever arrives. The one definition of the
/// sequences' grammar: the player's keys (`KeyDecoder`) and the serial console's line editor both
/// use it, and each decides what a finished sequence means.
///
/// Two rules keep a person in control whatever garbage arrives: a control byte (below 0x20, or
/// DEL) inside a sequence ends it and is itself, so Enter and Ctrl-C always work; and a CSI takes
/// at most `maxParameters` parameter bytes, so a stream of digits after ESC [ cannot swallow input
/// forever.
public struct EscapeRecognizer: Equatable, Sendable {
    /// What one byte was.
    public enum Step: Equatable, Sendable {
        /// Not part of a sequence: the byte stands for itself.
        case byte(UInt8)
        /// Part of a sequence that is not finished, or cut off (too long, or a byte that cannot
        /// stand in it): nothing to act on.
        case swallowed
        /// The byte finished this sequence.
        case sequence(EscapeSequence)
    }

    /// The most parameter bytes a CSI may have; the next one is swallowed and ends it.
    public static let maxParameters = 32

    private enum Phase: Equatable, Sendable {
        case none
        /// After ESC.
        case started
        /// After ESC [ and `count` parameter bytes.
        case csi(count: Int)
        /// After ESC O.
        case ss3
    }

    private var phase = Phase.none

    /// A recogniser outside any sequence.
    public init() {}

    /// Whether a sequence has begun and not ended.
    public var inSequence: Bool { phase != .none }

    /// Forgets a sequence that has begun (e.g. when the line it was typed on is abandoned).
    public mutating func reset() { phase = .none }

    /// Takes the next byte.
    public mutating func feed(_ byte: UInt8) -> Step {
        if byte == 0x1B {
            phase = .started  // ESC ESC …: the newer one starts the sequence
            return .swallowed
        }
        guard phase != .none else { return .byte(byte) }
        if byte < 0x20 || byte == 0x7F {
            phase = .none
            return .byte(byte)
        }
        switch phase {
        case .none:
            return .byte(byte)
        case .started:
            switch byte {
            case UInt8(ascii: "["): phase = .csi(count: 0); return .swallowed
            case UInt8(ascii: "O"): phase = .ss3; return .swallowed
            default: phase = .none; return .sequence(.alt(byte))
            }
        case .csi(let count):
            if (0x40...0x7E).contains(byte) { phase = .none; return .sequence(.csi(parameters: count, final: byte)) }
            if (0x20...0x3F).contains(byte) && count < Self.maxParameters { phase = .csi(count: count + 1); return .swallowed }
            phase = .none  // too long, or a byte (above 0x7E) no CSI holds
            return .swallowed
        case .ss3:
            phase = .none
            return .sequence(.ss3(final: byte))
        }
    }
}

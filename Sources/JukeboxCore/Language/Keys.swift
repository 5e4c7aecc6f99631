// SPDX-License-Identifier: MIT

/// A key a person pressed on the terminal.
public enum Key: Equatable, Sendable {
    /// A printable character or control byte.
    case character(Character)
    /// Cursor keys.
    case left, right, up, down
}

/// Turns raw terminal bytes into keys. Escape sequences are recognised by `EscapeRecognizer`, so
/// one split across reads is joined; a plain arrow (ESC [ A…D, ESC O A…D) is a cursor key, Alt+key
/// is the key, and any other sequence is dropped rather than misread as letters. A control byte
/// inside a sequence ends it and is itself, so Ctrl-C always quits.
public struct KeyDecoder: Sendable {
    private var escape = EscapeRecognizer()

    /// An empty decoder.
    public init() {}

    /// Feeds bytes; returns the keys completed so far.
    public mutating func feed(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        for byte in bytes {
            switch escape.feed(byte) {
            case .byte(let b), .sequence(.alt(let b)):
                if b < 0x80 { keys.append(.character(Character(Unicode.Scalar(b)))) }  // non-ASCII bytes carry no command
            case .sequence(let sequence):
                if let key = sequence.cursorKey { keys.append(key) }
            case .swallowed:
                break
            }
        }
        return keys
    }
}

/// The player's keyboard controls on a terminal.
public enum KeyMap {
    /// Help text listing the keys, one line.
    public static let help = "keys: space pause · n/p next/prev · ←/→ seek · +/- vol · s shuffle · r repeat · q quit"

    /// The event a key stands for, if any; `seed` feeds shuffle.
    public static func event(for key: Key, settings: Settings, seed: UInt64) -> Event? {
        switch key {
        case .character(" "), .character("k"): return .togglePlayPause
        case .character("n"), .character("N"): return .next
        case .character("p"), .character("P"): return .previous
        case .right, .character("l"): return .seekBy(settings.seekStep)
        case .left, .character("h"): return .seekBy(-settings.seekStep)
        case .up, .character("+"), .character("="): return .changeVolume(by: settings.volumeStep)
        case .down, .character("-"), .character("_"): return .changeVolume(by: -settings.volumeStep)
        case .character("s"), .character("S"): return .toggleShuffle(seed: seed)
        case .character("r"), .character("R"): return .cycleRepeat
        case .character("x"): return .stop
        case .character("q"), .character("Q"), .character("\u{03}"): return .quit
        default: return nil
        }
    }
}

// SPDX-License-Identifier: MIT

/// A key a person pressed on the terminal.
public enum Key: Equatable, Sendable {
    /// A printable character or control byte.
    case character(Character)
    /// Cursor keys.
    case left, right, up, down
}

/// Turns raw terminal bytes into keys. Escape sequences may arrive split across reads, so the
/// decoder keeps an unfinished one until the rest comes; a lone ESC or an unknown sequence is
/// dropped rather than misread as letters.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    /// An empty decoder.
    public init() {}

    /// Feeds bytes; returns the keys completed so far.
    public mutating func feed(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        pending += bytes
        var i = 0
        while i < pending.count {
            let b = pending[i]
            if b == 0x1B {
                guard i + 1 < pending.count else { break }
                if pending[i + 1] != UInt8(ascii: "[") && pending[i + 1] != UInt8(ascii: "O") {
                    i += 1  // lone ESC
                    continue
                }
                guard i + 2 < pending.count else { break }
                switch pending[i + 2] {
                case UInt8(ascii: "A"): keys.append(.up)
                case UInt8(ascii: "B"): keys.append(.down)
                case UInt8(ascii: "C"): keys.append(.right)
                case UInt8(ascii: "D"): keys.append(.left)
                default:
                    // Skip the rest of an unknown CSI sequence (parameters, then a final byte).
                    var j = i + 2
                    while j < pending.count && !(0x40...0x7E).contains(pending[j]) { j += 1 }
                    if j == pending.count { pending.removeFirst(i); return keys }
                    i = j + 1
                    continue
                }
                i += 3
            } else if b < 0x80 {
                keys.append(.character(Character(Unicode.Scalar(b))))
                i += 1
            } else {
                i += 1  // non-ASCII bytes carry no command
            }
        }
        pending.removeFirst(min(i, pending.count))
        if pending.count > 16 { pending.removeAll() }
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

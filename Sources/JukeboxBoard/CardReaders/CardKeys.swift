// SPDX-License-Identifier: MIT

/// Turns the key events of a USB card reader that acts as a keyboard into card ids. Readers "type"
/// the id as key presses and end it with Enter; what counts is the key *code*, so the keyboard
/// layout of the system (AZERTY, Dvorak…) does not matter. Digits (top row and keypad) and the hex
/// letters A–F make an id; Shift, Ctrl, Alt and the lock keys are ignored; any other key spoils
/// the id being typed. Pure: times are the events' (kernel) timestamps.
public struct CardKeys: Sendable {
    /// What one key event completed.
    public enum Output: Equatable, Sendable {
        /// An id ended by Enter, and the time of the Enter.
        case card(String, at: Double)
        /// Keys that did not make an id: why (for the log and `probe rfid`).
        case refused(String)
    }

    /// Longest id accepted; longer input (a reader gone mad, a real keyboard) is refused whole.
    public static let maxLength = 32
    /// Seconds between two key presses beyond which what was typed so far is dropped (a reader
    /// types a whole id in a few tens of milliseconds; a torn id must not prefix the next one).
    public var keyGap: Double

    private var typed = ""
    private var spoiled: String?
    private var lastAt: Double?

    /// An empty assembler.
    public init(keyGap: Double = 0.5) {
        self.keyGap = keyGap
    }

    /// Key codes (linux/input-event-codes.h) → the character they stand for on a reader.
    static let characters: [Int: Character] = {
        var map: [Int: Character] = [:]
        for (i, c) in "1234567890".enumerated() { map[2 + i] = c }           // KEY_1 … KEY_0
        for (code, c) in [(30, "A"), (48, "B"), (46, "C"), (32, "D"), (18, "E"), (33, "F")] as [(Int, Character)] { map[code] = c }
        for (code, c) in [(82, "0"), (79, "1"), (80, "2"), (81, "3"), (75, "4"), (76, "5"), (77, "6"),
                          (71, "7"), (72, "8"), (73, "9")] as [(Int, Character)] { map[code] = c }  // keypad
        return map
    }()
    /// KEY_ENTER, KEY_KPENTER.
    static let enters: Set<Int> = [28, 96]
    /// Shift, Ctrl, Alt, Meta, Caps Lock, Num Lock: some readers press Shift for letters.
    static let modifiers: Set<Int> = [42, 54, 29, 97, 56, 100, 125, 126, 58, 69]

    /// Feeds one key event; returns what it completed, in order (a dropped torn id, then an id).
    public mutating func feed(_ key: InputKeyEvent) -> [Output] {
        // Only presses count: releases carry nothing, and autorepeat of a stuck key must not
        // type the same digit again.
        guard key.value == 1, !Self.modifiers.contains(key.code) else { return [] }
        var out: [Output] = []
        if let last = lastAt, key.time - last > keyGap || key.time < last {
            if !typed.isEmpty || spoiled != nil {
                out.append(.refused("dropped \(typed.count) key\(typed.count == 1 ? "" : "s") without Enter (a pause of more than \(keyGap) s)"))
            }
            reset()
        }
        lastAt = key.time
        if Self.enters.contains(key.code) {
            if let spoiled {
                out.append(.refused(spoiled))
            } else if !typed.isEmpty {
                out.append(.card(typed, at: key.time))
            }
            reset()
            lastAt = nil
            return out
        }
        guard spoiled == nil else { return out }
        if let c = Self.characters[key.code] {
            if typed.count == Self.maxLength {
                spoiled = "an id longer than \(Self.maxLength) characters"
                typed = ""
            } else {
                typed.append(c)
            }
        } else {
            spoiled = "key \(key.code) is not a digit or a hex letter"
            typed = ""
        }
        return out
    }

    /// Forgets what was typed (the device went away).
    public mutating func reset() {
        typed = ""
        spoiled = nil
        lastAt = nil
    }
}

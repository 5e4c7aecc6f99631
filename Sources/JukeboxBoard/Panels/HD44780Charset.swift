// SPDX-License-Identifier: MIT
import JukeboxCore

/// How the PCF8574 expander's pins P0–P7 are wired to the HD44780 (bit numbers 0–7).
public struct HD44780Pins: Sendable, Equatable {
    public var rs: Int, rw: Int, e: Int, backlight: Int
    /// Pins of D4, D5, D6, D7.
    public var data: [Int]
    /// Whether the backlight is on when its pin is high (most backpacks).
    public var backlightActiveHigh: Bool

    public init(rs: Int, rw: Int, e: Int, backlight: Int, data: [Int], backlightActiveHigh: Bool = true) {
        self.rs = rs
        self.rw = rw
        self.e = e
        self.backlight = backlight
        self.data = data
        self.backlightActiveHigh = backlightActiveHigh
    }

    /// The common backpack: P0 RS, P1 RW, P2 E, P3 backlight, P4–P7 D4–D7.
    public static let standard = HD44780Pins(rs: 0, rw: 1, e: 2, backlight: 3, data: [4, 5, 6, 7])
    /// The "mjkdz"-style backpack: P0–P3 D4–D7, P4 E, P5 RW, P6 RS, P7 backlight.
    public static let mjkdz = HD44780Pins(rs: 6, rw: 5, e: 4, backlight: 7, data: [0, 1, 2, 3])

    /// Parses `rs=0,rw=1,e=2,bl=3,d4=4,d5=5,d6=6,d7=7` (any order, all eight; `bl=!3` for an
    /// active-low backlight), or the names `standard` and `mjkdz`. Nil when a pin is missing,
    /// out of 0–7 or used twice.
    public init?(spec: String) {
        switch spec.lowercased() {
        case "standard", "": self = .standard; return
        case "mjkdz": self = .mjkdz; return
        default: break
        }
        var pins: [String: Int] = [:]
        var activeHigh = true
        for part in spec.lowercased().split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " ") }
            guard pair.count == 2 else { return nil }
            var value = pair[1]
            if pair[0] == "bl", value.hasPrefix("!") { activeHigh = false; value.removeFirst() }
            guard let bit = Int(value), (0...7).contains(bit), pins[pair[0]] == nil else { return nil }
            pins[pair[0]] = bit
        }
        let names = ["rs", "rw", "e", "bl", "d4", "d5", "d6", "d7"]
        guard Set(pins.keys) == Set(names), Set(pins.values).count == 8 else { return nil }
        self.init(rs: pins["rs"]!, rw: pins["rw"]!, e: pins["e"]!, backlight: pins["bl"]!,
                  data: [pins["d4"]!, pins["d5"]!, pins["d6"]!, pins["d7"]!], backlightActiveHigh: activeHigh)
    }

    /// The expander byte for a nibble (low 4 bits = D4–D7) with RS, E and backlight; RW is low.
    func byte(nibble: UInt8, rs rsHigh: Bool, e eHigh: Bool, backlight on: Bool) -> UInt8 {
        var value: UInt8 = 0
        for (index, pin) in data.enumerated() where nibble & (1 << index) != 0 { value |= 1 << pin }
        if rsHigh { value |= 1 << rs }
        if eHigh { value |= 1 << e }
        if on == backlightActiveHigh { value |= 1 << backlight }
        return value
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        String(drop(while: { $0 == set }).reversed().drop(while: { $0 == set }).reversed())
    }
}

/// The HD44780U character ROM A00 (Japanese; the one nearly every cheap module has): what the
/// driver sends for a character and what a code looks like.
public enum HD44780ROM {
    /// Codes above 0x7F (and the two that differ from ASCII) with the character they show.
    static let specials: [(UInt8, Character)] = [
        (0x5C, "¥"), (0x7E, "→"), (0x7F, "←"), (0xA5, "·"), (0xDF, "°"),
        (0xE0, "α"), (0xE1, "ä"), (0xE2, "β"), (0xE3, "ε"), (0xE4, "µ"), (0xE5, "σ"), (0xE6, "ρ"),
        (0xE8, "√"), (0xEC, "¢"), (0xEE, "ñ"), (0xEF, "ö"), (0xF2, "θ"), (0xF3, "∞"), (0xF4, "Ω"),
        (0xF5, "ü"), (0xF6, "Σ"), (0xF7, "π"), (0xFD, "÷"), (0xFF, "█"),
    ]

    private static let encodeTable: [Unicode.Scalar: UInt8] = {
        var table: [Unicode.Scalar: UInt8] = [:]
        for (code, character) in specials { table[character.unicodeScalars.first!] = code }
        table["ß"] = 0xE2 // β stands in for ß
        table["μ"] = 0xE4 // Greek mu, same glyph as micro
        table["•"] = 0xA5
        return table
    }()

    /// The ROM code for a character, or nil when the ROM has no such glyph (then it needs a CGRAM
    /// glyph or a stand-in). ASCII maps to itself except `\` (0x5C is ¥) and `~` (0x7E is →).
    public static func code(for character: Character) -> UInt8? {
        let scalar = PanelText.scalar(character)
        if scalar.value >= 0x20, scalar.value < 0x7E, scalar != "\\" { return UInt8(scalar.value) }
        return encodeTable[scalar]
    }

    /// The ROM code closest to a character: the code itself, else the folded letter (`é` → `e`,
    /// `Ä` → `A`, `~` → `-`, `\` → `/`), else `?`.
    static func nearest(_ character: Character) -> UInt8 {
        if let code = code(for: character) { return code }
        let scalar = PanelText.scalar(character)
        if scalar == "\\" { return UInt8(ascii: "/") }
        if scalar == "~" { return UInt8(ascii: "-") }
        if let folded = PanelText.fold(scalar), let code = code(for: folded) { return code }
        return UInt8(ascii: "?")
    }

    /// What a code shows (codes 0x00–0x0F are CGRAM and are not decoded here); katakana show `▯`.
    public static func character(for code: UInt8) -> Character {
        if code >= 0x20, code < 0x7E, code != 0x5C { return Character(Unicode.Scalar(code)) }
        if code == 0xA0 { return " " }
        return decodeTable[code] ?? "▯"
    }

    private static let decodeTable: [UInt8: Character] = Dictionary(uniqueKeysWithValues: specials)
}

/// The 5×8 CGRAM designs: each row's low 5 bits, top row first, bit 4 leftmost.
public enum HD44780Glyph: Hashable, Sendable {
    /// A panel glyph, or the backslash (the ROM has none).
    case glyph(PanelGlyph)
    case backslash

    /// The glyph's 8 rows.
    public var bitmap: [UInt8] {
        switch self {
        case .backslash: return [0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0x00]
        case .glyph(let glyph):
            switch glyph {
            case .play: return [0x10, 0x18, 0x1C, 0x1E, 0x1C, 0x18, 0x10, 0x00]
            case .pause: return [0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x00]
            case .stop: return [0x00, 0x1F, 0x1F, 0x1F, 0x1F, 0x1F, 0x00, 0x00]
            case .shuffle: return [0x00, 0x13, 0x0B, 0x04, 0x0B, 0x13, 0x00, 0x00]
            case .repeatAll: return [0x02, 0x1F, 0x12, 0x10, 0x01, 0x09, 0x1F, 0x08]
            case .repeatOne: return [0x02, 0x1F, 0x16, 0x14, 0x05, 0x05, 0x1F, 0x08]
            case .volume: return [0x02, 0x06, 0x1E, 0x1E, 0x1E, 0x06, 0x02, 0x00]
            case .note: return [0x06, 0x05, 0x04, 0x04, 0x0C, 0x1C, 0x0C, 0x00]
            case .half: return [0x1C, 0x1C, 0x1C, 0x1C, 0x1C, 0x1C, 0x1C, 0x1C]
            case .full: return [UInt8](repeating: 0x1F, count: 8)
            case .bar1, .bar2, .bar3, .bar4, .bar5, .bar6, .bar7:
                let level = [PanelGlyph.bar1, .bar2, .bar3, .bar4, .bar5, .bar6, .bar7].firstIndex(of: glyph)! + 1
                return (0..<8).map { $0 >= 8 - level ? 0x1F : 0x00 }
            }
        }
    }

    /// The character it stands for (used by the simulator to name what it shows).
    public var character: Character {
        switch self {
        case .backslash: "\\"
        case .glyph(let glyph): glyph.rawValue
        }
    }

    /// Every design, bitmap → character (for decoding CGRAM in the simulator).
    public static let byBitmap: [[UInt8]: Character] = {
        var table: [[UInt8]: Character] = [:]
        for glyph in PanelGlyph.allCases where glyph != .full { table[HD44780Glyph.glyph(glyph).bitmap] = glyph.rawValue }
        table[HD44780Glyph.backslash.bitmap] = "\\"
        return table
    }()
}

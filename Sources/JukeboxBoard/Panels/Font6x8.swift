// SPDX-License-Identifier: MIT
import JukeboxCore

/// The built-in 6×8 pixel font: printable ASCII, Latin-1 (accented letters composed from a base
/// letter and a drawn accent), arrows and every `PanelGlyph`. 128 pixels hold 21 characters.
/// Characters it lacks are folded (`ł` → `l`, `–` → `-`) or shown as `?`.
public enum Font6x8 {
    public static let width = 6
    public static let height = 8

    /// The 8 pixel rows of a character, top first; bit 5 is the leftmost column, bit 0 the sixth.
    public static func rows(for character: Character) -> [UInt8] {
        let scalar = PanelText.scalar(character)
        if let rows = table[scalar] { return rows }
        if let folded = PanelText.fold(scalar), let rows = table[PanelText.scalar(folded)] { return rows }
        return table["?"]!
    }

    /// The 6 pixel columns of a character, left first; bit 0 is the top row (the SSD1306 page layout).
    public static func columns(for character: Character) -> [UInt8] {
        let rows = rows(for: character)
        return (0..<width).map { column in
            var byte: UInt8 = 0
            for (y, row) in rows.enumerated() where row & (0x20 >> column) != 0 { byte |= 1 << y }
            return byte
        }
    }

    /// Whether the font draws the character itself (not folded).
    public static func has(_ character: Character) -> Bool { table[PanelText.scalar(character)] != nil }

    static let table: [Unicode.Scalar: [UInt8]] = {
        var table: [Unicode.Scalar: [UInt8]] = [:]
        for (character, picture) in drawn { table[character.unicodeScalars.first!] = parse(picture) }
        let accents: [(String, String)] = [
            (".#... ..#..", "ÀÈÌÒÙàèìòù"), ("...#. ..#..", "ÁÉÍÓÚÝáéíóúý"), ("..#.. .#.#.", "ÂÊÎÔÛâêîôû"),
            (".##.# #..#.", "ÃÑÕãñõ"), (".#.#. .....", "ÄËÏÖÜäëïöüÿ"), (".###. .#.#.", "Åå"),
        ]
        let bases: [Character: Character] = [
            "À": "A", "È": "E", "Ì": "I", "Ò": "O", "Ù": "U", "Á": "A", "É": "E", "Í": "I", "Ó": "O", "Ú": "U",
            "Ý": "Y", "Â": "A", "Ê": "E", "Î": "I", "Ô": "O", "Û": "U", "Ã": "A", "Ñ": "N", "Õ": "O", "Ä": "A",
            "Ë": "E", "Ï": "I", "Ö": "O", "Ü": "U", "Å": "A",
        ]
        for (accent, letters) in accents {
            let mark = parse(accent)
            for letter in letters {
                if letter.isUppercase {
                    table[letter.unicodeScalars.first!] = mark.prefix(2) + compressed(table[bases[letter]!.unicodeScalars.first!]!)
                } else {
                    let base = Character(String(letter).decomposedBase)
                    table[letter.unicodeScalars.first!] = mark.prefix(2) + table[base.unicodeScalars.first!]!.suffix(6)
                }
            }
        }
        var cedilla = table["C"]!
        cedilla[7] = parse("..#..")[0]
        table["Ç"] = cedilla
        var small = table["c"]!
        small[7] = parse("..#..")[0]
        table["ç"] = small
        table["\u{A0}"] = table[" "]
        table["\u{AD}"] = table["-"]
        return table
    }()

    // A capital in 6 rows (rows 2–7 under an accent): one row that repeats its neighbour is dropped.
    private static func compressed(_ rows: [UInt8]) -> [UInt8] {
        var seven = Array(rows.prefix(7))
        let drop = (0..<6).first { seven[$0] == seven[$0 + 1] } ?? 1
        seven.remove(at: drop)
        return seven
    }

    private static func parse(_ picture: String) -> [UInt8] {
        var rows = picture.split(separator: " ").map { row -> UInt8 in
            var value: UInt8 = 0
            for (x, pixel) in row.enumerated() where pixel == "#" && x < 6 { value |= 0x20 >> x }
            return value
        }
        while rows.count < 8 { rows.append(0) }
        return rows
    }
}

private extension String {
    // The lower-case ASCII letter under a Latin-1 accented lower-case letter (ÿ → y).
    var decomposedBase: String {
        let map: [Character: Character] = [
            "à": "a", "á": "a", "â": "a", "ã": "a", "ä": "a", "å": "a", "è": "e", "é": "e", "ê": "e", "ë": "e",
            "ì": "i", "í": "i", "î": "i", "ï": "i", "ò": "o", "ó": "o", "ô": "o", "õ": "o", "ö": "o",
            "ù": "u", "ú": "u", "û": "u", "ü": "u", "ý": "y", "ÿ": "y", "ñ": "n",
        ]
        return String(map[first!] ?? first!)
    }
}

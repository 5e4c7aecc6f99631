// SPDX-License-Identifier: MIT
import JukeboxCore

/// Character folding shared by the panels: one character in, one character out (rows keep their
/// width). Accented Latin letters lose their accent, typographic punctuation becomes ASCII.
enum PanelText {
    /// A character as one Unicode scalar: a base letter with one combining accent is composed into
    /// its Latin-1 form when there is one (`e` + U+0301 → `é`); otherwise the first scalar.
    static func scalar(_ character: Character) -> Unicode.Scalar {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return " " }
        if scalars.count == 2, let mark = scalars.dropFirst().first, let row = combining[mark.value],
           let composed = row[Character(first)] {
            return composed
        }
        return first
    }

    /// The ASCII (or kept) stand-in for a character no panel table has: accents dropped, quotes and
    /// dashes made ASCII; nil when there is no sensible one.
    static func fold(_ scalar: Unicode.Scalar) -> Character? {
        if scalar.isASCII { return Character(scalar) }
        return folds[scalar]
    }

    // Base letters and what each combining accent makes of them (Latin-1 only).
    private static let combining: [UInt32: [Character: Unicode.Scalar]] = {
        let rows: [(UInt32, String, String)] = [
            (0x300, "AEIOUaeiou", "ÀÈÌÒÙàèìòù"),
            (0x301, "AEIOUYaeiouy", "ÁÉÍÓÚÝáéíóúý"),
            (0x302, "AEIOUaeiou", "ÂÊÎÔÛâêîôû"),
            (0x303, "ANOano", "ÃÑÕãñõ"),
            (0x308, "AEIOUaeiouy", "ÄËÏÖÜäëïöüÿ"),
            (0x30A, "Aa", "Åå"),
            (0x327, "Cc", "Çç"),
        ]
        var table: [UInt32: [Character: Unicode.Scalar]] = [:]
        for (mark, bases, composed) in rows {
            table[mark] = Dictionary(uniqueKeysWithValues: zip(bases, composed.unicodeScalars))
        }
        return table
    }()

    private static let folds: [Unicode.Scalar: Character] = {
        var table: [Unicode.Scalar: Character] = [:]
        let groups: [(String, Character)] = [
            ("ÀÁÂÃÄÅĀĂĄÆ", "A"), ("àáâãäåāăąæª", "a"), ("ÇĆĈĊČ", "C"), ("çćĉċč¢", "c"), ("ĎĐÐ", "D"), ("ďđð", "d"),
            ("ÈÉÊËĒĔĖĘĚ", "E"), ("èéêëēĕėęě", "e"), ("ĜĞĠĢ", "G"), ("ĝğġģ", "g"), ("ĤĦ", "H"), ("ĥħ", "h"),
            ("ÌÍÎÏĨĪĬĮİ", "I"), ("ìíîïĩīĭįı", "i"), ("Ĵ", "J"), ("ĵ", "j"), ("Ķ", "K"), ("ķ", "k"),
            ("ĹĻĽĿŁ£", "L"), ("ĺļľŀł", "l"), ("ÑŃŅŇ", "N"), ("ñńņňŉ", "n"), ("ÒÓÔÕÖØŌŎŐŒ", "O"), ("òóôõöøōŏőœº°", "o"),
            ("ŔŖŘ", "R"), ("ŕŗř", "r"), ("ŚŜŞŠ§", "S"), ("śŝşšß", "s"), ("ŢŤŦÞ", "T"), ("ţťŧþ", "t"),
            ("ÙÚÛÜŨŪŬŮŰŲ", "U"), ("ùúûüũūŭůűųµ", "u"), ("Ŵ", "W"), ("ŵ", "w"), ("ÝŸŶ¥", "Y"), ("ýÿŷ", "y"),
            ("ŹŻŽ", "Z"), ("źżž", "z"), ("×", "x"), ("÷", "/"), ("‘’‚‛′´`", "'"), ("“”„‟″«»¨", "\""),
            ("‐‑‒–—―−­", "-"), ("…·•∙", "."), ("\u{A0}\u{2002}\u{2003}\u{2009}\u{202F}", " "), ("¡", "!"), ("¿", "?"),
            ("¹", "1"), ("²", "2"), ("³", "3"), ("±", "+"), ("¬", "-"), ("¦", "|"), ("©", "c"), ("®", "R"),
            ("→", ">"), ("←", "<"),
        ]
        for (letters, base) in groups {
            for scalar in letters.unicodeScalars { table[scalar] = base }
        }
        for glyph in PanelGlyph.allCases {
            for scalar in glyph.rawValue.unicodeScalars.prefix(1) { table[scalar] = glyph.fallback }
        }
        return table
    }()
}

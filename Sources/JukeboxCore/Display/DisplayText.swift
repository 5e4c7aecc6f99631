// SPDX-License-Identifier: MIT

/// Text from outside (file names, tags, a reason a client typed, a device's error) made inert
/// before anyone sees it. Control characters in such text split line-based replies (a title
/// `Evil\nok ▶ Fake` forged a reply line) and reach terminals as escape sequences, so every
/// reply, status line, console line, log line and display row goes through `inert`.
public enum DisplayText {
    /// What a control character is shown as: U+FFFD, the replacement character.
    public static let replacement: Unicode.Scalar = "\u{FFFD}"

    /// Whether `scalar` is a control character: C0 (U+0000–U+001F, tab and newline included),
    /// DEL (U+007F), C1 (U+0080–U+009F), or a bidirectional formatting control (U+061C ALM,
    /// U+200E LRM, U+200F RLM, U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates):
    /// a U+202E in a title would show the rest of the line, the player's own words included,
    /// reversed. JukeboxAudio's `TagText.isControl` drops the same set where tags enter.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return true }
        guard v >= 0x061C, v <= 0x2069 else { return false }
        return v == 0x061C || v == 0x200E || v == 0x200F || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }

    /// Whether `scalar` stands for a byte of a file name that is not UTF-8 (U+EF80–U+EFFF:
    /// JukeboxSystem's `FileSystemPath` keeps such names losslessly as these private-use scalars).
    public static func isEscapedByte(_ scalar: Unicode.Scalar) -> Bool {
        (0xEF80...0xEFFF).contains(scalar.value)
    }

    /// `text` with every control character, and every escaped byte of a file name that is not
    /// UTF-8, replaced by `replacement`, one for one; everything else (any language, emoji, the
    /// player's glyphs) is kept. Idempotent. For what a person reads.
    public static func inert<S: StringProtocol>(_ text: S) -> String {
        let shown = { (s: Unicode.Scalar) in isControl(s) || isEscapedByte(s) }
        guard text.unicodeScalars.contains(where: shown) else { return String(text) }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(shown(scalar) ? replacement : scalar) }
        return String(out)
    }

    /// `inert(text)` cut to at most `maxBytes` bytes of UTF-8 at a character's end, with "…" when
    /// cut: a quoted piece of input in a message stays within the message's bound however many
    /// bytes each of its characters takes.
    public static func inert<S: StringProtocol>(_ text: S, maxBytes: Int) -> String {
        let whole = inert(text)
        guard whole.utf8.count > maxBytes else { return whole }
        var out = ""
        var bytes = 0
        for c in whole {
            let n = c.utf8.count
            guard bytes + n <= max(0, maxBytes - 3) else { break }
            out.append(c)
            bytes += n
        }
        return out + "…"
    }

    /// `text` with only its control characters replaced (escaped bytes kept): for a reply a
    /// program reads and may send back, as the MPD face's URIs, which must still name the file.
    public static func lineSafe<S: StringProtocol>(_ text: S) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return String(text) }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(isControl(scalar) ? replacement : scalar) }
        return String(out)
    }
}

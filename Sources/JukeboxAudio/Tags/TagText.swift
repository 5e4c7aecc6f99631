// SPDX-License-Identifier: MIT

/// Text a file or a stream says about itself (a tag, an ICY `StreamTitle`, an Ogg comment, a
/// station's `icy-name`), bounded and cleaned where it enters: at most `maxCharacters` characters
/// (cut on a character), control characters dropped, spaces trimmed. A 1 MiB TITLE would otherwise
/// ride in every status line, reply and log line (each reply is at most 64 KiB).
public enum TagText {
    /// The most characters of a tag or title kept.
    public static let maxCharacters = 200

    /// Whether `scalar` is dropped: a C0 control (U+0000–U+001F), DEL, a C1 control
    /// (U+0080–U+009F), or a bidirectional formatting control (U+061C, U+200E, U+200F,
    /// U+202A–U+202E, U+2066–U+2069), which would reorder what a terminal or a client shows
    /// around it. The same set as `DisplayText.isControl` in JukeboxCore (which this module
    /// cannot import); `TagTextTests` holds the two to the same answer for every scalar.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return true }
        guard v >= 0x061C, v <= 0x2069 else { return false }
        return v == 0x061C || v == 0x200E || v == 0x200F || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
    }

    /// `bytes` as text: UTF-8, else Latin-1 (older Shoutcast servers send it) or, without
    /// `latin1Fallback`, with invalid UTF-8 as U+FFFD (text that is UTF-8 by its format, such as
    /// Vorbis comments), then `clean`.
    public static func clean(_ bytes: [UInt8], latin1Fallback: Bool = true) -> String {
        let decoded = String(validating: bytes, as: UTF8.self)
            ?? (latin1Fallback ? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
                : String(decoding: bytes, as: UTF8.self))
        return clean(decoded)
    }

    /// `text` with control characters dropped, spaces trimmed and cut to `maxCharacters`
    /// characters. Only the start of a long text is looked at, so a 1 MiB tag costs no more than
    /// a short one once read.
    public static func clean<S: StringProtocol>(_ text: S) -> String {
        // Enough scalars for `maxCharacters` characters of a few scalars each (an emoji sequence,
        // a letter with accents); a character of more is cut, but still shown.
        let scalarLimit = maxCharacters * 8
        var kept = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars where !isControl(scalar) {
            if count == 0 && scalar == " " { continue }
            kept.append(scalar)
            count += 1
            if count >= scalarLimit { break }
        }
        var text = String(kept)
        if text.count > maxCharacters { text = String(text.prefix(maxCharacters)) }
        while text.last == " " { text.removeLast() }
        return text
    }

    /// `clean(text)`, nil when nothing is left (an empty or blank tag counts as none).
    public static func field(_ text: String) -> String? {
        let cleaned = clean(text)
        return cleaned.isEmpty ? nil : cleaned
    }
}

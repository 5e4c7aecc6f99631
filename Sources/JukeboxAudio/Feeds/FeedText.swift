// SPDX-License-Identifier: MIT

/// Text from a feed (a title, an id, a URL), made safe where it enters: runs of XML white space
/// (space, tab, line ends) become one space and the ends are trimmed, every other control character
/// (`TagText.isControl`: C0, DEL, C1, bidirectional controls) becomes U+FFFD one for one, as the
/// core's `DisplayText.inert` does, and the whole is cut to a number of UTF-8 bytes at a
/// character's end. A title `Evil\u{1B}[2J` or a 1 MiB title costs no more than a short one.
public enum FeedText {
    /// What a control character becomes (U+FFFD, as `DisplayText.replacement`).
    public static let replacement: Unicode.Scalar = "\u{FFFD}"

    /// `text` with white space collapsed, trimmed, and control characters made inert; nothing cut.
    public static func collapsed<S: StringProtocol>(_ text: S) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case " ", "\t", "\n", "\r":
                pendingSpace = !out.isEmpty
            default:
                if pendingSpace { out.append(" "); pendingSpace = false }
                out.append(TagText.isControl(scalar) ? replacement : scalar)
            }
        }
        return String(out)
    }

    /// `collapsed(text)` cut to at most `maxBytes` bytes of UTF-8 at a character's end (no "…":
    /// the cut is the feed's, and a title that ends where it was cut reads as a title).
    public static func clean<S: StringProtocol>(_ text: S, maxBytes: Int) -> String {
        let whole = collapsed(text)
        guard whole.utf8.count > maxBytes else { return whole }
        var out = ""
        var bytes = 0
        for c in whole {
            let n = c.utf8.count
            guard bytes + n <= maxBytes else { break }
            out.append(c)
            bytes += n
        }
        while out.last == " " { out.removeLast() }
        return out
    }

    /// `text` without its markup (`<b>`, `<br/>`), for an Atom text construct of `type="html"`:
    /// what is between `<` and `>` is dropped, the rest kept as written (the XML layer has already
    /// turned `&lt;` into `<`). Entities of HTML beyond XML's five (`&nbsp;`) are kept as text.
    public static func withoutMarkup(_ text: String) -> String {
        guard text.contains("<") else { return text }
        var out = String.UnicodeScalarView()
        var inTag = false
        for scalar in text.unicodeScalars {
            if inTag {
                if scalar == ">" { inTag = false; out.append(" ") }
            } else if scalar == "<" {
                inTag = true
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

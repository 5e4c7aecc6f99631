// SPDX-License-Identifier: MIT

/// The pages of the long JSON replies (`queue --json [FROM]`, `ls --json [--from N] [FOLDER]`): a
/// reply line must stay under the control socket's bound for one line (`ControlSocket.maxOutput`,
/// 64 KiB; a longer line is replaced by an error), so a long list is sent as pages, each ending
/// with `"next":N` (the 1-based index of the next entry) while more follow. Pure.
public enum JSONPage {
    /// The most bytes one page's JSON text takes, all of it (the object, not only its entries):
    /// the socket's bound less an eighth, room for `ok `, the newline and what a face adds.
    public static let budget = ControlSocket.maxOutput - ControlSocket.maxOutput / 8

    /// One page: the entries' JSON texts and the 0-based index of the first entry left for the
    /// next page (nil when the list ends on this one).
    public struct Cut: Equatable, Sendable {
        public var entries: [String]
        public var next: Int?
    }

    /// The entries from index `from` (0-based) of a list of `count` that fit in `room` bytes when
    /// joined by commas; never an entry in part. The first entry of a page always goes: as
    /// `entry(i)` when that fits, else as `shortened(i)` (the same entry with its long text cut,
    /// which the caller keeps within `room`), so every page moves on and each entry is reachable.
    /// `from` at or past the end: no entries, no next. `after`: the page already holds entries
    /// (an earlier list of the same object): then none goes unless it fits whole.
    public static func cut(count: Int, from: Int, room: Int, after: Bool = false,
                           entry: (Int) -> String, shortened: (Int) -> String) -> Cut {
        var entries: [String] = []
        var size = 0
        var i = max(0, from)
        while i < count {
            var text = entry(i)
            let separator = entries.isEmpty ? 0 : 1
            if size + separator + text.utf8.count > room {
                guard entries.isEmpty, !after else { break }
                text = shortened(i)
            }
            entries.append(text)
            size += separator + text.utf8.count
            i += 1
        }
        return Cut(entries: entries, next: i < count ? i : nil)
    }

    /// `text` cut to at most `scalars` Unicode scalars (so its JSON form stays within 6 bytes a
    /// scalar), with "…" when cut.
    public static func clipped(_ text: String?, _ scalars: Int) -> String? {
        guard let text, text.unicodeScalars.count > scalars else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(max(0, scalars - 1)))) + "…"
    }

    /// What `"shortened"` says on an entry sent cut.
    public static let shortenedReason = "the entry is longer than one reply"
}

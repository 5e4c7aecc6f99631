// SPDX-License-Identifier: MIT

/// The `from` query argument of the paged answers (`/api/queue?from=N`, `/api/library?…&from=N`):
/// the 1-based index of a page's first entry, as the last page's `next` said. Pure.
public enum PageQuery {
    /// `text` as a first entry: absent or empty is 1; digits only, 1 to 999999999; nil for anything else.
    public static func from(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return 1 }
        guard text.utf8.count <= 9, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(text), n >= 1 else { return nil }
        return n
    }

    /// The answer to a `from` that is not such a number.
    static var refusal: WebServer.Reply { .error(400, "from must be an entry number from 1") }
}

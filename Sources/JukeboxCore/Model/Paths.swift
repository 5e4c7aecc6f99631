// SPDX-License-Identifier: MIT

/// Pure path-string helpers (no file system access), so the core can name files in messages
/// and resolve playlist entries without I/O.
///
/// They cut at the byte `/` as the kernel does, never at a `Character`: a combining mark right
/// after a slash (`a/\u{301}b`) makes one grapheme of the two, which a `Character` search or
/// `split` misses, and `==`/`hasPrefix` on `String` treat canonically equivalent spellings (é
/// precomposed or not) as one while the kernel holds them as two files.
public enum Paths {
    private static let slash = UInt8(ascii: "/")

    /// The last path component: `/a/b/c.flac` → `c.flac`.
    public static func fileName(_ path: String) -> String {
        guard let cut = path.utf8.lastIndex(of: slash) else { return path }
        return String(path.unicodeScalars[path.utf8.index(after: cut)...])
    }

    /// The file name without its extension: `/a/b/c.flac` → `c`; a leading dot is kept.
    public static func stem(_ path: String) -> String {
        let name = fileName(path)
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return name }
        return String(name.unicodeScalars[..<dot])
    }

    /// The lowercased extension without the dot, or "" when there is none.
    public static func fileExtension(_ path: String) -> String {
        let name = fileName(path)
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return "" }
        return String(name.unicodeScalars[name.utf8.index(after: dot)...]).lowercased()
    }

    /// The folder part: `/a/b/c.flac` → `/a/b`; `c.flac` → `.`; `/c` → `/`.
    public static func directory(_ path: String) -> String {
        guard let cut = path.utf8.lastIndex(of: slash) else { return "." }
        if cut == path.startIndex { return "/" }
        return String(path.unicodeScalars[..<cut])
    }

    /// `relative` resolved against `base` (a folder), with `.` and `..` folded; an absolute
    /// `relative` is returned normalised.
    public static func resolve(_ relative: String, against base: String) -> String {
        let absolute = relative.utf8.first == slash
        let joined = absolute ? relative : base + "/" + relative
        var parts: [Substring.UTF8View] = []
        for part in joined.utf8.split(separator: slash, omittingEmptySubsequences: true) {
            if part.elementsEqual(".".utf8) { continue }
            if part.elementsEqual("..".utf8) {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        let body = parts.map { String(Substring($0)) }.joined(separator: "/")
        return absolute || base.utf8.first == slash ? "/" + body : body
    }

    /// Whether `path` is `folder` itself or lies under it (by the names' bytes alone, no file system).
    public static func isInside(_ path: String, folder: String) -> Bool {
        var base = Array(folder.utf8)
        while base.count > 1 && base.last == slash { base.removeLast() }
        guard !base.isEmpty else { return false }
        let bytes = Array(path.utf8)
        if bytes == base { return true }
        let prefix = base == [slash] ? base : base + [slash]
        return bytes.starts(with: prefix)
    }
}

// SPDX-License-Identifier: MIT

/// Pure path-string helpers (no file system access), so the core can name files in messages
/// and resolve playlist entries without I/O.
public enum Paths {
    /// The last path component: `/a/b/c.flac` → `c.flac`.
    public static func fileName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The file name without its extension: `/a/b/c.flac` → `c`; a leading dot is kept.
    public static func stem(_ path: String) -> String {
        let name = fileName(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The lowercased extension without the dot, or "" when there is none.
    public static func fileExtension(_ path: String) -> String {
        let name = fileName(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    /// The folder part: `/a/b/c.flac` → `/a/b`; `c.flac` → `.`; `/c` → `/`.
    public static func directory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `relative` resolved against `base` (a folder), with `.` and `..` folded; an absolute
    /// `relative` is returned normalised.
    public static func resolve(_ relative: String, against base: String) -> String {
        let joined = relative.hasPrefix("/") ? relative : base + "/" + relative
        var parts: [Substring] = []
        for part in joined.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(part)
            }
        }
        let body = parts.joined(separator: "/")
        return joined.hasPrefix("/") ? "/" + body : body
    }

    /// Whether `path` is `folder` itself or lies under it (by the names alone, no file system).
    public static func isInside(_ path: String, folder: String) -> Bool {
        var base = folder
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        guard !base.isEmpty else { return false }
        if path == base { return true }
        return path.hasPrefix(base == "/" ? "/" : base + "/")
    }
}

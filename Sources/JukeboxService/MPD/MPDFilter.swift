// SPDX-License-Identifier: MIT
import JukeboxCore

/// A song filter of `find`, `search`, `list`, `count`, `findadd`, `searchadd`: MPD's old form
/// (`artist "X" album "Y"`: pairs, all must match) or 0.21's expressions (`(Artist == "X")`,
/// `(Artist contains "x")`, `(AND …)`, `(!…)`). Pure: parsed from the arguments, matched
/// against a library song.
public indirect enum MPDFilter: Equatable, Sendable {
    /// How a tag's value is compared.
    public enum Op: String, Sendable {
        case equals = "==", notEquals = "!=", contains = "contains", startsWith = "starts_with"
    }
    /// A tag (lower-case MPD name; `any` means every tag and the file name) compared with `value`.
    /// `foldCase` compares ignoring case (`search`, MPD's `fold_case`).
    case tag(String, Op, String, foldCase: Bool)
    /// The song's URI equals `value` (`file` in the old form of `find`, `(file == "x")`).
    case file(String)
    /// The song lies in the directory `uri` (`base`).
    case base(String)
    /// Every one matches.
    case and([MPDFilter])
    /// It does not match.
    case not(MPDFilter)

    /// MPD's tag names (`tagtypes` of MPD 0.24), lower case → as MPD writes them. A filter or
    /// `list` on one of them is accepted; those jukebox does not read (`MPDLibrary.value`) are
    /// empty on every song.
    public static let tagNames: [String: String] = {
        let names = ["Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title",
                     "TitleSort", "Track", "Name", "Genre", "Mood", "Date", "OriginalDate", "Composer", "ComposerSort",
                     "Performer", "Conductor", "Work", "Ensemble", "Movement", "MovementNumber", "Location",
                     "Grouping", "Comment", "Disc", "Label", "MUSICBRAINZ_ARTISTID", "MUSICBRAINZ_ALBUMID",
                     "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID",
                     "MUSICBRAINZ_WORKID", "MUSICBRAINZ_RELEASEGROUPID"]
        return Dictionary(uniqueKeysWithValues: names.map { ($0.lowercased(), $0) })
    }()

    /// Parses the filter arguments of `find` (exact matches) or `search` (`fold`: case-insensitive
    /// substrings in the old form, case-insensitive comparisons in expressions). No arguments is
    /// an empty `and` (everything matches) only when `allowEmpty`.
    public static func parse(_ args: [String], fold: Bool, allowEmpty: Bool = false) -> Result<MPDFilter, MPDError> {
        if args.isEmpty {
            return allowEmpty ? .success(.and([])) : .failure(MPDError(.arg, "too few arguments"))
        }
        if args.count == 1 || args[0].hasPrefix("(") {
            var parts: [MPDFilter] = []
            for arg in args {
                switch Expression.parse(arg, fold: fold) {
                case .success(let f): parts.append(f)
                case .failure(let e): return .failure(e)
                }
            }
            return .success(parts.count == 1 ? parts[0] : .and(parts))
        }
        guard args.count % 2 == 0 else { return .failure(MPDError(.arg, "Incorrect number of filter arguments")) }
        var parts: [MPDFilter] = []
        for i in stride(from: 0, to: args.count, by: 2) {
            let name = args[i].lowercased(), value = args[i + 1]
            switch name {
            case "file": parts.append(fold ? .tag("file", .contains, value, foldCase: true) : .file(value))
            case "base": parts.append(.base(value))
            case "any": parts.append(.tag("any", fold ? .contains : .equals, value, foldCase: fold))
            case _ where tagNames[name] != nil: parts.append(.tag(name, fold ? .contains : .equals, value, foldCase: fold))
            default: return .failure(MPDError(.arg, "Unknown filter type: \(args[i])"))
            }
        }
        return .success(parts.count == 1 ? parts[0] : .and(parts))
    }

    /// Whether `song` matches.
    public func matches(_ song: MPDLibrary.Song) -> Bool {
        switch self {
        case .and(let all): return all.allSatisfy { $0.matches(song) }
        case .not(let f): return !f.matches(song)
        case .file(let uri): return song.uri == uri
        case .base(let dir): return dir.isEmpty || song.uri.hasPrefix(dir.hasSuffix("/") ? dir : dir + "/")
        case .tag(let name, let op, let value, let fold):
            let wanted = fold ? value.lowercased() : value
            let values: [String] = name == "any" ? MPDLibrary.anyValues(song) : [MPDLibrary.value(name, of: song) ?? ""]
            let hit = values.contains { raw in
                let v = fold ? raw.lowercased() : raw
                switch op {
                case .equals, .notEquals: return v == wanted
                case .contains: return v.contains(wanted)
                case .startsWith: return v.hasPrefix(wanted)
                }
            }
            return op == .notEquals ? !hit : hit
        }
    }

    /// The expression grammar (MPD's `SongFilter::ParseExpression`), on unicode scalars.
    private struct Expression {
        var s: [Unicode.Scalar]
        var i = 0
        let fold: Bool

        static func parse(_ text: String, fold: Bool) -> Result<MPDFilter, MPDError> {
            var p = Expression(s: Array(text.unicodeScalars), fold: fold)
            do {
                let f = try p.expression()
                p.blanks()
                guard p.i == p.s.count else { throw MPDError(.arg, "Unparsed garbage after expression") }
                return .success(f)
            } catch let e as MPDError { return .failure(e) } catch { return .failure(MPDError(.arg, "\(error)")) }
        }

        mutating func blanks() { while i < s.count, s[i] == " " || s[i] == "\t" { i += 1 } }

        mutating func expect(_ c: Unicode.Scalar, _ what: String) throws {
            blanks()
            guard i < s.count, s[i] == c else { throw MPDError(.arg, what) }
            i += 1
        }

        mutating func word() -> String {
            blanks()
            var w = String.UnicodeScalarView()
            while i < s.count, s[i] != " ", s[i] != "\t", s[i] != ")", s[i] != "(", s[i] != "\"", s[i] != "'" {
                w.append(s[i]); i += 1
            }
            return String(w)
        }

        mutating func quoted() throws -> String {
            blanks()
            guard i < s.count, s[i] == "\"" || s[i] == "'" else { throw MPDError(.arg, "Quoted string expected") }
            let q = s[i]
            i += 1
            var w = String.UnicodeScalarView()
            while i < s.count, s[i] != q {
                if s[i] == "\\", i + 1 < s.count { i += 1 }
                w.append(s[i]); i += 1
            }
            guard i < s.count else { throw MPDError(.arg, "Closing quote not found") }
            i += 1
            return String(w)
        }

        mutating func expression() throws -> MPDFilter {
            try expect("(", "'(' expected")
            blanks()
            if i < s.count, s[i] == "!" {
                i += 1
                let inner = try expression()
                try expect(")", "')' expected")
                return .not(inner)
            }
            if i < s.count, s[i] == "(" {
                var parts = [try expression()]
                while true {
                    let w = word()
                    if w.isEmpty { break }
                    guard w == "AND" else { throw MPDError(.arg, "jukebox supports only AND between expressions, not \(w)") }
                    parts.append(try expression())
                }
                try expect(")", "')' expected")
                return .and(parts)
            }
            let name = word().lowercased()
            guard !name.isEmpty else { throw MPDError(.arg, "Tag name expected") }
            switch name {
            case "base":
                let v = try quoted()
                try expect(")", "')' expected")
                return .base(v)
            case "modified-since", "added-since", "audioformat", "prio":
                throw MPDError(.arg, "jukebox does not support filtering on \(name)")
            default:
                guard name == "file" || name == "any" || MPDFilter.tagNames[name] != nil else {
                    throw MPDError(.arg, "Unknown filter type: \(name)")
                }
            }
            let opWord = operatorWord()
            let op: Op
            switch opWord {
            case "==": op = .equals
            case "!=": op = .notEquals
            case "contains": op = .contains
            case "starts_with": op = .startsWith
            case "=~", "!~": throw MPDError(.arg, "jukebox does not support regular expressions (\(opWord))")
            case "eq_cs", "eq_ci", "contains_cs", "contains_ci", "starts_with_cs", "starts_with_ci":
                throw MPDError(.arg, "jukebox does not support \(opWord) yet")
            default: throw MPDError(.arg, "Unknown filter operator: \(opWord)")
            }
            let value = try quoted()
            try expect(")", "')' expected")
            if name == "file", op == .equals, !fold { return .file(value) }
            return .tag(name, op, value, foldCase: fold)
        }

        mutating func operatorWord() -> String {
            blanks()
            var w = String.UnicodeScalarView()
            while i < s.count, s[i] != " ", s[i] != "\t", s[i] != "\"", s[i] != "'" { w.append(s[i]); i += 1 }
            return String(w)
        }
    }
}

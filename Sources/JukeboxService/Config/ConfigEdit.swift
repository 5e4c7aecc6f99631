// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxSystem

/// Changes to a config file made in its own text: the value of a key (top level, or one object
/// deep as `rfid.onRemove`) replaced, added or removed, every other byte (other keys, unknown
/// keys, their order, the spacing, a trailing newline) kept as it was. The result must pass
/// `Config.parse`, the same check the player makes, or nothing is written and the config's own
/// message says why. `write` replaces the file atomically (`writeAtomically`: a fresh O_EXCL
/// temporary beside it, fsync, rename, fsync of the folder) keeping its mode.
public enum ConfigEdit {
    /// One change: `path` is `["volumeMax"]` or `["rfid", "onRemove"]`; `value` is JSON text
    /// (`80`, `true`, `"skip"`), nil removes the key (its default applies).
    public struct Change: Equatable, Sendable {
        public var path: [String]
        public var value: String?
        public init(_ path: [String], _ value: String?) {
            self.path = path
            self.value = value
        }
    }

    /// `bytes` with `changes` made, not yet validated; throws when the text is not an object
    /// this can edit (a key twice, a parent key that is not an object).
    public static func apply(_ changes: [Change], to bytes: [UInt8]) throws(Config.Problem) -> [UInt8] {
        var text = bytes
        for change in changes {
            guard !change.path.isEmpty, change.path.count <= 2 else { throw Config.Problem(description: "cannot edit \(change.path.joined(separator: "."))") }
            var scan = Scanner(text)
            scan.skipSpace()
            guard scan.peek == UInt8(ascii: "{") else { throw Config.Problem(description: "the config file is not a JSON object") }
            text = try edit(text, objectAt: scan.i, path: change.path[...], value: change.value)
        }
        return text
    }

    /// `bytes` with `changes` made and checked as the player checks a config (`source` names the
    /// file in the message).
    public static func edited(_ bytes: [UInt8], _ changes: [Change], source: String) throws(Config.Problem) -> (bytes: [UInt8], config: Config) {
        let out = try apply(changes, to: bytes)
        let (config, _) = try Config.parse(out, source: source)
        return (out, config)
    }

    /// Reads the file at `path`, makes `changes`, validates (with the board profile, as
    /// `Config.load`) and replaces the file atomically; on any refusal nothing is written.
    @discardableResult
    public static func write(path: String, _ changes: [Change]) throws(Config.Problem) -> Config {
        let bytes: [UInt8]
        // Read as `Config.load` reads it, and said in its words (`PATH: cannot read: …`).
        do { bytes = try readFile(path, limit: Config.maxFileBytes) } catch {
            throw Config.Problem(description: "\(path): cannot read: \(Config.readProblem(error, path: path))")
        }
        let out = try apply(changes, to: bytes)
        var st = stat()
        let mode = lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0o644
        // The board profile and the hardware's checks too, as the player loads it.
        let config = try Config.load(out, path: path).config
        do throws(SystemError) { try writeAtomically(out, to: path, mode: mode) } catch {
            throw Config.Problem(description: "cannot write \(path): \(error)")
        }
        return config
    }

    /// The JSON text of the value at `path` in `bytes` (nil when absent or not an object there).
    public static func value(at path: [String], in bytes: [UInt8]) -> String? {
        var scan = Scanner(bytes)
        scan.skipSpace()
        guard scan.peek == UInt8(ascii: "{"), var members = try? scan.members(at: scan.i).members else { return nil }
        var range: Range<Int>?
        for (n, key) in path.enumerated() {
            guard let m = members.last(where: { $0.key == key }) else { return nil }
            range = m.value
            if n < path.count - 1 {
                guard bytes[m.value.lowerBound] == UInt8(ascii: "{"), let inner = try? scan.members(at: m.value.lowerBound).members else { return nil }
                members = inner
            }
        }
        return range.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    // MARK: the edit

    private static func edit(_ bytes: [UInt8], objectAt start: Int, path: ArraySlice<String>, value: String?) throws(Config.Problem) -> [UInt8] {
        var scan = Scanner(bytes)
        let (members, close) = try scan.members(at: start)
        let key = path.first!
        let matching = members.indices.filter { members[$0].key == key }
        guard matching.count <= 1 else { throw Config.Problem(description: "\(key) appears twice in the config file; edit it by hand") }
        var out = bytes
        if let i = matching.first {
            let m = members[i]
            if path.count > 1 {
                guard bytes[m.value.lowerBound] == UInt8(ascii: "{") else {
                    throw Config.Problem(description: "\(key) is not an object in the config file")
                }
                return try edit(bytes, objectAt: m.value.lowerBound, path: path.dropFirst(), value: value)
            }
            if let value {
                out.replaceSubrange(m.value, with: Array(value.utf8))
            } else if i > 0 {
                // From the end of the previous value: its comma and this member go.
                out.removeSubrange(members[i - 1].value.upperBound..<m.value.upperBound)
            } else if members.count > 1 {
                out.removeSubrange(m.keyRange.lowerBound..<members[1].keyRange.lowerBound)
            } else {
                out.removeSubrange(m.keyRange.lowerBound..<m.value.upperBound)
            }
            return out
        }
        guard let value else { return out }
        // A new key: `{"b": value}` for a missing parent, after the last member otherwise.
        let text = path.count > 1 ? "{" + JSONText.quoted(path.last!) + ": " + value + "}" : value
        let member = JSONText.quoted(key) + ": " + text
        if let last = members.last {
            // The last member's indentation when members sit on lines of their own.
            var lineStart = last.keyRange.lowerBound
            while lineStart > 0 && bytes[lineStart - 1] != 0x0A { lineStart -= 1 }
            let indent = bytes[lineStart..<last.keyRange.lowerBound]
            let ownLine = lineStart > start && indent.allSatisfy { $0 == 0x20 || $0 == 0x09 }
            let insert = ownLine ? [0x2C, 0x0A] + Array(indent) + Array(member.utf8) : Array((", " + member).utf8)
            out.insert(contentsOf: insert, at: last.value.upperBound)
        } else {
            out.insert(contentsOf: Array(member.utf8), at: close)
        }
        return out
    }

    /// A minimal scanner of JSON text: only where members, keys and values start and end (the
    /// text's validity is `Config.parse`'s to decide).
    struct Scanner {
        struct Member {
            /// The key's text with its quotes.
            var keyRange: Range<Int>
            var key: String
            var value: Range<Int>
        }
        let b: [UInt8]
        var i = 0
        init(_ bytes: [UInt8]) { b = bytes }

        var peek: UInt8? { i < b.count ? b[i] : nil }

        mutating func skipSpace() {
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
        }

        /// Past the string starting at `i` (its opening quote).
        mutating func skipString() throws(Config.Problem) {
            i += 1
            while i < b.count {
                if b[i] == UInt8(ascii: "\\") { i += 2; continue }
                if b[i] == UInt8(ascii: "\"") { i += 1; return }
                i += 1
            }
            throw Config.Problem(description: "the config file is not valid JSON (a string does not end)")
        }

        /// Past the value starting at `i`.
        mutating func skipValue() throws(Config.Problem) {
            guard let c = peek else { throw Config.Problem(description: "the config file is not valid JSON (a value is missing)") }
            if c == UInt8(ascii: "\"") { return try skipString() }
            if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                var depth = 0
                while i < b.count {
                    let d = b[i]
                    if d == UInt8(ascii: "\"") { try skipString(); continue }
                    if d == UInt8(ascii: "{") || d == UInt8(ascii: "[") { depth += 1 }
                    if d == UInt8(ascii: "}") || d == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 { i += 1; return }
                    }
                    i += 1
                }
                throw Config.Problem(description: "the config file is not valid JSON (an object or list does not end)")
            }
            let start = i
            while i < b.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(b[i]) { i += 1 }
            if i == start { throw Config.Problem(description: "the config file is not valid JSON (a value is missing)") }
        }

        /// The members of the object whose `{` is at `start`, and where its `}` is.
        mutating func members(at start: Int) throws(Config.Problem) -> (members: [Member], close: Int) {
            let bad = Config.Problem(description: "the config file is not valid JSON")
            i = start + 1
            var out: [Member] = []
            skipSpace()
            if peek == UInt8(ascii: "}") { return ([], i) }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\"") else { throw bad }
                let keyStart = i
                try skipString()
                let keyRange = keyStart..<i
                let inner = b[(keyRange.lowerBound + 1)..<(keyRange.upperBound - 1)]
                let key: String
                if !inner.contains(UInt8(ascii: "\\")) {
                    key = String(decoding: inner, as: UTF8.self)
                } else {
                    // An escape (`\u004d`): the decoder says what the key is.
                    guard let decoded = try? JSONDecoder().decode([String].self, from: Data([UInt8(ascii: "[")] + b[keyRange] + [UInt8(ascii: "]")])).first else { throw bad }
                    key = decoded
                }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { throw bad }
                i += 1
                skipSpace()
                let valueStart = i
                try skipValue()
                out.append(Member(keyRange: keyRange, key: key, value: valueStart..<i))
                skipSpace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                guard peek == UInt8(ascii: "}") else { throw bad }
                return (out, i)
            }
        }
    }
}

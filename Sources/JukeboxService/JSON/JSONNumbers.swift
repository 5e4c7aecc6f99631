// SPDX-License-Identifier: MIT
import JukeboxCore

/// Finds the number a JSON decode failed on. FoundationEssentials' `JSONDecoder` reports a number
/// its type cannot hold (`80.5` or `1e300` for a whole number, `1e999` for any) as "not valid
/// JSON" with no coding path, so a message could not name the key. Here every number literal is
/// found with the path of keys leading to it, and the first the decode fails on is found by
/// bisection: the decode with the literals before it as written and the rest made `0` passes,
/// and with it as written too it fails.
enum JSONNumbers {
    /// A number literal in JSON text: where it is, its key path (`mpd.port`, `music[2]`) and its text.
    struct Literal: Equatable {
        var path: String
        var range: Range<Int>
        var text: String
    }

    /// Most literals looked at (a bound on the scan; the decodes are a bisection of them).
    static let limit = 100_000

    /// The number literals in `bytes` (JSON text already checked by `JSONText.problem`), in order.
    static func literals(_ bytes: [UInt8]) -> [Literal] {
        enum Frame { case object(key: String?, expectingKey: Bool), array(index: Int) }
        var stack: [Frame] = []
        var found: [Literal] = []
        func path() -> String {
            var out = ""
            for frame in stack {
                switch frame {
                case .object(let key, _): out += (out.isEmpty ? "" : ".") + (key ?? "?")
                case .array(let index): out += "[\(index)]"
                }
            }
            return out
        }
        var i = 0
        while i < bytes.count, found.count < limit {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "{"): stack.append(.object(key: nil, expectingKey: true)); i += 1
            case UInt8(ascii: "["): stack.append(.array(index: 0)); i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !stack.isEmpty { stack.removeLast() }; i += 1
            case UInt8(ascii: ","):
                switch stack.last {
                case .array(let index): stack[stack.count - 1] = .array(index: index + 1)
                case .object(let key, _): stack[stack.count - 1] = .object(key: key, expectingKey: true)
                case nil: break
                }
                i += 1
            case UInt8(ascii: ":"):
                if case .object(let key, _) = stack.last { stack[stack.count - 1] = .object(key: key, expectingKey: false) }
                i += 1
            case UInt8(ascii: "\""):
                var j = i + 1
                while j < bytes.count, bytes[j] != UInt8(ascii: "\"") { j += bytes[j] == UInt8(ascii: "\\") ? 2 : 1 }
                if case .object(_, true) = stack.last {
                    // The key as written (escapes left as they are: the path is for a person to find it).
                    let key = String(decoding: bytes[(i + 1)..<min(j, bytes.count)], as: UTF8.self)
                    stack[stack.count - 1] = .object(key: key, expectingKey: true)
                }
                i = j + 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var j = i
                while j < bytes.count, isNumberByte(bytes[j]) { j += 1 }
                found.append(Literal(path: path(), range: i..<j, text: String(decoding: bytes[i..<j], as: UTF8.self)))
                i = j
            default: i += 1
            }
        }
        return found
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
    }

    /// The literal `fails` is about, and what is wrong with it as a number; nil when the failure
    /// is not a number's (it stays with every number made `0`). `fails` decodes and says whether
    /// it fails in the way being explained.
    static func culprit(in bytes: [UInt8], fails: ([UInt8]) -> Bool) -> (path: String, text: String, problem: String)? {
        let all = literals(bytes)
        // The first `k` literals as written, the rest made 0: fails for every `k` from the first
        // culprit's on (a number that fits never makes a decode fail), so a bisection finds it.
        guard !all.isEmpty, !fails(zeroing(bytes, all, keeping: 0)) else { return nil }
        var low = 0, high = all.count  // fails(keeping: low) is false; fails(keeping: high) is taken as true
        while high - low > 1 {
            let middle = (low + high) / 2
            if fails(zeroing(bytes, all, keeping: middle)) { high = middle } else { low = middle }
        }
        guard fails(zeroing(bytes, all, keeping: high)) else { return nil }
        let literal = all[high - 1]
        return (shortened(literal.path, to: 100, fromStart: false), shortened(literal.text, to: 40, fromStart: true), problem(literal.text))
    }

    // Inert, and at most `limit` characters: a key path keeps its end, a number its start.
    private static func shortened(_ text: String, to limit: Int, fromStart: Bool) -> String {
        let clean = DisplayText.inert(text)
        guard clean.unicodeScalars.count > limit else { return clean }
        var scalars = String.UnicodeScalarView()
        if fromStart {
            scalars.append(contentsOf: clean.unicodeScalars.prefix(limit))
            return String(scalars) + "…"
        }
        scalars.append(contentsOf: clean.unicodeScalars.suffix(limit))
        return "…" + String(scalars)
    }

    /// What a number literal's value cannot be.
    static func problem(_ text: String) -> String {
        if Int64(text) != nil { return "is out of range" }
        guard let value = Double(text), value.isFinite else { return text.hasPrefix("-") ? "is too small" : "is too large" }
        if value != value.rounded(.towardZero) { return "is not a whole number" }
        return value < 0 ? "is too small for a whole number" : "is too large for a whole number"
    }

    private static func zeroing(_ bytes: [UInt8], _ literals: [Literal], keeping kept: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var at = 0
        for literal in literals.dropFirst(kept) {
            out += bytes[at..<literal.range.lowerBound]
            out.append(UInt8(ascii: "0"))
            at = literal.range.upperBound
        }
        out += bytes[at...]
        return out
    }
}

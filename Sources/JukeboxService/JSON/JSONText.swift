// SPDX-License-Identifier: MIT
import JukeboxCore

/// A check of JSON text that JSONDecoder must never see: Swift 6.0's FoundationEssentials
/// (Debian 13's swiftlang 6.0.3) traps in a `try!` instead of throwing when an object key is not
/// valid UTF-8, holds a raw control character or a broken `\u` escape (found by board/fuzz.sh; a
/// damaged state file would crash the player at every start). The rules are JSON's own
/// (RFC 8259: UTF-8 text; in strings, control characters escaped, `\u` surrogates paired), so
/// valid files pass untouched.
public enum JSONText {
    /// What is wrong with `bytes` as JSON text, or nil when its encoding and strings are sound. Public:
    /// the web face checks request bodies with it before they reach JSONDecoder.
    public static func problem(_ bytes: [UInt8]) -> String? {
        var utf8 = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        var inString = false
        var escape: [UInt8]?  // after a backslash: the escape so far
        var pendingHigh = false  // a \uD800-\uDBFF waits for its low half
        decoding: while true {
            switch utf8.decode(&iterator) {
            case .emptyInput: break decoding
            case .error: return "not UTF-8 at byte \(offset)"
            case .scalarValue(let scalar):
                defer { offset += UTF8.width(scalar) }
                guard inString else {
                    if scalar == "\"" { inString = true }
                    continue
                }
                if var e = escape {
                    e.append(UInt8(truncatingIfNeeded: scalar.value))
                    if e.count == 1 {
                        guard "\"\\/bfnrtu".unicodeScalars.contains(scalar) else { return "bad escape at byte \(offset)" }
                        if scalar != "u" {
                            if pendingHigh { return "unpaired surrogate at byte \(offset)" }
                            escape = nil
                            continue
                        }
                        escape = e
                        continue
                    }
                    guard scalar.properties.isASCIIHexDigit else { return "bad \\u escape at byte \(offset)" }
                    if e.count < 5 { escape = e; continue }
                    escape = nil
                    let value = UInt32(String(decoding: e.dropFirst(), as: UTF8.self), radix: 16) ?? 0
                    switch value {
                    case 0xD800...0xDBFF:
                        if pendingHigh { return "unpaired surrogate at byte \(offset)" }
                        pendingHigh = true
                    case 0xDC00...0xDFFF:
                        if !pendingHigh { return "unpaired surrogate at byte \(offset)" }
                        pendingHigh = false
                    default:
                        if pendingHigh { return "unpaired surrogate at byte \(offset)" }
                    }
                    continue
                }
                if scalar == "\\" { escape = []; continue }
                if pendingHigh { return "unpaired surrogate at byte \(offset)" }
                if scalar == "\"" { inString = false; continue }
                if scalar.value < 0x20 { return "control character in a string at byte \(offset)" }
            }
        }
        return nil
    }
}

extension JSONText {
    /// `text` as a JSON string literal, quotes included: `"` and `\` escaped, and every control
    /// character (`DisplayText.isControl`: C0, DEL, C1 and the bidi controls; JSON itself requires it for
    /// C0) as `\uXXXX`, so the reply stays one inert line and decodes to exactly `text`.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for u in text.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where DisplayText.isControl(u):
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

/// JSON text refused by `JSONText.problem` before decoding.
struct JSONTextError: Error {
    var problem: String
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// Any JSON value, and the one encoder of the JSON the program writes by hand (`text`): the MQTT
/// face's state and discovery payloads, the event lines, Snapcast's JSON-RPC params read
/// (`Decodable`). Strings go through `JSONText.quoted` (control characters escaped), a number that
/// is not finite is `null`, and `fields` keeps its order (people and tests read the payloads).
public enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    /// An integer, written without a fraction (JSON's numbers, as people write counts).
    case integer(Int)
    case string(String)
    case array([JSONValue])
    /// An object as decoded (written with its keys sorted).
    case object([String: JSONValue])
    /// An object to write, its fields in this order.
    case fields([Field])

    /// One field of an object to write.
    public struct Field: Equatable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Double.self) { self = .number(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode([JSONValue].self) { self = .array(v) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// A string, or null for nil.
    public static func orNull(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    /// A number, or null for nil (and for a number that is not finite).
    public static func orNull(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }

    /// The value as JSON text, one line.
    public var text: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n.isFinite ? String(n) : "null"
        case .integer(let i): return String(i)
        case .string(let s): return JSONText.quoted(s)
        case .array(let values): return "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let o): return Self.fields(o.sorted { $0.key < $1.key }.map { Field($0.key, $0.value) }).text
        case .fields(let fields): return "{" + fields.map { JSONText.quoted($0.key) + ":" + $0.value.text }.joined(separator: ",") + "}"
        }
    }

    var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    var numberValue: Double? { if case .number(let n) = self { n } else { nil } }
}

// SPDX-License-Identifier: MIT
import FoundationEssentials

/// Any key of a JSON object: lists what an object holds before it is decoded.
struct AnyConfigKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// The keys of this JSON object that `Known` does not name, sorted. They are warned about (a
    /// typo should not pass silently) and never fatal (an older player must start with a config
    /// written for a newer one).
    func unknownKeys<Known: CodingKey>(besides _: Known.Type) throws -> [String] {
        try container(keyedBy: AnyConfigKey.self).allKeys.map(\.stringValue).filter { Known(stringValue: $0) == nil }.sorted()
    }
}

/// The warning for each of `keys`, unknown in `section` of the config file `source`.
func unknownKeyWarnings(_ source: String, section: String, _ keys: [String]) -> [String] {
    keys.map { "\(source): unknown key \"\(section).\($0)\" ignored" }
}

// SPDX-License-Identifier: MIT

/// shairport-sync's metadata pipe, read as items (3.3.8's `metadata_process`): for each item
/// `<item><type>HEX</type><code>HEX</code><length>N</length>`, then, when N > 0,
/// `\n<data encoding="base64">\n` BASE64 `</data>`, then `</item>\n`. The type and code are four
/// ASCII letters printed as one hex number (`ssnc` is 73736e63).
///
/// Pure and bounded: anyone could write to the pipe (shairport-sync makes it 0666 when it is
/// missing), so an item is at most `maxItemBytes` long and its data at most `maxDataBytes`; an
/// item that breaks a rule is rejected (with its reason) and the reading goes on at the next
/// `<item>`. Nothing here is trusted beyond its form: the data are bytes from anywhere.
public struct AirPlayMetadataItems: Sendable {
    /// One item read whole.
    public struct Item: Equatable, Sendable {
        /// The item's type (`ssnc` for shairport-sync's own, `core` for the sender's DAAP ones).
        public var type: UInt32
        /// Its code (`snam`: the sender's name).
        public var code: UInt32
        /// Its data, decoded.
        public var data: [UInt8]

        public init(type: UInt32, code: UInt32, data: [UInt8]) {
            self.type = type
            self.code = code
            self.data = data
        }
    }

    /// What one item came to: an item, or why it was dropped.
    public enum Outcome: Equatable, Sendable {
        case item(Item)
        case rejected(String)
    }

    /// Most bytes of decoded data kept (4 KiB of base64).
    public static let maxDataBytes = 3072
    /// Longest item, from `<item>` to `</item>`: the header, 4 KiB of base64 and room for line breaks.
    public static let maxItemBytes = 5120

    /// `ssnc`, shairport-sync's own items.
    public static let ssnc = fourCC("ssnc")
    /// `snam`: the ANNOUNCE's `X-Apple-Client-Name`, the sender's name.
    public static let snam = fourCC("snam")

    /// The number four ASCII letters stand for (`ssnc` → 0x73736e63).
    public static func fourCC(_ letters: String) -> UInt32 {
        letters.utf8.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    private static let open = Array("<item>".utf8)
    private static let close = Array("</item>".utf8)

    private var buffer: [UInt8] = []

    public init() {}

    /// Reads `bytes`, the next of the stream, and returns the items they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Outcome] {
        buffer.append(contentsOf: bytes)
        var outcomes: [Outcome] = []
        while true {
            guard let start = Self.find(Self.open, in: buffer, from: 0) else {
                // Nothing of an item yet: keep only what may be the beginning of `<item>`.
                buffer.removeFirst(max(0, buffer.count - (Self.open.count - 1)))
                return outcomes
            }
            if start > 0 { buffer.removeFirst(start) }
            let bodyStart = Self.open.count
            let end = Self.find(Self.close, in: buffer, from: bodyStart)
            let limit = end ?? buffer.count
            // An `<item>` before this one's end: this one was cut short (a write that failed
            // half-way, or noise); read on from the later one.
            if let next = Self.find(Self.open, in: buffer, from: bodyStart), next < limit {
                outcomes.append(.rejected("an item cut short"))
                buffer.removeFirst(next)
                continue
            }
            guard let end else {
                if buffer.count > Self.maxItemBytes {
                    outcomes.append(.rejected("an item longer than \(Self.maxItemBytes) bytes"))
                    buffer.removeFirst(bodyStart)
                    continue
                }
                return outcomes
            }
            guard end <= Self.maxItemBytes else {
                outcomes.append(.rejected("an item longer than \(Self.maxItemBytes) bytes"))
                buffer.removeFirst(end + Self.close.count)
                continue
            }
            outcomes.append(Self.item(buffer[bodyStart..<end]))
            buffer.removeFirst(end + Self.close.count)
        }
    }

    /// The item whose text between `<item>` and `</item>` is `body`.
    static func item(_ body: ArraySlice<UInt8>) -> Outcome {
        var rest = body[...]
        guard let type = field("type", &rest).flatMap(hex) else { return .rejected("no hex type") }
        guard let code = field("code", &rest).flatMap(hex) else { return .rejected("no hex code") }
        guard let lengthText = field("length", &rest), let length = decimal(lengthText) else { return .rejected("no length") }
        guard length <= maxDataBytes else { return .rejected("data of \(length) bytes, more than \(maxDataBytes)") }
        if length == 0 {
            guard rest.allSatisfy(isSpace) else { return .rejected("text after an empty item") }
            return .item(Item(type: type, code: code, data: []))
        }
        let dataOpen = Array("<data encoding=\"base64\">".utf8)
        rest = rest.drop(while: isSpace)
        guard rest.starts(with: dataOpen) else { return .rejected("no base64 data") }
        rest = rest.dropFirst(dataOpen.count)
        let dataClose = Array("</data>".utf8)
        guard let closeAt = find(dataClose, in: rest), rest[(closeAt + dataClose.count)...].allSatisfy(isSpace) else {
            return .rejected("no end of the data")
        }
        guard let data = base64(rest[rest.startIndex..<closeAt]) else { return .rejected("bad base64") }
        guard data.count == length else { return .rejected("\(data.count) bytes of data, not \(length)") }
        return .item(Item(type: type, code: code, data: data))
    }

    /// The text of `<name>…</name>` at the start of `rest` (spaces before it skipped), which
    /// `rest` then leaves behind; nil when it is not there.
    private static func field(_ name: String, _ rest: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let open = Array("<\(name)>".utf8), close = Array("</\(name)>".utf8)
        let from = rest.drop(while: isSpace)
        guard from.starts(with: open) else { return nil }
        let inside = from.dropFirst(open.count)
        guard let end = find(close, in: inside) else { return nil }
        rest = inside[(end + close.count)...]
        return inside[inside.startIndex..<end]
    }

    /// 1–8 hex digits (either case), else nil.
    static func hex(_ text: ArraySlice<UInt8>) -> UInt32? {
        guard (1...8).contains(text.count) else { return nil }
        var value: UInt32 = 0
        for byte in text {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// 1–9 decimal digits, else nil.
    static func decimal(_ text: ArraySlice<UInt8>) -> Int? {
        guard (1...9).contains(text.count), text.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return text.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// Standard base64 (line breaks and spaces between its letters allowed, `=` only at the end),
    /// else nil.
    static func base64(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var quad: UInt32 = 0, count = 0, padding = 0
        for byte in text where !isSpace(byte) {
            let value: UInt8
            switch byte {
            case 0x41...0x5A: value = byte - 0x41
            case 0x61...0x7A: value = byte - 0x61 + 26
            case 0x30...0x39: value = byte - 0x30 + 52
            case 0x2B: value = 62
            case 0x2F: value = 63
            case 0x3D:
                // `=` pads the last group only: at its third or fourth place.
                guard count >= 2 else { return nil }
                padding += 1
                value = 0
            default: return nil
            }
            guard padding == 0 || byte == 0x3D else { return nil }
            quad = quad << 6 | UInt32(value)
            count += 1
            if count == 4 {
                let bytes: [UInt8] = [UInt8(quad >> 16 & 0xFF), UInt8(quad >> 8 & 0xFF), UInt8(quad & 0xFF)]
                out += bytes.prefix(3 - padding)
                quad = 0
                count = 0
                // Nothing may follow a padded group.
                if padding > 0 { padding = -1 }
            }
        }
        guard count == 0 else { return nil }
        return out
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// Where `needle` first starts in `hay` at or after `from` (an index of `hay`), nil when nowhere.
    private static func find<C: RandomAccessCollection>(_ needle: [UInt8], in hay: C, from: C.Index? = nil) -> C.Index?
    where C.Element == UInt8, C.Index == Int {
        let first = from ?? hay.startIndex
        guard hay.endIndex - first >= needle.count else { return nil }
        var i = first
        while i <= hay.endIndex - needle.count {
            if hay[i] == needle[0], hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}

// SPDX-License-Identifier: MIT

/// libFuzzer's dictionary syntax: one quoted token a line, `\\`, `\"` and `\xNN` escapes.
enum LibFuzzerDictionary {
    static func escape(_ token: String) -> String {
        var out = ""
        for byte in token.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\""): out += "\\\""
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }
}

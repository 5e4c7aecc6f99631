// SPDX-License-Identifier: MIT

/// A Bluetooth device's name as BlueZ gives it (its `Alias`: the name the owner set, else the
/// device's own, else its address), read with systemd's `busctl get-property org.bluez
/// /org/bluez/hciN/dev_AA_BB_CC_DD_EE_FF org.bluez.Device1 Alias` (pure; `BluetoothSpeakerSource`
/// runs it). busctl prints `s "TEXT"` with TEXT C-escaped (`\"`, `\\`, `\n`, and every byte
/// below 0x20 or from 0x7F as three octal digits, so UTF-8 letters come as `\303\251`): undone
/// here, the bytes decoded as UTF-8 (a bad sequence becomes U+FFFD). The name is text from any
/// device near the box: the core makes it inert and cuts it (`OtherSource.shown`); here it is
/// only bounded.
public enum BluezAlias {
    /// The most bytes of a name kept (BlueZ's own bound on a device name is 248).
    public static let maxBytes = 248

    /// The argument vector reading the alias of the phone behind bluez-alsa's PCM `path`
    /// (`/org/bluealsa/hciN/dev_…/a2dpsnk/source`), bounded by coreutils' `timeout` (`timeout`
    /// and `busctl` are the programs' paths); nil when `path` is not a phone's PCM.
    public static func argv(timeout: String, busctl: String, pcm path: String) -> [String]? {
        guard BluealsaPhoneStreams.phone(path) != nil else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let device = "/org/bluez/" + parts[3] + "/" + parts[4]
        return [timeout, "-s", "KILL", "5", busctl, "--system", "--timeout=3", "get-property", "org.bluez", device, "org.bluez.Device1", "Alias"]
    }

    /// The alias in busctl's output, or nil when it is not one string property (an error, an
    /// empty name).
    public static func parse(_ output: String) -> String? {
        var text = Substring(output)
        while let last = text.last, last == "\n" || last == " " || last == "\r" { text.removeLast() }
        guard text.hasPrefix("s \""), text.hasSuffix("\""), text.count >= 4 else { return nil }
        let body = Array(text.dropFirst(3).dropLast().utf8)
        var bytes: [UInt8] = []
        var i = 0
        while i < body.count, bytes.count < maxBytes + 4 {
            let c = body[i]
            i += 1
            guard c == UInt8(ascii: "\\"), i < body.count else { bytes.append(c); continue }
            let e = body[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "a"): bytes.append(0x07)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "v"): bytes.append(0x0B)
            case UInt8(ascii: "0")...UInt8(ascii: "3"):
                // Three octal digits: one byte.
                var value = Int(e - 0x30)
                var digits = 1
                while digits < 3, i < body.count, (0x30...0x37).contains(body[i]) {
                    value = value * 8 + Int(body[i] - 0x30)
                    i += 1
                    digits += 1
                }
                bytes.append(UInt8(value & 0xFF))
            case UInt8(ascii: "x"):
                var value = 0
                var digits = 0
                while digits < 2, i < body.count, let d = hexValue(body[i]) {
                    value = value * 16 + d
                    i += 1
                    digits += 1
                }
                bytes.append(UInt8(value))
            default:
                // `\"`, `\\`, `\'` and anything else: the character itself.
                bytes.append(e)
            }
        }
        let name = String(decoding: cut(bytes), as: UTF8.self)
        return name.isEmpty ? nil : name
    }

    /// At most `maxBytes`, not ending inside a UTF-8 sequence.
    static func cut(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > maxBytes else { return bytes }
        var end = maxBytes
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }

    static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        default: return nil
        }
    }
}

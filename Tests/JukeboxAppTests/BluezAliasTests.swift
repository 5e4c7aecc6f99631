// SPDX-License-Identifier: MIT
import JukeboxApp
import XCTest

/// A phone's name from busctl's `s "…"` (C-escaped, UTF-8 bytes in octal): undone, bounded,
/// anything else no name. Made inert by the core, not here.
final class BluezAliasTests: XCTestCase {
    func testBusctlsStringIsUnescapedAndBounded() {
        let rows: [(String, String?)] = [
            ("s \"Kim's phone\"\n", "Kim's phone"),
            ("s \"Kim\\\\s \\\"phone\\\"\"\n", "Kim\\s \"phone\""),
            ("s \"Caf\\303\\251\"\n", "Café"),
            ("s \"a\\033[2Jb\\nc\\tz\"", "a\u{1B}[2Jb\nc\tz"),
            ("s \"\\x41\\x4a\"", "AJ"),
            ("s \"bad \\377 byte\"", "bad \u{FFFD} byte"),
            ("s \"\"\n", nil),
            ("Failed to get property Alias on interface org.bluez.Device1: Unknown object '/org/bluez/hci0/dev_00_AA_01_00_00_00'.\n", nil),
            ("b true\n", nil),
            ("", nil),
            ("s \"", nil),
        ]
        for (output, expected) in rows { XCTAssertEqual(BluezAlias.parse(output), expected, output.debugDescription) }
        // 300 letters of two bytes each: cut at 248 bytes, between letters.
        let long = BluezAlias.parse("s \"" + String(repeating: "\\303\\251", count: 300) + "\"")
        XCTAssertEqual(long, String(repeating: "é", count: 124))
    }

    func testTheDeviceIsTheOneBehindThePhonesPCM() {
        XCTAssertEqual(BluezAlias.argv(timeout: "/usr/bin/timeout", busctl: "/usr/bin/busctl", pcm: "/org/bluealsa/hci1/dev_00_AA_01_00_00_00/a2dpsnk/source"),
                       ["/usr/bin/timeout", "-s", "KILL", "5", "/usr/bin/busctl", "--system", "--timeout=3", "get-property", "org.bluez",
                        "/org/bluez/hci1/dev_00_AA_01_00_00_00", "org.bluez.Device1", "Alias"])
        XCTAssertNil(BluezAlias.argv(timeout: "t", busctl: "b", pcm: "/org/bluealsa/hci1/dev_00_AA_01_00_00_00/a2dpsrc/sink"))
        XCTAssertNil(BluezAlias.argv(timeout: "t", busctl: "b", pcm: "/org/bluealsa/hci1/dev_00_AA_01_00_00_00/../a2dpsnk/source"))
    }
}

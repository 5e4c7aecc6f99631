// SPDX-License-Identifier: MIT
import Foundation
import Glibc

/// A stand-in for BlueZ's bluetoothctl, for the tests that run the binary: put first on the
/// player's PATH, it notes each call's arguments in `FOLDER/bluetoothctl.args`; `info` knows
/// the device, not paired (so `pair` runs without a discovery); `pair` says
/// something hostile and long (terminal colours, bluetoothctl's prompt, a bell, markup, 2,000
/// letters) and succeeds, `trust` fails as BlueZ does for a speaker not in range, `remove` works.
enum FakeBluetoothctl {
    /// What `pair` says last, as the player passes it on: the bell made inert (U+FFFD), the
    /// markup as it was (a page's to keep inert), then the letters, cut.
    static let pairSays = "Pairing successful \u{FFFD}<img src=x onerror=alert(1)>AAAA"

    /// Writes `FOLDER/bin/bluetoothctl`; returns the PATH to give the player.
    static func install(in folder: String) throws -> String {
        let bin = folder + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let long = String(repeating: "A", count: 2000)
        let script = """
        #!/bin/sh
        echo "$1 $2" >> '\(folder)/bluetoothctl.args'
        case "$1" in
        info) printf 'Device %s (public)\\n\\tPaired: no\\n' "$2";;
        pair) printf 'Attempting to pair with %s\\n\\033[0;94m[bluetooth]\\033[0m# Pairing successful \\007<img src=x onerror=alert(1)>\(long)\\n' "$2";;
        trust) echo "Device $2 not available"; exit 1;;
        *) echo "Device has been removed";;
        esac
        """
        try script.write(toFile: bin + "/bluetoothctl", atomically: true, encoding: .utf8)
        guard chmod(bin + "/bluetoothctl", 0o755) == 0 else { throw POSIXError(.EPERM) }
        return bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    }
}

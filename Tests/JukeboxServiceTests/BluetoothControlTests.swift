// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// `bluetooth pair|trust|forget ADDRESS` (issue 31): the language refuses what is not an address;
/// the loop runs bluetoothctl off the loop (a shell script stands in for it: Debian's bluez is not
/// installed here) and the reply says what it said; its output is made inert.
final class BluetoothControlTests: XCTestCase {
    func testTheLanguageTakesAnAddressAndOneOfThreeWords() {
        let usage = ControlError("usage: bluetooth pair|trust|forget ADDRESS (such as AA:BB:CC:DD:EE:FF)")
        let rows: [(String, Result<ControlCommand, ControlError>)] = [
            ("bluetooth pair aa:bb:cc:dd:ee:ff", .success(.bluetooth(.pair, address: "AA:BB:CC:DD:EE:FF"))),
            ("bluetooth TRUST AA:BB:CC:DD:EE:FF", .success(.bluetooth(.trust, address: "AA:BB:CC:DD:EE:FF"))),
            ("bluetooth forget 00:11:22:33:44:55", .success(.bluetooth(.forget, address: "00:11:22:33:44:55"))),
            ("bluetooth pair", .failure(usage)),
            ("bluetooth connect AA:BB:CC:DD:EE:FF", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF extra", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FG", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF;reboot", .failure(usage)),
            ("bluetooth pair ＡA:BB:CC:DD:EE:FF", .failure(usage)),
        ]
        for (line, expected) in rows { XCTAssertEqual(ControlCommand.parse(line, seed: 0), expected, line) }
    }

    func testTheReplySaysWhatBluetoothctlSaid() {
        let rows: [(String, BluetoothAction, String)] = [
            ("Attempting to pair with AA:BB:CC:DD:EE:FF\r\n\u{1B}[0;94m[bluetooth]\u{1B}[0m# Pairing successful\njukebox-exit 0\n", .pair,
             "ok bluetooth pair: Pairing successful"),
            ("Failed to pair: org.bluez.Error.AuthenticationFailed\njukebox-exit 1\n", .pair,
             "error: bluetooth pair failed: Failed to pair: org.bluez.Error.AuthenticationFailed"),
            ("Device AA:BB:CC:DD:EE:FF not available\njukebox-exit 1\n", .trust,
             "error: bluetooth trust failed: Device AA:BB:CC:DD:EE:FF not available"),
            ("Changing AA:BB:CC:DD:EE:FF trust succeeded\njukebox-exit 0\n", .trust, "ok bluetooth trust: Changing AA:BB:CC:DD:EE:FF trust succeeded"),
            ("jukebox-exit 0\n", .forget, "ok bluetooth forget: done"),
            ("[CHG] Device AA:BB:CC:DD:EE:FF Connected: yes\njukebox-exit 137\n", .pair, "error: bluetoothctl did not finish within 25 s"),
            ("sh: 1: timeout: not found\njukebox-exit 127\n", .pair, "error: bluetoothctl could not be run: sh: 1: timeout: not found"),
            // A title-setting sequence from a device's name: nothing of it reaches a terminal as control.
            ("Name: evil\u{07}\u{1B}]0;title\u{07}\njukebox-exit 1\n", .pair, "error: bluetooth pair failed: Name: evil\u{FFFD}0;title\u{FFFD}"),
            ("", .pair, "error: bluetooth pair failed"),
        ]
        for (output, action, expected) in rows { XCTAssertEqual(BluetoothControl.reply(output, action: action), expected, output) }
    }

    /// Through the control socket of a running loop, with a stand-in for bluetoothctl.
    func testTheLoopRunsBluetoothctlAndRepliesWithWhatItSaid() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        case "$1" in
        pair) printf 'Attempting to pair with %s\\r\\n\\033[0;94m[bluetooth]\\033[0m# Pairing successful\\n' "$2"; exit 0;;
        trust) echo "Device $2 not available"; exit 1;;
        remove) echo "Device has been removed"; exit 0;;
        esac
        exit 2
        """)
        XCTAssertEqual(chmod(script, 0o755), 0)
        let (box, done) = try start(dir, bluetoothctl: script)
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("bluetooth pair aa:bb:cc:dd:ee:ff", timeout: 30), "ok bluetooth pair: Pairing successful")
        XCTAssertEqual(c.request("bluetooth trust AA:BB:CC:DD:EE:FF", timeout: 30),
                       "error: bluetooth trust failed: Device AA:BB:CC:DD:EE:FF not available")
        XCTAssertEqual(c.request("bluetooth forget AA:BB:CC:DD:EE:FF", timeout: 30), "ok bluetooth forget: Device has been removed")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8),
                       "pair AA:BB:CC:DD:EE:FF\ntrust AA:BB:CC:DD:EE:FF\nremove AA:BB:CC:DD:EE:FF\n")
        XCTAssertEqual(c.request("bluetooth pair nonsense", timeout: 10),
                       "error: usage: bluetooth pair|trust|forget ADDRESS (such as AA:BB:CC:DD:EE:FF)")
    }

    func testWithoutBluetoothctlTheReplySaysSo() throws {
        let dir = TempDir()
        let (box, done) = try start(dir, bluetoothctl: nil)
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("bluetooth pair AA:BB:CC:DD:EE:FF", timeout: 10),
                       "error: bluetoothctl was not found (Debian's bluez package): cannot pair, trust or forget")
    }

    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    private func start(_ dir: TempDir, bluetoothctl: String?) throws -> (Box, DispatchSemaphore) {
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = { _ in ([], []) }
        runtime.bluetoothctl = bluetoothctl
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        return (box, done)
    }

    private func stop(_ box: Box, _ done: DispatchSemaphore) {
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the loop did not end")
    }
}

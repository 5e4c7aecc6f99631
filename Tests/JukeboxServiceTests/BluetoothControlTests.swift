// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// `bluetooth pair|trust|forget|disconnect ADDRESS` (issue 31): the language refuses what is not an address;
/// the loop runs bluetoothctl off the loop (a shell script stands in for it: Debian's bluez is not
/// installed here) and the reply says what it said; its output is made inert.
final class BluetoothControlTests: XCTestCase {
    func testTheLanguageTakesAnAddressAndOneOfFourWords() {
        let usage = ControlError("usage: bluetooth pair|trust|forget|disconnect ADDRESS (such as AA:BB:CC:DD:EE:FF) | bluetooth pair ADDRESS pin DIGITS")
        let badPIN = ControlError("bluetooth pair: a PIN is 1 to 16 digits 0-9 (such as 0000; a passkey: 6 at most)")
        let rows: [(String, Result<ControlCommand, ControlError>)] = [
            ("bluetooth pair aa:bb:cc:dd:ee:ff", .success(.bluetooth(.pair, address: "AA:BB:CC:DD:EE:FF"))),
            ("bluetooth TRUST AA:BB:CC:DD:EE:FF", .success(.bluetooth(.trust, address: "AA:BB:CC:DD:EE:FF"))),
            ("bluetooth forget 00:11:22:33:44:55", .success(.bluetooth(.forget, address: "00:11:22:33:44:55"))),
            ("bluetooth disconnect 00:11:22:33:44:55", .success(.bluetooth(.disconnect, address: "00:11:22:33:44:55"))),
            ("bluetooth pair", .failure(usage)),
            ("bluetooth connect AA:BB:CC:DD:EE:FF", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF extra", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FG", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF;reboot", .failure(usage)),
            ("bluetooth pair ＡA:BB:CC:DD:EE:FF", .failure(usage)),
            ("bluetooth pair aa:bb:cc:dd:ee:ff PIN 0000", .success(.bluetooth(.pair, address: "AA:BB:CC:DD:EE:FF", pin: "0000"))),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin 1234567890123456", .success(.bluetooth(.pair, address: "AA:BB:CC:DD:EE:FF", pin: "1234567890123456"))),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin 12345678901234567", .failure(badPIN)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin 12a4", .failure(badPIN)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin -123", .failure(badPIN)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin １２３４", .failure(badPIN)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF pin", .failure(usage)),
            ("bluetooth pair AA:BB:CC:DD:EE:FF code 1234", .failure(usage)),
            ("bluetooth trust AA:BB:CC:DD:EE:FF pin 1234", .failure(usage)),
            ("bluetooth pair nonsense pin 1234", .failure(usage)),
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

    /// `pair`'s failures in plain words; a device paired before is fine.
    func testThePairReplySaysWhatWentWrongInPlainWords() {
        let rows: [(String, String)] = [
            ("Attempting to pair with AA:BB:CC:DD:EE:FF\nFailed to pair: org.bluez.Error.AlreadyExists\njukebox-exit 1\n", "ok bluetooth pair: already paired"),
            ("Failed to pair: org.bluez.Error.AuthenticationFailed\njukebox-exit 1\n",
             "error: bluetooth pair refused by the device (one that wants a PIN: bluetooth pair ADDRESS pin DIGITS): Failed to pair: org.bluez.Error.AuthenticationFailed"),
            ("Failed to pair: org.bluez.Error.AuthenticationRejected\njukebox-exit 1\n",
             "error: bluetooth pair refused by the device (one that wants a PIN: bluetooth pair ADDRESS pin DIGITS): Failed to pair: org.bluez.Error.AuthenticationRejected"),
            ("Failed to pair: org.bluez.Error.ConnectionAttemptFailed\njukebox-exit 1\n",
             "error: bluetooth pair: the device did not answer; is it on, near and in pairing mode? Failed to pair: org.bluez.Error.ConnectionAttemptFailed"),
            ("Pairing successful\njukebox-exit 0\n", "ok bluetooth pair: Pairing successful"),
            // BlueZ gone mid-pair (btvirt died): bluetoothctl exited 0 with a property as its last line.
            ("Attempting to pair with 00:AA:01:02:00:02\n\tSupportedUUIDs: value 0x110b\njukebox-exit 0\n",
             "error: bluetooth pair: bluetoothctl ended without pairing (its last words: SupportedUUIDs: value 0x110b)"),
            // bluetoothctl 5.82 reports every object as it leaves: not what it said of the pairing.
            ("Attempting to pair with 00:AA:01:01:00:01\n[CHG] Device 00:AA:01:01:00:01 Bonded: yes\nFailed to pair: org.bluez.Error.AuthenticationCanceled\n"
             + "[DEL] Controller 00:AA:01:00:00:00 jukebox-hil #1 [default]\n[DEL] Controller 00:AA:01:01:00:01 jukebox-hil\njukebox-exit 1\n",
             "error: bluetooth pair refused by the device (one that wants a PIN: bluetooth pair ADDRESS pin DIGITS): Failed to pair: org.bluez.Error.AuthenticationCanceled"),
            ("jukebox-exit 137\n", "error: bluetoothctl did not finish within 25 s"),
            ("Failed to pair: org.bluez.Error.Failed\u{1B}]0;x\u{07}\njukebox-exit 1\n", "error: bluetooth pair failed: Failed to pair: org.bluez.Error.Failed0;x\u{FFFD}"),
        ]
        for (output, expected) in rows { XCTAssertEqual(BluetoothControl.pairReply(output), expected, output) }
    }

    /// `pair` of a device BlueZ does not know: `info`, a discovery stopped as soon as it names
    /// the address (the stand-in would scan 60 s more), then `pair`; known and paired: only
    /// `info`; a discovery that cannot start, a refusal: said. The stand-in plays BlueZ's part
    /// with a file for what it knows.
    func testPairScansForAnUnknownDeviceThenPairs() throws {
        let dir = TempDir()
        let args = dir.file("args"), known = dir.file("known"), mode = dir.file("mode")
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        case "$1" in
        info)
          if [ -e '\(known)' ]; then printf 'Device %s (public)\\n\\tName: Speaker\\n\\tPaired: %s\\n' "$2" "$(cat '\(known)')"; exit 0; fi
          echo "Device $2 not available"; exit 1;;
        --timeout)
          case "$(cat '\(mode)')" in
          broken) echo "Failed to start discovery: org.bluez.Error.NotReady"; exit 0;;
          esac
          # Said before the device line: the player ends the discovery as soon as it reads that
          # line, and a TERM before these two would leave the test nothing to look at.
          echo no > '\(known)'
          echo $$ > '\(dir.file("scanning"))'
          echo "Discovery started"
          echo "[CHG] Controller 00:AA:01:00:00:00 Discovering: yes"
          echo "[NEW] Device 11:22:33:44:55:66 Other"
          echo "[NEW] Device AA:BB:CC:DD:EE:FF Speaker"
          exec sleep 60;;
        pair)
          case "$(cat '\(mode)')" in
          refuse) echo "Attempting to pair with $2"; echo "Failed to pair: org.bluez.Error.AuthenticationRejected"; exit 1;;
          esac
          printf 'Attempting to pair with %s\\r\\n\\033[0;94m[bluetooth]\\033[0m# Pairing successful\\n' "$2"
          echo yes > '\(known)'; exit 0;;
        esac
        exit 2
        """)
        XCTAssertEqual(chmod(script, 0o755), 0)
        func calls() -> [String] {
            let text = (try? String(contentsOfFile: args, encoding: .utf8)) ?? ""
            _ = unlink(args)
            return text.split(separator: "\n").map(String.init)
        }
        try "seen".write(toFile: mode, atomically: true, encoding: .utf8)
        let (box, done) = try start(dir, bluetoothctl: script)
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))

        let started = monotonicNow()
        let paired = c.request("bluetooth pair aa:bb:cc:dd:ee:ff", timeout: 60) ?? "no reply"
        XCTAssertLessThan(monotonicNow() - started, 30, "the discovery was not stopped when the device was seen")
        XCTAssertTrue(paired.hasPrefix("ok bluetooth pair: Pairing successful (found after "), paired)
        XCTAssertTrue(paired.hasSuffix(" s of scanning)"), paired)
        XCTAssertEqual(calls(), ["info AA:BB:CC:DD:EE:FF", "--timeout \(BluetoothControl.scanLimit) scan on", "pair AA:BB:CC:DD:EE:FF"])
        // The discovery was ended, not left to run out (the stand-in's `sleep 60` is gone).
        let scanner = try XCTUnwrap(Int32((try String(contentsOfFile: dir.file("scanning"), encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertTrue(waitFor(10) { !processRuns(scanner) }, "the discovery \(scanner) still runs")

        XCTAssertEqual(c.request("bluetooth pair AA:BB:CC:DD:EE:FF", timeout: 60), "ok bluetooth pair: already paired")
        XCTAssertEqual(calls(), ["info AA:BB:CC:DD:EE:FF"])

        try "no".write(toFile: known, atomically: true, encoding: .utf8)
        try "refuse".write(toFile: mode, atomically: true, encoding: .utf8)
        XCTAssertEqual(c.request("bluetooth pair AA:BB:CC:DD:EE:FF", timeout: 60),
                       "error: bluetooth pair refused by the device (one that wants a PIN: bluetooth pair ADDRESS pin DIGITS): Failed to pair: org.bluez.Error.AuthenticationRejected")
        XCTAssertEqual(calls(), ["info AA:BB:CC:DD:EE:FF", "pair AA:BB:CC:DD:EE:FF"])

        _ = unlink(known)
        try "broken".write(toFile: mode, atomically: true, encoding: .utf8)
        XCTAssertEqual(c.request("bluetooth pair AA:BB:CC:DD:EE:FF", timeout: 60),
                       "error: bluetooth pair: AA:BB:CC:DD:EE:FF was not found in \(BluetoothControl.scanLimit) s of scanning; is it on, near and in pairing mode?"
                       + " (bluetoothctl: Failed to start discovery: org.bluez.Error.NotReady)")
        XCTAssertEqual(calls(), ["info AA:BB:CC:DD:EE:FF", "--timeout \(BluetoothControl.scanLimit) scan on"])
    }

    /// Through the control socket of a running loop, with a stand-in for bluetoothctl.
    func testTheLoopRunsBluetoothctlAndRepliesWithWhatItSaid() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        case "$1" in
        info) printf 'Device %s (public)\\n\\tPaired: no\\n' "$2"; exit 0;;
        pair) printf 'Attempting to pair with %s\\r\\n\\033[0;94m[bluetooth]\\033[0m# Pairing successful\\n' "$2"; exit 0;;
        trust) echo "Device $2 not available"; exit 1;;
        remove) echo "Device has been removed"; exit 0;;
        disconnect) echo "Successful disconnected"; exit 0;;
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
        XCTAssertEqual(c.request("bluetooth disconnect AA:BB:CC:DD:EE:FF", timeout: 30), "ok bluetooth disconnect: Successful disconnected")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8),
                       "info AA:BB:CC:DD:EE:FF\npair AA:BB:CC:DD:EE:FF\ntrust AA:BB:CC:DD:EE:FF\nremove AA:BB:CC:DD:EE:FF\ndisconnect AA:BB:CC:DD:EE:FF\n")
        XCTAssertEqual(c.request("bluetooth pair nonsense", timeout: 10),
                       "error: usage: bluetooth pair|trust|forget|disconnect ADDRESS (such as AA:BB:CC:DD:EE:FF) | bluetooth pair ADDRESS pin DIGITS")
    }

    /// A phone that streams to a box whose `sources` forbid it is disconnected by the loop
    /// (the core's `disconnectBluetooth`, carried out off the loop with bluetoothctl).
    func testAForbiddenPhoneIsDisconnectedThroughBluetoothctl() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        echo "Successful disconnected"
        """)
        XCTAssertEqual(chmod(script, 0o755), 0)
        var settings = Settings()
        settings.sources = SourceSettings(named: ["bluetooth": .forbidden])
        let (box, done) = try start(dir, bluetoothctl: script, settings: settings)
        defer { stop(box, done) }
        box.runtime.mailbox.post(.bluetoothPhone(streaming: true, sender: "AA:BB:CC:DD:EE:01", address: "AA:BB:CC:DD:EE:01"))
        XCTAssertTrue(waitFor(20) { (try? String(contentsOfFile: args, encoding: .utf8)) == "disconnect AA:BB:CC:DD:EE:01\n" },
                      (try? String(contentsOfFile: args, encoding: .utf8)) ?? "bluetoothctl never ran")
    }

    /// `disconnect` goes through BlueZ's objects on the adapter that knows the device (the phone
    /// of `bt-phone` is known to the box's second adapter: a one-shot bluetoothctl, on the first,
    /// said `not available`); the adapters are the kernel's `hciN` entries.
    func testDisconnectGoesThroughTheAdapterThatKnowsTheDevice() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let busctl = dir.write("busctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        case "$4" in
        /org/bluez/hci1/*) exit 0;;
        esac
        echo "Call failed: Unknown object '$4'." >&2; exit 1
        """)
        XCTAssertEqual(chmod(busctl, 0o755), 0)
        XCTAssertEqual(BluetoothControl.onAdapters(.disconnect, address: "00:AA:01:00:00:00", busctl: busctl, adapters: ["hci0", "hci1", "hci2"]),
                       "ok bluetooth disconnect: disconnected on hci1")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8),
                       "--system call org.bluez /org/bluez/hci0/dev_00_AA_01_00_00_00 org.bluez.Device1 Disconnect\n"
                       + "--system call org.bluez /org/bluez/hci1/dev_00_AA_01_00_00_00 org.bluez.Device1 Disconnect\n")
        XCTAssertEqual(BluetoothControl.onAdapters(.disconnect, address: "00:AA:01:00:00:00", busctl: busctl, adapters: ["hci0"]),
                       "error: bluetooth disconnect failed: 00:AA:01:00:00:00 is known to none of hci0 (busctl: Call failed: Unknown object '/org/bluez/hci0/dev_00_AA_01_00_00_00'.)")

        let sysfs = dir.file("sysfs")
        try FileManager.default.createDirectory(atPath: sysfs, withIntermediateDirectories: true)
        for name in ["hci1", "hci0", "hci", "hcix", "hci123456", "rfkill0"] {
            try FileManager.default.createDirectory(atPath: sysfs + "/" + name, withIntermediateDirectories: true)
        }
        XCTAssertEqual(BluetoothControl.localAdapters(sysfs: sysfs), ["hci0", "hci1"])
        XCTAssertEqual(BluetoothControl.localAdapters(sysfs: dir.file("none")), [])
    }

    /// The loop takes `trust`, `forget` and `disconnect` through the busctl and the adapters it was
    /// given (`ControlSettings.bluetoothBus`), not bluetoothctl, when there are adapters; with none listed,
    /// bluetoothctl again.
    func testTheLoopUsesTheBusItWasGiven() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let busctl = dir.write("busctl", """
        #!/bin/sh
        echo "busctl $@" >> '\(args)'
        """)
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo "bluetoothctl $@" >> '\(args)'
        echo "Changing AA:BB:CC:DD:EE:FF trust succeeded"
        """)
        XCTAssertEqual(chmod(busctl, 0o755), 0)
        XCTAssertEqual(chmod(script, 0o755), 0)
        let sysfs = dir.file("sysfs")
        try FileManager.default.createDirectory(atPath: sysfs + "/hci0", withIntermediateDirectories: true)
        let (box, done) = try start(dir, bluetoothctl: script, bus: BluetoothControl.Bus(busctl: busctl, sysfs: sysfs))
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("bluetooth trust AA:BB:CC:DD:EE:FF", timeout: 30), "ok bluetooth trust: trusted on hci0")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8),
                       "busctl --system set-property org.bluez /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF org.bluez.Device1 Trusted b true\n")
        XCTAssertEqual(rmdir(sysfs + "/hci0"), 0)
        XCTAssertEqual(c.request("bluetooth trust AA:BB:CC:DD:EE:FF", timeout: 30), "ok bluetooth trust: Changing AA:BB:CC:DD:EE:FF trust succeeded")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8).split(separator: "\n").last, "bluetoothctl trust AA:BB:CC:DD:EE:FF")
    }

    /// `trust` and `forget` go to every adapter that knows the device (a speaker paired on the
    /// adapter the config chose is not BlueZ's default one, which a one-shot bluetoothctl talks
    /// to): `Trusted` set through `Device1`, `RemoveDevice` through `Adapter1`; an adapter that
    /// does not know it is passed over; none: an error naming them.
    func testTrustAndForgetGoToEveryAdapterThatKnowsTheDevice() throws {
        let dir = TempDir()
        let args = dir.file("args")
        let busctl = dir.write("busctl", """
        #!/bin/sh
        echo "$@" >> '\(args)'
        case "$2 $4" in
        "set-property /org/bluez/hci1/"*|"set-property /org/bluez/hci2/"*) exit 0;;
        "call /org/bluez/hci2") exit 0;;
        esac
        echo "Call failed: Does Not Exist" >&2; exit 1
        """)
        XCTAssertEqual(chmod(busctl, 0o755), 0)
        let speaker = "00:AA:01:02:00:02"
        let object = "/org/bluez/hci%@/dev_00_AA_01_02_00_02"
        XCTAssertEqual(BluetoothControl.onAdapters(.trust, address: speaker, busctl: busctl, adapters: ["hci0", "hci1", "hci2"]),
                       "ok bluetooth trust: trusted on hci1, hci2")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8), ["0", "1", "2"].map {
            "--system set-property org.bluez " + object.replacingOccurrences(of: "%@", with: $0) + " org.bluez.Device1 Trusted b true\n"
        }.joined())
        XCTAssertEqual(unlink(args), 0)
        XCTAssertEqual(BluetoothControl.onAdapters(.forget, address: speaker, busctl: busctl, adapters: ["hci0", "hci2"]),
                       "ok bluetooth forget: forgotten on hci2")
        XCTAssertEqual(try String(contentsOfFile: args, encoding: .utf8), ["0", "2"].map {
            "--system call org.bluez /org/bluez/hci\($0) org.bluez.Adapter1 RemoveDevice o " + object.replacingOccurrences(of: "%@", with: $0) + "\n"
        }.joined())
        XCTAssertEqual(BluetoothControl.onAdapters(.forget, address: speaker, busctl: busctl, adapters: ["hci0", "hci1"]),
                       "error: bluetooth forget failed: \(speaker) is known to none of hci0, hci1 (busctl: Call failed: Does Not Exist)")
        XCTAssertEqual(BluetoothControl.onAdapters(.trust, address: speaker, busctl: busctl, adapters: ["hci0"]),
                       "error: bluetooth trust failed: \(speaker) is known to none of hci0 (busctl: Call failed: Does Not Exist)")
    }

    /// `jukebox ctl` waits for a `bluetooth` reply as long as its steps can take together
    /// (a discovery and a pair: more than the 10 s of every other command), however written.
    func testCtlWaitsForABluetoothReplyAsLongAsItsStepsCanTake() {
        XCTAssertEqual(BluetoothControl.longest, BluetoothControl.infoLimit + BluetoothControl.scanLimit + BluetoothControl.limit + 10)
        XCTAssertEqual(ControlClient.defaultTimeout(["bluetooth", "pair", "AA:BB:CC:DD:EE:FF"]), 58)
        XCTAssertEqual(ControlClient.defaultTimeout(["BLUETOOTH", "forget", "x"]), 58)
        XCTAssertEqual(ControlClient.defaultTimeout(["status", "bluetooth"]), 10)
        XCTAssertEqual(ControlClient.defaultTimeout([]), 10)
    }

    func testWithoutBluetoothctlTheReplySaysSo() throws {
        let dir = TempDir()
        let (box, done) = try start(dir, bluetoothctl: nil)
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("bluetooth pair AA:BB:CC:DD:EE:FF", timeout: 10),
                       "error: bluetoothctl was not found (Debian's bluez package): cannot pair, trust or forget")
    }

    /// The discovery ends once the device is named even when its wrapper leaves on the TERM
    /// without passing it on: GNU timeout does that when the signal comes before it has noted its
    /// child's pid, which a busy machine brings about (a discovery seen scanning on in CI's
    /// load). The stand-in wrapper always does it: `setsid` makes it a group leader, as timeout
    /// makes itself one, and its trap leaves at once; the discovery must still end.
    func testTheDiscoveryEndsEvenWhenItsWrapperLeavesWithoutPassingTheSignalOn() throws {
        guard let setsid = findProgram("setsid") else { throw XCTSkip("no setsid (util-linux)") }
        let dir = TempDir()
        let scanning = dir.file("scanning")
        let bluetoothctl = dir.write("bluetoothctl", """
        #!/bin/sh
        echo $$ > '\(scanning)'
        echo "[NEW] Device AA:BB:CC:DD:EE:FF Speaker"
        exec sleep 60
        """)
        // Called as `timeout -s KILL N PROGRAM ARGS…`: runs PROGRAM in its group and leaves on TERM.
        let wrapper = dir.write("timeout", """
        #!/bin/sh
        shift 3
        exec '\(setsid)' /bin/sh -c 'trap "exit 143" TERM; "$@" & wait' sh "$@"
        """)
        XCTAssertEqual(chmod(bluetoothctl, 0o755), 0)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)
        XCTAssertEqual(BluetoothControl.scan(program: bluetoothctl, address: "AA:BB:CC:DD:EE:FF", timeout: wrapper), .found)
        let scanner = try XCTUnwrap(Int32((try String(contentsOfFile: scanning, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(scanner, SIGKILL) }
        // Not this process's child: once its wrapper has left it is an orphan, and an orphan's
        // end may stay a zombie (a container's PID 1 need not collect it): hence `processRuns`.
        XCTAssertTrue(waitFor(10) { !processRuns(scanner) }, "the discovery \(scanner) still runs")
    }

    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    /// `bus`: none by default, so that bluetoothctl's stand-in gets every step, and a machine with
    /// adapters of its own (a developer's laptop) is never asked through its real busctl.
    private func start(_ dir: TempDir, bluetoothctl: String?, settings: Settings = Settings(),
                       bus: BluetoothControl.Bus = .none) throws -> (Box, DispatchSemaphore) {
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = { _ in ([], []) }
        runtime.controlSettings.bluetoothctl = bluetoothctl
        runtime.controlSettings.bluetoothBus = bus
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        return (box, done)
    }

    private func stop(_ box: Box, _ done: DispatchSemaphore) {
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the loop did not end")
    }
}

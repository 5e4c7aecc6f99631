// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// `bluetooth pair ADDRESS pin PIN` and the adapter the config chooses (issue 31): the dialogue
/// with an interactive bluetoothctl (pure, by tables: each line and what is written back), then
/// the session with a shell script standing in for bluetoothctl that plays the agent's part (a
/// PIN asked, right, wrong, never answered), and the control socket of a running loop.
final class BluetoothPairTests: XCTestCase {
    typealias Step = BluetoothPairDialogue.Step
    let speaker = "AA:BB:CC:DD:EE:FF"

    /// Feeds `lines` one at a time; each row: a line and the step expected for it.
    private func play(_ dialogue: inout BluetoothPairDialogue, _ rows: [(String, Step)], file: StaticString = #filePath, line: UInt = #line) {
        for (i, (text, expected)) in rows.enumerated() {
            XCTAssertEqual(dialogue.take(text, now: Double(i)), expected, "row \(i): \(text)", file: file, line: line)
        }
    }

    func testAKnownDeviceThatAsksForAPINIsGivenIt() {
        var d = BluetoothPairDialogue(address: speaker, pin: "1234", adapter: "00:AA:01:00:00:00")
        play(&d, [
            ("Waiting to connect to bluetoothd...", .send([])),
            ("Agent registered", .send(["select 00:AA:01:00:00:00", "info \(speaker)", "version"])),
            ("Controller 00:AA:01:00:00:00 box [default]", .send([])),
            ("Device \(speaker) (public)", .send([])),
            ("Paired: no", .send([])),
            ("Version 5.82", .send(["pair \(speaker)"])),
            ("Attempting to pair with \(speaker)", .send([])),
            ("Request PIN code", .send(["1234"])),
            ("[agent] Enter PIN code: [CHG] Device \(speaker) Paired: yes", .send([])),
            ("Pairing successful", .finish("ok bluetooth pair: Pairing successful")),
        ])
        XCTAssertEqual(d.phase, .ended)
    }

    func testAnUnknownDeviceIsDiscoveredFirstWithTheChosenAdapter() {
        var d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: nil)
        play(&d, [
            ("Agent registered", .send(["info \(speaker)", "version"])),
            ("Device \(speaker) not available", .send([])),
            ("Version 5.82", .send(["scan on"])),
            ("Discovery started", .send([])),
            ("[NEW] Device 11:22:33:44:55:66 Other", .send([])),
            ("[NEW] Device \(speaker) Speaker", .send(["scan off", "pair \(speaker)"])),
            ("Request authorization", .send(["yes"])),
            ("Pairing successful", .finish("ok bluetooth pair: Pairing successful (found after 3.0 s of scanning)")),
        ])
    }

    func testAPairedDeviceIsNotPairedAgain() {
        var d = BluetoothPairDialogue(address: speaker, pin: "0000", adapter: nil)
        play(&d, [
            ("Agent is already registered", .send(["info \(speaker)", "version"])),
            ("Device \(speaker) (public)", .send([])),
            ("Paired: yes", .send([])),
            ("Version 5.82", .finish("ok bluetooth pair: already paired")),
        ])
    }

    /// Each way a pair ends, from the pair on: the reply in plain words, bluetoothctl's words inert.
    func testEachEndOfAPairIsSaidInPlainWords() {
        let asked = "Request PIN code"
        let rows: [(String?, [String], Step)] = [
            ("9999", [asked, "[agent] Enter PIN code: Failed to pair: org.bluez.Error.AuthenticationFailed"],
             .finish("error: bluetooth pair: \(speaker) refused the PIN (is it the right one?): Failed to pair: org.bluez.Error.AuthenticationFailed")),
            (nil, [asked], .finish("error: bluetooth pair: \(speaker) asks for a PIN code: bluetooth pair \(speaker) pin DIGITS (often 0000)")),
            ("12345678", ["Request passkey"], .finish("error: bluetooth pair: \(speaker) asks for a passkey: bluetooth pair \(speaker) pin DIGITS (6 at most)")),
            ("123456", ["Request passkey", "Pairing successful"], .finish("ok bluetooth pair: Pairing successful")),
            (nil, ["Failed to pair: org.bluez.Error.AuthenticationRejected"],
             .finish("error: bluetooth pair refused by the device: Failed to pair: org.bluez.Error.AuthenticationRejected")),
            ("1234", ["Failed to pair: org.bluez.Error.ConnectionAttemptFailed"],
             .finish("error: bluetooth pair: the device did not answer; is it on, near and in pairing mode? Failed to pair: org.bluez.Error.ConnectionAttemptFailed")),
            ("1234", ["Failed to pair: org.bluez.Error.AlreadyExists"], .finish("ok bluetooth pair: already paired")),
            ("1234", ["Failed to pair: evil\u{1B}]0;title\u{07}"], .finish("error: bluetooth pair failed: Failed to pair: evil\u{FFFD}]0;title\u{FFFD}")),
            ("1234", ["Device \(speaker) not available"], .finish("error: bluetooth pair: BlueZ no longer knows \(speaker) (Device \(speaker) not available)")),
        ]
        for (pin, lines, expected) in rows {
            var d = BluetoothPairDialogue(address: speaker, pin: pin, adapter: nil)
            _ = d.take("Agent registered", now: 0)
            _ = d.take("Device \(speaker) (public)", now: 0)
            XCTAssertEqual(d.take("Version 5.82", now: 0), .send(["pair \(speaker)"]))
            var last = Step.send([])
            for line in lines { last = d.take(line, now: 1) }
            XCTAssertEqual(last, expected, "\(pin ?? "no PIN"): \(lines)")
        }
    }

    /// A passkey to confirm comes in the agent's prompt, not on a line: yes when it is the PIN
    /// given (or none was given), no otherwise, and the refusal then says which it showed.
    func testAPasskeyIsConfirmedOnlyWhenItIsThePINGiven() {
        let prompt = "[agent] Confirm passkey 012345 (yes/no): "
        for (pin, answer) in [(nil, "yes"), ("12345", "yes"), ("012345", "yes"), ("999999", "no")] as [(String?, String)] {
            var d = BluetoothPairDialogue(address: speaker, pin: pin, adapter: nil)
            _ = d.take("Agent registered", now: 0)
            _ = d.take("Device \(speaker) (public)", now: 0)
            _ = d.take("Version 5.82", now: 0)
            XCTAssertEqual(d.prompt(prompt), .send([]), "no request yet: nothing said")
            XCTAssertEqual(d.take("Request confirmation", now: 1), .send([]))
            XCTAssertEqual(d.prompt("[agent] Confirm passkey "), .send([]), "the number not there yet")
            XCTAssertEqual(d.prompt(prompt), .send([answer]), pin ?? "no PIN")
            XCTAssertEqual(d.prompt(prompt), .send([]), "answered once")
            if answer == "no" {
                XCTAssertEqual(d.take("Failed to pair: org.bluez.Error.AuthenticationCanceled", now: 2),
                               .finish("error: bluetooth pair: \(speaker) showed the passkey 012345, not the PIN given: Failed to pair: org.bluez.Error.AuthenticationCanceled"))
            }
        }
    }

    func testEachPhaseThatOutlivesItsBoundSaysWhere() {
        var d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: nil)
        XCTAssertEqual(d.limit, BluetoothControl.infoLimit)
        XCTAssertEqual(d.timedOut(), "error: bluetooth pair: bluetoothctl did not reach bluetoothd within 8 s (is bluetooth.service running?)")
        d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: nil)
        _ = d.take("Agent registered", now: 0)
        _ = d.take("No default controller available", now: 0)
        XCTAssertEqual(d.take("Version 5.82", now: 0), .finish("error: bluetooth pair: No default controller available"))
        d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: "00:AA:01:09:00:00")
        _ = d.take("Agent registered", now: 0)
        XCTAssertEqual(d.take("Controller 00:AA:01:09:00:00 not available", now: 0),
                       .finish("error: bluetooth pair: the adapter 00:AA:01:09:00:00 (the config's bluetooth.adapter) is not one of this box's (`bluetoothctl list`)"))
        d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: nil)
        _ = d.take("Agent registered", now: 0)
        _ = d.take("Version 5.82", now: 0)
        XCTAssertEqual(d.phase, .scanning)
        XCTAssertEqual(d.limit, BluetoothControl.scanLimit)
        XCTAssertEqual(d.timedOut(), "error: bluetooth pair: \(speaker) was not found in 15 s of scanning; is it on, near and in pairing mode?")
        d = BluetoothPairDialogue(address: speaker, pin: nil, adapter: nil)
        _ = d.take("Agent registered", now: 0)
        _ = d.take("Version 5.82", now: 0)
        XCTAssertEqual(d.take("Failed to start discovery: org.bluez.Error.NotReady", now: 0),
                       .finish("error: bluetooth pair: the discovery could not start (bluetoothctl: Failed to start discovery: org.bluez.Error.NotReady)"))
        d = BluetoothPairDialogue(address: speaker, pin: "1234", adapter: nil)
        _ = d.take("Agent registered", now: 0)
        _ = d.take("Device \(speaker) (public)", now: 0)
        _ = d.take("Version 5.82", now: 0)
        XCTAssertEqual(d.limit, BluetoothControl.limit)
        XCTAssertEqual(d.timedOut(), "error: bluetooth pair: \(speaker) did not finish pairing within 25 s; is it on, near and in pairing mode?")
        XCTAssertEqual(d.ended(), "error: bluetooth pair: bluetoothctl ended without pairing")
    }

    // MARK: the session, with a stand-in bluetoothctl

    /// A stand-in for an interactive bluetoothctl: reads commands on its input as the real one
    /// does, plays the agent's part by the file `mode` (`pin`: asks for a PIN code and takes
    /// 1234; `silent`: never answers a pair), writes what it got to `calls` and its pid to `pid`.
    private func standIn(_ dir: TempDir) -> String {
        let script = dir.write("bluetoothctl", """
        #!/bin/sh
        echo $$ > '\(dir.file("pid"))'
        printf 'Waiting to connect to bluetoothd...\\r\\033[0;94m[bluetoothctl]\\033[0m> '
        echo "Agent registered"
        while read -r cmd arg; do
          echo "$cmd${arg:+ $arg}" >> '\(dir.file("calls"))'
          case "$cmd" in
          select)
            if [ "$arg" = 00:AA:01:00:00:00 ]; then echo "Controller $arg box [default]"; else echo "Controller $arg not available"; fi;;
          info)
            if [ -e '\(dir.file("known"))' ]; then printf 'Device %s (public)\\n\\tPaired: no\\n' "$arg"; else echo "Device $arg not available"; fi;;
          version) echo "Version 5.82";;
          scan)
            case "$arg" in
            on) echo "Discovery started"; echo "[NEW] Device $(cat '\(dir.file("address"))') Speaker"; touch '\(dir.file("known"))';;
            off) echo "Discovery stopped";;
            esac;;
          pair)
            echo "Attempting to pair with $arg"
            case "$(cat '\(dir.file("mode"))')" in
            pin)
              echo "Request PIN code"
              printf '\\033[1;39m[agent] Enter PIN code: \\033[0m'
              read -r pin
              echo "pin $pin" >> '\(dir.file("calls"))'
              if [ "$pin" = 1234 ]; then echo "[CHG] Device $arg Paired: yes"; echo "Pairing successful"
              else echo "Failed to pair: org.bluez.Error.AuthenticationFailed"; fi;;
            silent) exec sleep 60;;
            esac;;
          esac
          printf '\\033[0;94m[bluetoothctl]\\033[0m> '
        done
        """)
        XCTAssertEqual(chmod(script, 0o755), 0)
        return script
    }

    private func calls(_ dir: TempDir) -> [String] {
        let text = (try? String(contentsOfFile: dir.file("calls"), encoding: .utf8)) ?? ""
        _ = unlink(dir.file("calls"))
        return text.split(separator: "\n").map(String.init)
    }

    private func standInPid(_ dir: TempDir) throws -> Int32 {
        try XCTUnwrap(Int32((try String(contentsOfFile: dir.file("pid"), encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    func testTheSessionDiscoversPairsWithThePINAndEndsBluetoothctl() throws {
        let dir = TempDir()
        let program = standIn(dir)
        try speaker.write(toFile: dir.file("address"), atomically: true, encoding: .utf8)
        try "pin".write(toFile: dir.file("mode"), atomically: true, encoding: .utf8)
        let right = BluetoothPairSession.run(program: program, address: speaker, pin: "1234", adapter: "00:AA:01:00:00:00")
        XCTAssertTrue(right.hasPrefix("ok bluetooth pair: Pairing successful (found after "), right)
        XCTAssertEqual(calls(dir), ["select 00:AA:01:00:00:00", "info \(speaker)", "version", "scan on", "scan off", "pair \(speaker)", "pin 1234"])
        let first = try standInPid(dir)
        XCTAssertTrue(waitFor(10) { !processRuns(first) }, "bluetoothctl \(first) still runs")

        XCTAssertEqual(BluetoothPairSession.run(program: program, address: speaker, pin: "9999", adapter: nil),
                       "error: bluetooth pair: \(speaker) refused the PIN (is it the right one?): Failed to pair: org.bluez.Error.AuthenticationFailed")
        XCTAssertEqual(calls(dir), ["info \(speaker)", "version", "pair \(speaker)", "pin 9999"])

        XCTAssertEqual(BluetoothPairSession.run(program: program, address: speaker, pin: "1234", adapter: "00:AA:01:09:00:00"),
                       "error: bluetooth pair: the adapter 00:AA:01:09:00:00 (the config's bluetooth.adapter) is not one of this box's (`bluetoothctl list`)")
    }

    /// A device that never answers the pair: the reply comes at the pair's bound, and bluetoothctl
    /// (here a `sleep` it became) is ended with its process group.
    func testADeviceThatNeverAnswersIsGivenUpAtTheBoundAndNothingIsLeftRunning() throws {
        let dir = TempDir()
        let program = standIn(dir)
        try "".write(toFile: dir.file("known"), atomically: true, encoding: .utf8)
        try "silent".write(toFile: dir.file("mode"), atomically: true, encoding: .utf8)
        let started = monotonicNow()
        let limits = BluetoothPairDialogue.Limits(start: 20, scan: 20, pair: 2)
        XCTAssertEqual(BluetoothPairSession.run(program: program, address: speaker, pin: "1234", adapter: nil, limits: limits),
                       "error: bluetooth pair: \(speaker) did not finish pairing within 2 s; is it on, near and in pairing mode?")
        XCTAssertLessThan(monotonicNow() - started, 30, "the pair's bound did not end it")
        let pid = try standInPid(dir)
        XCTAssertTrue(waitFor(10) { !processRuns(pid) }, "bluetoothctl \(pid) still runs")
    }

    /// Through a running loop's control socket: the PIN and the config's adapter reach the
    /// session; a bad PIN never reaches bluetoothctl.
    func testTheLoopPairsWithThePINAndTheConfiguredAdapter() throws {
        let dir = TempDir()
        let program = standIn(dir)
        try speaker.write(toFile: dir.file("address"), atomically: true, encoding: .utf8)
        try "".write(toFile: dir.file("known"), atomically: true, encoding: .utf8)
        try "pin".write(toFile: dir.file("mode"), atomically: true, encoding: .utf8)
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        let runtime = Runtime(state: State(settings: Settings()), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = { _ in ([], []) }
        runtime.controlSettings.bluetoothctl = program
        runtime.controlSettings.bluetoothAdapter = "00:AA:01:00:00:00"
        let box = BluetoothControlTests.Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the loop did not end")
        }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("bluetooth pair aa:bb:cc:dd:ee:ff pin 1234", timeout: 60), "ok bluetooth pair: Pairing successful")
        XCTAssertEqual(calls(dir), ["select 00:AA:01:00:00:00", "info \(speaker)", "version", "pair \(speaker)", "pin 1234"])
        XCTAssertEqual(c.request("bluetooth pair \(speaker) pin 12a4", timeout: 10),
                       "error: bluetooth pair: a PIN is 1 to 16 digits 0-9 (such as 0000; a passkey: 6 at most)")
        XCTAssertEqual(calls(dir), [])
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// A phone playing through the box over Bluetooth (issue 31) through the built binary, with
/// `"bluetooth": {"phone": true}`: a stand-in for bluez-alsa's `bluealsa-cli` on the PATH (a
/// shell script: `monitor --properties=Running` is `cat` of a FIFO the test writes bluez-alsa's
/// lines to, `--verbose list-pcms` prints nothing), run by the player's real
/// `BluetoothSpeakerSource` as it runs the real one (through setpriv, backed off when it ends).
/// The card is the fault-injecting test device; who holds it is its lock file.
final class BluetoothPhoneBinaryTests: XCTestCase {
    /// The phone's A2DP sink PCM as bluez-alsa names it.
    private static let pcm = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source"

    var dir: String!
    var pcm: TestPCM!
    var home: String { dir + "/home" }
    var socket: String { dir + "/ctl" }
    /// The test's end of the monitor's FIFO (read-write: never blocks, never sees an end).
    var monitor: Int32 = -1

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-phone-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/bin", withIntermediateDirectories: true)
        pcm = try TestPCM(directory: dir + "/device", speed: 1)
        try pcm.writeAsoundrc(home: home)
        XCTAssertEqual(mkfifo(dir + "/monitor", 0o600), 0)
        monitor = open(dir + "/monitor", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(monitor, 0)
        let cli = dir + "/bin/bluealsa-cli"
        try """
        #!/bin/sh
        # A stand-in for bluez-alsa's bluealsa-cli.
        dir='\(dir!)'
        case "$*" in
        "monitor --properties=Running")
            echo start >> "$dir/monitor.starts"
            echo $$ > "$dir/monitor.pid.tmp" && mv "$dir/monitor.pid.tmp" "$dir/monitor.pid"
            exec cat "$dir/monitor" ;;
        "--verbose list-pcms") exit 0 ;;
        *) echo "$*" >> "$dir/unknown"; exit 2 ;;
        esac
        """.write(toFile: cli, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(cli, 0o755), 0)
    }

    override func tearDown() {
        if monitor >= 0 { close(monitor) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    func startPlayer(sources: String = "{}") throws -> Jukebox.Running {
        let song = dir + "/song.wav", config = dir + "/c.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 240)
        try #"""
        {"device": "\#(pcm.name)", "state": "\#(dir!)/state.json", "music": ["\#(song)"], "socket": "\#(socket)",
         "sources": \#(sources), "bluetooth": {"phone": true}}
        """#.write(toFile: config, atomically: true, encoding: .utf8)
        let path = dir + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let daemon = try Jukebox.start(["run", "--config", config], home: home, environment: ["PATH": path])
        let pid = daemon.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == pid }, "the player never opened the test device")
        XCTAssertTrue(waitFor(10) { self.monitorPID() != nil }, "the player never started bluealsa-cli monitor")
        say("ServiceRunning org.bluealsa")
        return daemon
    }

    func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { write(monitor, $0.baseAddress, $0.count) }, bytes.count)
    }

    func monitorPID() -> pid_t? {
        (try? String(contentsOfFile: dir + "/monitor.pid", encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func monitorStarts() -> Int {
        ((try? String(contentsOfFile: dir + "/monitor.starts", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func json() -> [String: Any] {
        guard let text = try? Jukebox.run(["ctl", "--socket", socket, "status", "--json"]).stdout,
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    func position() -> Double { json()["position"] as? Double ?? -1 }

    /// The phone starts: the device is let go and the status names the phone. Returns the place left.
    func phoneStarts(_ cycle: String) -> Double {
        say("PropertyChanged \(Self.pcm) Running true")
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == nil }, "\(cycle): the device was not let go: \(json()); holder \(String(describing: pcm.lockHolder)); "
                      + "the device's last events: \(pcm.events().suffix(6))")
        let now = json()
        XCTAssertEqual(now["phase"] as? String, "interrupted", "\(cycle): \(now)")
        XCTAssertEqual(now["message"] as? String, "Bluetooth: AA:BB:CC:DD:EE:FF", "\(cycle): \(now)")
        return now["position"] as? Double ?? -1
    }

    /// The player holds the device again and plays on from `place`.
    func resumes(_ player: pid_t, at place: Double, _ cycle: String) {
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == player }, "\(cycle): the device was not taken back")
        XCTAssertTrue(waitFor(10) { self.json()["phase"] as? String == "playing" }, "\(cycle): \(json())")
        let back = position()
        XCTAssertTrue(back >= place - 0.05 && back < place + 3, "\(cycle): left at \(place) s, came back at \(back) s")
    }

    func testAPhoneTakesTheCardAndGivesItBackAtThePlaceEvenWhenTheMonitorDies() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.position() > 1 }, "not playing: \(json())")

        // The phone plays, then stops: the place is kept.
        let left = phoneStarts("stream")
        XCTAssertGreaterThan(left, 1)
        let status = (try? Jukebox.run(["ctl", "--socket", socket, "status"]).stdout) ?? ""
        XCTAssertTrue(status.contains("Bluetooth: AA:BB:CC:DD:EE:FF"), status)
        say("PropertyChanged \(Self.pcm) Running false")
        resumes(player, at: left, "stream")

        // The monitor dies mid-stream (bluez-alsa-utils upgraded, a crash): the player plays on.
        let first = try XCTUnwrap(monitorPID())
        let place = phoneStarts("monitor dies")
        XCTAssertEqual(kill(first, SIGKILL), 0)
        resumes(player, at: place, "monitor dies")
        // ... and it is started again (after its 1 s back-off), and heard again.
        XCTAssertTrue(waitFor(15) { self.monitorStarts() >= 2 && self.monitorPID() != first }, "the monitor was not started again")
        say("ServiceRunning org.bluealsa")
        let again = phoneStarts("after the monitor's return")
        say("PropertyChanged \(Self.pcm) Running false")
        resumes(player, at: again, "after the monitor's return")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/unknown"),
                       "bluealsa-cli was asked something else: " + ((try? String(contentsOfFile: dir + "/unknown", encoding: .utf8)) ?? ""))
    }

    func testAPhoneThatFlaps100TimesNeverHangsThePlayerNorLosesThePlace() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.position() > 1 }, "not playing: \(json())")
        let before = position()
        let closes = pcm.events(named: "close").count
        let started = Date()
        // In bursts of ten, 20 ms apart: some come while a release or a reopening is under way.
        for burst in 0..<10 {
            for _ in 0..<10 {
                say("PropertyChanged \(Self.pcm) Running true")
                say("PropertyChanged \(Self.pcm) Running false")
            }
            if burst < 9 { usleep(20_000) }  // pacing the flood, not waiting for the player
        }
        // One more start after them: once the device is let go for it, every flap was read.
        let left = phoneStarts("after 100 flaps")
        let took = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(left, before - 0.05, "the place went back")
        XCTAssertLessThan(left, before + took + 1, "the place jumped ahead")
        XCTAssertGreaterThan(pcm.events(named: "close").count, closes, "the flaps never let the device go")
        say("PropertyChanged \(Self.pcm) Running false")
        resumes(player, at: left, "after 100 flaps")
        print("BluetoothPhoneBinaryTests: 100 start/stop flaps and a start read in \(String(format: "%.2f", took)) s; "
              + "the device closed \(pcm.events(named: "close").count - closes) times; left at \(before) s, then \(left) s")
    }

    /// And disconnects it: a stand-in `bluetoothctl` on the PATH records what it was asked.
    func testAForbiddenPhoneLeavesThePlayerPlayingAndSaysSo() throws {
        let ctl = dir + "/bin/bluetoothctl", asked = dir + "/bluetoothctl.args"
        try "#!/bin/sh\necho \"$*\" >> '\(asked)'\necho 'Successful disconnected'\n".write(toFile: ctl, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(ctl, 0o755), 0)
        let daemon = try startPlayer(sources: #"{"bluetooth": "forbidden"}"#)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.position() > 1 }, "not playing: \(json())")
        say("PropertyChanged \(Self.pcm) Running true")
        XCTAssertTrue(waitFor(10) { (self.json()["message"] as? String)?.contains("Bluetooth refused") == true }, "\(json())")
        XCTAssertTrue(waitFor(20) { (try? String(contentsOfFile: asked, encoding: .utf8))?.contains("disconnect AA:BB:CC:DD:EE:FF\n") == true },
                      "the phone was not disconnected: \((try? String(contentsOfFile: asked, encoding: .utf8)) ?? "bluetoothctl never ran")")
        let heard = position()
        XCTAssertTrue(waitFor(10) { self.position() > heard + 1 }, "stopped playing: \(json())")
        XCTAssertEqual(pcm.lockHolder, player, "the device was let go")
        XCTAssertEqual(json()["phase"] as? String, "playing")
        say("PropertyChanged \(Self.pcm) Running false")
        XCTAssertTrue(waitFor(10) { self.position() > heard + 2 }, "stopped playing: \(json())")
        XCTAssertEqual(pcm.lockHolder, player)
        XCTAssertEqual(json()["phase"] as? String, "playing")
    }
}

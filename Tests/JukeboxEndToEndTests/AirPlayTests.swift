// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// A real AirPlay stream: pyatv (the simulated phone, Tests/AirPlay/airplay_sender.py, in the venv
/// board/setup.sh makes) streams over RAOP to Debian's shairport-sync (`AirPlayRig`), whose
/// `sessioncontrol` group is the package's (board/shairport-sync.conf) with this build's binary and
/// this test's socket, while the built player plays a long track on the test device. Instants on
/// one clock (CLOCK_MONOTONIC): the sender's RECORD and TEARDOWN requests, the device's close and
/// start (`t=` in its log). Needs root and the venv; without them it skips saying why (a failure
/// under `JUKEBOX_REQUIRE_PEERS=1`, as in CI). `JUKEBOX_AIRPLAY_CYCLES` sets the number of sessions.
final class AirPlayTests: XCTestCase {
    var dir: String!
    var pcm: TestPCM!
    var home: String { dir + "/home" }
    var socket: String { dir + "/ctl" }
    var rig: AirPlayRig?

    /// The session timeout the test gives shairport-sync (the package's is 20 s): a vanished sender
    /// ends its session after it.
    static let sessionTimeout = 3

    /// The name the simulated phone sends (`X-Apple-Client-Name`): text from anywhere, with an
    /// escape sequence, a bell and a right-to-left override in it.
    static let senderName = "Anna\u{1B}[2J\u{7}'s \u{202E}iPhone"
    /// How the status shows it: inert, every control character a `�`.
    static let shownSender = "AirPlay: Anna\u{FFFD}[2J\u{FFFD}'s \u{FFFD}iPhone"
    /// The metadata pipe, in the test's folder as the package's is in jukebox's runtime folder.
    var metadataPipe: String { dir + "/airplay-metadata" }

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-airplay-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        pcm = try TestPCM(directory: dir + "/device", speed: 1)
        try pcm.writeAsoundrc(home: home)
        // A failed step ends the test: every wait is bounded, and 50 cycles of failing waits would not be.
        continueAfterFailure = false
    }

    override func tearDown() {
        rig?.stop()
        rig = nil
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// pyatv's venv: `JUKEBOX_PYATV_DIR` (as board/setup.sh reads it), else in `$XDG_CACHE_HOME` or `~/.cache`.
    static var pyatvPython: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = env["JUKEBOX_PYATV_DIR"], !dir.isEmpty { return dir + "/bin/python" }
        let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((env["HOME"] ?? "/root") + "/.cache")
        return cache + "/jukebox/pyatv-0.18.0/bin/python"
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The package's groups with this test's binary, socket, metadata pipe and session timeout.
    func sessioncontrol() throws -> String {
        let text = try String(contentsOfFile: Self.root + "/board/shairport-sync.conf", encoding: .utf8)
        XCTAssertTrue(text.contains("session_timeout = 20;"), "the package's group changed: look at this test again")
        return text.replacingOccurrences(of: "/usr/bin/jukebox", with: Jukebox.binary)
            .replacingOccurrences(of: "/run/jukebox/control", with: socket)
            .replacingOccurrences(of: "/run/jukebox/airplay-metadata", with: metadataPipe)
            .replacingOccurrences(of: "session_timeout = 20;", with: "session_timeout = \(Self.sessionTimeout);")
    }

    /// The rig, the player and the sender, started; skips (or fails in CI) when a piece is missing.
    func start() throws -> (player: Jukebox.Running, sender: Sender) {
        if let why = AirPlayRig.missing() {
            if geteuid() != 0 { throw XCTSkip(why) }
            throw missingPeer(why)
        }
        guard FileManager.default.isExecutableFile(atPath: Self.pyatvPython) else {
            throw missingPeer("the AirPlay test's sender needs pyatv's venv at \(Self.pyatvPython) (board/setup.sh makes it from PyPI)")
        }
        let song = dir + "/song.wav", config = dir + "/c.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 600)
        try #"{"device": "\#(pcm.name)", "state": "\#(dir!)/state.json", "music": ["\#(song)"], "socket": "\#(socket)", "#
            .appending(#""airplayMetadata": "\#(metadataPipe)"}"#).write(toFile: config, atomically: true, encoding: .utf8)
        // The player first: it makes the metadata pipe before shairport-sync looks for it.
        let player = try Jukebox.start(["run", "--config", config], home: home)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: self.metadataPipe) }, "the player made no metadata pipe")
        let rig: AirPlayRig
        do { rig = try AirPlayRig(dir: dir, sessioncontrol: try sessioncontrol()) } catch {
            kill(player.process.processIdentifier, SIGKILL)
            throw error
        }
        self.rig = rig
        rig.adopt(player)
        let pid = player.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == pid && self.lastEvent(of: pid)?.name == "start" }, "the player never played on the test device")
        let sender = try Sender(rig: rig, python: Self.pyatvPython, script: Self.root + "/Tests/AirPlay/airplay_sender.py")
        return (player, sender)
    }

    func testAirPlayStreamsTakeTheDeviceAndGiveItBackAtThePlace() throws {
        let started = monotonicNow()
        let (player, sender) = try start()
        let pid = player.process.processIdentifier
        let cycles = Int(ProcessInfo.processInfo.environment["JUKEBOX_AIRPLAY_CYCLES"] ?? "") ?? 50
        var yields: [Double] = [], resumes: [Double] = []
        for cycle in 0..<cycles {
            let (yield, resume) = try session(pid: pid, sender: sender, cycle: cycle)
            yields.append(yield)
            resumes.append(resume)
        }
        let total = monotonicNow() - started
        print("jukebox airplay: \(cycles) AirPlay streams (pyatv → shairport-sync → jukebox source) in \(String(format: "%.1f", total)) s; "
              + "RECORD sent → device closed: \(Self.figures(yields)); TEARDOWN sent → device playing again: \(Self.figures(resumes))")
        // The issue's promise is 1 s of the stream's start and of its end: the figures above say
        // how it holds (8-67 ms and 10-78 ms at their slowest in quiet runs). Asserted: the
        // typical session (the median) within it, and every one within 5 s, so that a session
        // starved for a second by a machine as busy as CI's (one resume took 1.05 s at load 9)
        // is a figure to read, not a failure; a session that hangs still fails.
        XCTAssertLessThan(Self.median(yields), 1.0, "yield latencies: \(yields)")
        XCTAssertLessThan(Self.median(resumes), 1.0, "resume latencies: \(resumes)")
        XCTAssertLessThan(yields.max() ?? 99, 5.0, "yield latencies: \(yields)")
        XCTAssertLessThan(resumes.max() ?? 99, 5.0, "resume latencies: \(resumes)")
        XCTAssertFalse(rig?.shairportLog.contains("fatal") ?? true, rig?.shairportLog.suffix(2000).description ?? "")
        // Each end hook told its holder, which is gone: none piles up over the sessions.
        XCTAssertTrue(waitFor(5) { self.holders().isEmpty }, "holders left: \(holders())")
    }

    func testASenderKilledOrVanishedMidStreamGivesTheDeviceBackAtThePlace() throws {
        let (player, first) = try start()
        let pid = player.process.processIdentifier
        // One whole session first: the rig works.
        _ = try session(pid: pid, sender: first, cycle: 0)
        // Killed (SIGKILL): the kernel closes its connection, and shairport-sync ends the session at once.
        let killed = try interrupted(pid: pid, sender: first) { first.kill() }
        print("jukebox airplay: a sender killed mid-stream → device playing again after \(String(format: "%.3f", killed)) s")
        XCTAssertLessThan(killed, 5.0, "a hang, not a busy machine's second (17-29 ms in quiet runs)")
        // Out of the network: frozen (SIGSTOP), it sends nothing more and closes nothing.
        // shairport-sync's watchdog ends the session after session_timeout without a packet
        // (whole seconds, looked at every 2 s: in [timeout, timeout + 3) s), and runs the end hook.
        let second = try Sender(rig: try XCTUnwrap(rig), python: Self.pyatvPython, script: Self.root + "/Tests/AirPlay/airplay_sender.py", name: "sender-2")
        let vanished = try interrupted(pid: pid, sender: second) { second.freeze() }
        print("jukebox airplay: a sender frozen mid-stream (session_timeout \(Self.sessionTimeout) s) → device playing again after \(String(format: "%.2f", vanished)) s")
        XCTAssertGreaterThanOrEqual(vanished, Double(Self.sessionTimeout) - 0.5)
        XCTAssertLessThan(vanished, Double(Self.sessionTimeout) + 4)
        second.kill()
    }

    /// A long stream that `cut` ends on the sender's side mid-stream (no TEARDOWN): returns the
    /// seconds from the cut to the player playing again, at the place it left.
    func interrupted(pid: Int32, sender: Sender, cut: () -> Void) throws -> Double {
        let before = try XCTUnwrap(position())
        sender.command("stream 60")
        let record = try XCTUnwrap(sender.wait(for: "record", timeout: 30), "no RECORD: " + sender.output)
        XCTAssertNotNil(sender.wait(for: "streaming", timeout: 30), "the sender never streamed: " + sender.output)
        XCTAssertNotNil(waitForClose(pid: pid, after: record, timeout: 10), "the player did not let the device go")
        XCTAssertTrue(waitFor(5) { self.status().contains(Self.shownSender) }, status())
        let paused = try XCTUnwrap(position())
        XCTAssertGreaterThanOrEqual(paused, before)
        // Well into the stream (the receiver plays from 2 s after the first packet).
        Thread.sleep(forTimeInterval: 1)  // the stream's own pace, not a synchronisation
        let cutAt = monotonicNow()
        cut()
        let open = try XCTUnwrap(waitForStart(pid: pid, after: cutAt, timeout: Double(Self.sessionTimeout) + 15),
                                 "the player never played again: " + status())
        // The clock read after the position's answer: the answer is the player's at some moment
        // before it (a `jukebox ctl` started under load takes hundreds of ms), never after.
        let back = try XCTUnwrap(position())
        let seen = monotonicNow()
        XCTAssertTrue(back >= paused - 0.05 && back <= paused + (seen - open) + 0.25, "left at \(paused) s, \(seen - open) s after playing again at \(back) s")
        return open - cutAt
    }

    // MARK: - One session

    /// One AirPlay stream of 1 s: the player lets the device go when it starts and plays on at the
    /// place when it ends. Returns (RECORD sent → device closed, TEARDOWN sent → device started).
    func session(pid: Int32, sender: Sender, cycle: Int) throws -> (yield: Double, resume: Double) {
        let before = try XCTUnwrap(position(), "cycle \(cycle): no position")
        sender.command("stream 1")
        let record = try XCTUnwrap(sender.wait(for: "record", timeout: 30), "cycle \(cycle): no RECORD: " + sender.output)
        let recorded = try XCTUnwrap(sender.wait(for: "recorded", timeout: 30), "cycle \(cycle): RECORD not answered: " + sender.output)
        let closed = try XCTUnwrap(waitForClose(pid: pid, after: record, timeout: 10), "cycle \(cycle): the device was not let go")
        // shairport-sync answers RECORD after its begin hook returned: the device was free by then.
        XCTAssertLessThanOrEqual(closed, recorded, "cycle \(cycle): RECORD answered before the device was free")
        // The sender's name, inert: through shairport-sync's metadata pipe, written by a thread
        // of its own, before or after the begin hook.
        var status = ""
        let named = waitFor(5) { status = self.status(); return status.contains(Self.shownSender) }
        let paused = position()
        let teardown = try XCTUnwrap(sender.wait(for: "teardown", timeout: 30), "cycle \(cycle): no TEARDOWN: " + sender.output)
        XCTAssertTrue(named, "cycle \(cycle): the sender's name never showed; the last status: \(status.debugDescription)")
        XCTAssertFalse(status.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" || $0 == "\u{202E}" }, "cycle \(cycle): \(status.debugDescription)")
        let started = try XCTUnwrap(waitForStart(pid: pid, after: teardown, timeout: 10), "cycle \(cycle): the player did not play again")
        // The clock after the position's answer (see `interrupted`): the answer is never later.
        let back = try XCTUnwrap(position())
        let seen = monotonicNow()
        let after = self.status()
        XCTAssertFalse(after.contains("AirPlay"), "cycle \(cycle): still shown after the stream: \(after)")
        XCTAssertNotNil(sender.wait(for: "done", timeout: 30), "cycle \(cycle): the session did not end: " + sender.output)
        // Nothing lost: it plays on from where it stopped (the place taken at the release), no
        // further than the time it has played since.
        if let paused {
            XCTAssertGreaterThanOrEqual(paused, before, "cycle \(cycle)")
            XCTAssertTrue(back >= paused - 0.05 && back <= paused + (seen - started) + 0.25,
                          "cycle \(cycle): left at \(paused) s, \(seen - started) s after playing again at \(back) s")
        } else {
            XCTFail("cycle \(cycle): no position while interrupted")
        }
        return (closed - record, started - teardown)
    }

    // MARK: - The device's log and the player's status

    func events(of pid: Int32) -> [TestPCM.Event] { pcm.events().filter { $0.pid == pid } }

    func lastEvent(of pid: Int32) -> TestPCM.Event? { events(of: pid).last }

    static func time(_ event: TestPCM.Event) -> Double? { event.fields["t"].flatMap(Double.init) }

    /// When the player's stream closed, at or after `after` (monotonic seconds).
    func waitForClose(pid: Int32, after: Double, timeout: Double) -> Double? { waitForEvent("close", pid: pid, after: after, timeout: timeout) }

    /// When the player's stream started playing again, at or after `after`.
    func waitForStart(pid: Int32, after: Double, timeout: Double) -> Double? { waitForEvent("start", pid: pid, after: after, timeout: timeout) }

    /// The time of the player's first `name` event in the device's log at or after `after`.
    func waitForEvent(_ name: String, pid: Int32, after: Double, timeout: Double) -> Double? {
        var found: Double?
        _ = waitFor(timeout) {
            found = self.events(of: pid).first { $0.name == name && (Self.time($0) ?? 0) >= after }.flatMap(Self.time)
            return found != nil
        }
        return found
    }

    func position() -> Double? {
        guard let text = try? Jukebox.run(["ctl", "--socket", socket, "status", "--json"]).stdout,
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        return object["position"] as? Double
    }

    /// `jukebox source` processes still connected to this test's socket (the holders the begin hook leaves).
    func holders() -> [Int32] {
        let procs = (try? FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init)) ?? []
        return procs.filter { pid in
            guard let cmd = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
            let args = cmd.split(separator: "\0")
            return args.first.map(String.init) == Jukebox.binary && args.contains("source") && args.contains(Substring(self.socket))
        }
    }

    func status() -> String { (try? Jukebox.run(["ctl", "--socket", socket, "status"]).stdout) ?? "" }

    /// "min … / median … / max … ms".
    /// The middle value (99 for none: fails any bound).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 99 : sorted[sorted.count / 2]
    }

    static func figures(_ values: [Double]) -> String {
        let sorted = values.sorted()
        guard let first = sorted.first, let last = sorted.last else { return "none" }
        let ms = { (v: Double) in String(Int((v * 1000).rounded())) }
        return "min \(ms(first)) / median \(ms(sorted[sorted.count / 2])) / max \(ms(last)) ms"
    }
}

/// The simulated phone: airplay_sender.py, fed commands on a pipe, its `EVENT T` lines read from a file.
final class Sender {
    let running: Jukebox.Running
    let input: Pipe
    /// Lines already taken by `wait(for:)`.
    private var taken = 0

    init(rig: AirPlayRig, python: String, script: String, name: String = "sender") throws {
        input = Pipe()
        running = try rig.spawn(name, python, [script, String(rig.port), AirPlayTests.senderName],
                                environment: ["PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"], stdin: input.fileHandleForReading)
        guard waitFor(60, { self.output.contains("ready ") || !self.running.process.isRunning }), running.process.isRunning else {
            throw NSError(domain: "jukebox", code: 1, userInfo: [NSLocalizedDescriptionKey: "the AirPlay sender did not start: " + output + AirPlayRig.contents(running.errPath)])
        }
        taken = lines.count
    }

    var output: String { running.stdoutSoFar }
    var lines: [Substring] { output.split(separator: "\n") }

    func command(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The time of the next `event` line (lines before it are passed over), or nil after `timeout`
    /// or at an `error` line.
    func wait(for event: String, timeout: Double) -> Double? {
        var found: Double?
        _ = waitFor(timeout) {
            let all = self.lines
            while self.taken < all.count {
                let words = all[self.taken].split(separator: " ")
                self.taken += 1
                if words.first == "error" { return true }
                if words.first.map(String.init) == event, words.count == 2 {
                    found = Double(words[1])
                    return true
                }
            }
            return !self.running.process.isRunning
        }
        return found
    }

    /// Out of the network: stopped, it neither sends nor closes anything.
    func freeze() { Glibc.kill(running.process.processIdentifier, SIGSTOP) }

    func kill() { Glibc.kill(running.process.processIdentifier, SIGKILL) }
}

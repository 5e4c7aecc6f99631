// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The built binary on the fault-injecting test device, and another source taking it through the
/// package's shairport-sync hooks (`board/shairport-sync.conf`), run as shairport-sync runs them:
/// fork and exec of the configured command line (no shell), the hook's parent standing for
/// shairport-sync: quick, and without root. A real AirPlay stream through the real shairport-sync
/// is `AirPlayTests`; `testTheRealShairportSyncReadsTheHooks` proves it reads these very hooks.
final class OtherSourceScenarioTests: XCTestCase {
    var dir: String!
    var pcm: TestPCM!
    var home: String { dir + "/home" }
    var socket: String { dir + "/ctl" }
    /// Stand-ins for shairport-sync started by a test; killed at its end.
    var standIns: [Process] = []

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-source-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        pcm = try TestPCM(directory: dir + "/device", speed: 1)
        try pcm.writeAsoundrc(home: home)
    }

    override func tearDown() {
        // Killed, not waited for: a test that fails must not hang on a child (the holder a
        // broken player leaves is gone with the player, which `Jukebox.start` ties to this process).
        for p in standIns where p.isRunning { kill(p.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    func startPlayer(sources: String = "{}") throws -> Jukebox.Running {
        let song = dir + "/song.wav", config = dir + "/c.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 120)
        try #"{"device": "\#(pcm.name)", "state": "\#(dir!)/state.json", "music": ["\#(song)"], "socket": "\#(socket)", "sources": \#(sources)}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config], home: home)
        let pid = daemon.process.processIdentifier
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == pid }, "the player never opened the test device")
        return daemon
    }

    /// The package's hook command lines, as shairport-sync reads them, for this test's binary and socket.
    func hooks() throws -> (begin: [String], end: [String]) {
        let text = try String(contentsOfFile: Self.packageConfig, encoding: .utf8)
        func command(_ key: String) throws -> [String] {
            guard let line = text.split(separator: "\n").first(where: { $0.contains(key + " =") }),
                  let open = line.firstIndex(of: "\""), let close = line.lastIndex(of: "\""), open < close else {
                throw NSError(domain: "jukebox", code: 1, userInfo: [NSLocalizedDescriptionKey: "no \(key) in \(Self.packageConfig)"])
            }
            return line[line.index(after: open)..<close].split(separator: " ").map {
                $0 == "/usr/bin/jukebox" ? Jukebox.binary : $0 == "/run/jukebox/control" ? socket : String($0)
            }
        }
        return (try command("run_this_before_play_begins"), try command("run_this_after_play_ends"))
    }

    static var packageConfig: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("board/shairport-sync.conf").path
    }

    /// A stand-in for shairport-sync: a process that runs `hook` as its child, waits for it (as
    /// `wait_for_completion` does), writes its exit status to `status` (renamed into place), then lives on as a session
    /// would (exec sleep: the same pid, so the hook's parent is still "shairport-sync").
    func shairport(running hook: [String], status: String) throws -> Process {
        let p = Process()
        // The status appears whole (written aside, then renamed): a test that sees the file reads it.
        let command = ChildDeath.command("/bin/sh", ["-c", "\"$@\"; echo $? > \(status).tmp && mv \(status).tmp \(status); exec sleep 600", "sh"] + hook)
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        p.standardError = FileHandle.nullDevice
        try p.run()
        standIns.append(p)
        return p
    }

    func run(_ command: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command[0])
        p.arguments = Array(command.dropFirst())
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return 127 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    func position() -> Double? {
        guard let text = try? Jukebox.run(["ctl", "--socket", socket, "status", "--json"]).stdout,
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        return object["position"] as? Double
    }

    func status() -> String { (try? Jukebox.run(["ctl", "--socket", socket, "status"]).stdout) ?? "" }

    /// One AirPlay session: the begin hook returns once the device is free (the player closed it),
    /// the end hook has the player open it again at the place it left. Returns the two delays.
    func session(_ player: Int32, cycle: Int) throws -> (yield: Double, resume: Double) {
        let (begin, end) = try hooks()
        let before = position() ?? 0
        let flag = dir + "/begin-\(cycle)"
        let started = Date()
        let stand = try shairport(running: begin, status: flag)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: flag) && self.pcm.lockHolder == nil }, "cycle \(cycle): not released")
        let yielded = Date().timeIntervalSince(started)
        XCTAssertEqual(try String(contentsOfFile: flag, encoding: .utf8), "0\n", "cycle \(cycle): the begin hook failed")
        XCTAssertTrue(status().contains("AirPlay"), "cycle \(cycle): \(status())")
        let paused = position() ?? -1
        XCTAssertGreaterThanOrEqual(paused, before, "cycle \(cycle)")
        let ending = Date()
        XCTAssertEqual(run(end), 0, "cycle \(cycle): the end hook failed")
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == player }, "cycle \(cycle): did not resume")
        let resumed = Date().timeIntervalSince(ending)
        let back = position() ?? -1
        XCTAssertTrue(back >= paused - 0.05 && back < paused + 1.5, "cycle \(cycle): left at \(paused) s, came back at \(back) s")
        // The end hook told the holder, which is gone (none piles up over the sessions).
        XCTAssertTrue(waitFor(5) { (try? self.childrenHoldingTheSocket())?.isEmpty == true }, "cycle \(cycle): a holder stayed")
        kill(stand.processIdentifier, SIGKILL)
        return (yielded, resumed)
    }

    func testAirPlaySessionsTakeTheDeviceAndGiveItBackAtThePlace() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        var yields: [Double] = [], resumes: [Double] = []
        let start = Date()
        var cycle = 0
        // As many sessions as fit about 30 s (each one takes a few `ctl` round trips).
        while cycle < 50 && Date().timeIntervalSince(start) < 30 {
            let (y, r) = try session(player, cycle: cycle)
            yields.append(y)
            resumes.append(r)
            cycle += 1
        }
        print("jukebox sources: \(cycle) AirPlay sessions; begin hook → device free: max \(Int((yields.max() ?? 0) * 1000)) ms, end hook → device reopened: max \(Int((resumes.max() ?? 0) * 1000)) ms")
        XCTAssertGreaterThanOrEqual(cycle, 5)
        // Judged loosely (a loaded 2-core machine); the figures above are the measurement.
        XCTAssertLessThan(yields.max() ?? 99, 2.5)
        XCTAssertLessThan(resumes.max() ?? 99, 2.5)
    }

    func testShairportSyncKilledMidSessionGivesTheDeviceBack() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        let flag = dir + "/begin"
        let stand = try shairport(running: try hooks().begin, status: flag)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: flag) && self.pcm.lockHolder == nil }, "not released")
        // No end hook ever runs: shairport-sync is gone.
        let killed = Date()
        kill(stand.processIdentifier, SIGKILL)
        XCTAssertTrue(waitFor(10) { self.pcm.lockHolder == player }, "the player waits for a source that is gone")
        print("jukebox sources: shairport-sync killed → device reopened after \(Int(Date().timeIntervalSince(killed) * 1000)) ms")
        XCTAssertTrue(status().hasPrefix("▶"), status())
    }

    func testTheHolderKilledGivesTheDeviceBackAndAStayPausedSourceStaysPaused() throws {
        let daemon = try startPlayer(sources: #"{"airplay": "stay-paused"}"#)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let flag = dir + "/begin"
        _ = try shairport(running: try hooks().begin, status: flag)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: flag) && self.pcm.lockHolder == nil }, "not released")
        // The process the hook left behind holds the source; killed, it takes the source with it.
        let holders = try childrenHoldingTheSocket()
        XCTAssertEqual(holders.count, 1, "one holder: \(holders)")
        for pid in holders { kill(pid, SIGKILL) }
        XCTAssertTrue(waitFor(10) { self.status().hasPrefix("⏸") }, "not paused: \(status())")
        XCTAssertNil(pcm.lockHolder, "stay-paused: the device is not opened again")
    }

    func testAForbiddenSourceIsRefusedAndThePlayerKeepsTheDevice() throws {
        let daemon = try startPlayer(sources: #"{"other": "forbidden"}"#)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let player = daemon.process.processIdentifier
        let flag = dir + "/begin"
        _ = try shairport(running: try hooks().begin, status: flag)
        XCTAssertTrue(waitFor(10) { FileManager.default.fileExists(atPath: flag) }, "the begin hook did not return")
        XCTAssertEqual(try String(contentsOfFile: flag, encoding: .utf8), "1\n", "a refused source: the hook fails")
        XCTAssertEqual(pcm.lockHolder, player)
        XCTAssertEqual(pcm.events(named: "close").count, 0, "the device was let go")
        XCTAssertTrue(status().contains("AirPlay refused"), status())
    }

    func testTheRealShairportSyncReadsTheHooks() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/shairport-sync") else {
            throw missingPeer("shairport-sync is not installed; board/setup.sh installs it")
        }
        let config = dir + "/shairport-sync.conf"
        let general = #"general = { name = "jukebox-test"; port = 0; output_backend = "stdout"; };"#
        // The metadata pipe in the test's folder: shairport-sync makes it at start when it is missing.
        let groups = try String(contentsOfFile: Self.packageConfig, encoding: .utf8)
            .replacingOccurrences(of: "/run/jukebox/airplay-metadata", with: dir + "/airplay-metadata")
        try (general + "\n" + groups).write(toFile: config, atomically: true, encoding: .utf8)
        let p = Process()
        let command = ChildDeath.command("/usr/bin/shairport-sync", ["-c", config, "-vv"])
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        let err = dir + "/ss.err"
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // It reads the whole config first (a syntax error dies with "Line N of the configuration
        // file"), prints what it read with -vv, then starts (and, without a running avahi-daemon,
        // stops at its mDNS advertisement).
        let read = { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }
        XCTAssertTrue(waitFor(10) { read().contains("wait-cmd status is") }, "shairport-sync did not read the config: \(read())")
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        let text = read()
        XCTAssertFalse(text.contains("of the configuration file"), text)
        XCTAssertTrue(text.contains(#"run_this_before_play_begins action is "/usr/bin/jukebox source begin airplay --socket /run/jukebox/control""#), text)
        XCTAssertTrue(text.contains(#"run_this_after_play_ends action is "/usr/bin/jukebox source end airplay --socket /run/jukebox/control""#), text)
        XCTAssertTrue(text.contains("wait-cmd status is 1"), text)
    }

    /// Processes connected to the player's socket that are not the player: the holders.
    func childrenHoldingTheSocket() throws -> [Int32] {
        // The holder is a `jukebox source` process in a session of its own.
        let procs = try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init)
        return procs.filter { pid in
            guard let cmd = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
            let args = cmd.split(separator: "\0")
            return args.first.map(String.init) == Jukebox.binary && args.contains("source") && args.contains(Substring(self.socket))
        }
    }
}

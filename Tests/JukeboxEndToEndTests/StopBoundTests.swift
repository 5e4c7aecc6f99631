// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// SIGTERM ends the player in bounded time whatever is stuck. A read that never returns (a hung
/// NFS server, a dying USB disk) is the test knob `JUKEBOX_TEST_HANG_READS`: the tag read of a
/// path containing its text blocks for good in read(2) on a pipe.
final class StopBoundTests: DaemonTestCase {
    /// Whether a thread of `pid` sleeps in a pipe read (the knob's stuck read).
    private static func stuckInRead(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { tid in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/wchan", encoding: .utf8)) ?? "").contains("pipe_read")
        }
    }

    /// Waits (10 s at most) until `daemon` is stuck in the knob's read (during `what`), sends it
    /// SIGTERM and returns how it ended (it must within 10 s) and how long that took (printed).
    private func terminateOnceStuck(_ daemon: Jukebox.Running, during what: String,
                                    file: StaticString = #filePath, line: UInt = #line) throws -> (ended: Jukebox.Result, took: Double) {
        XCTAssertTrue(waitFor(10) { Self.stuckInRead(daemon.process.processIdentifier) }, "the \(what) never reached the stuck read",
                      file: file, line: line)
        let sent = Date()
        kill(daemon.process.processIdentifier, SIGTERM)
        let result = daemon.wait(timeout: 10)
        let took = Date().timeIntervalSince(sent)
        print("SIGTERM during a stuck \(what): exited after \(String(format: "%.2f", took)) s")
        return (try XCTUnwrap(result, "still running 10 s after SIGTERM (killed)", file: file, line: line), took)
    }

    func testSIGTERMWhileStartUpIsStuckInAReadEndsTheProcessWithinFiveSeconds() throws {
        try FileManager.default.createDirectory(atPath: dir + "/hung", withIntermediateDirectories: true)
        try TestAudio.write(path: dir + "/hung/a.wav", kind: .wav16, frames: 44_100)
        let config = dir + "/c.json"
        let object: [String: Any] = ["audio": "null", "state": "", "music": [dir + "/hung"], "socket": socket!]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: ["JUKEBOX_TEST_HANG_READS": "/hung/"])
        let (ended, took) = try terminateOnceStuck(daemon, during: "start-up")
        XCTAssertLessThan(took, 6.5)
        XCTAssertNotEqual(ended.status, 0, "a forced exit is not a clean one")
        XCTAssertTrue(ended.stderr.contains("after SIGTERM"), ended.stderr)
    }

    func testSIGTERMWhileAnAddIsStuckInAReadSavesAndEndsAtOnce() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        try FileManager.default.createDirectory(atPath: dir + "/hung", withIntermediateDirectories: true)
        try TestAudio.write(path: dir + "/hung/a.wav", kind: .wav16, frames: 44_100)
        let config = dir + "/c.json"
        let state = dir + "/state.json"
        let object: [String: Any] = ["audio": "null", "state": state, "music": [song], "socket": socket!]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: ["JUKEBOX_TEST_HANG_READS": "/hung/"])
        XCTAssertTrue(waitFor(10) { (try? ctl("status"))?.stdout.hasPrefix("▶") == true }, "the daemon never played")
        let add = try Jukebox.start(["ctl", "--socket", socket, "add", dir + "/hung"])
        defer { _ = add.wait(timeout: 1) }
        let (ended, took) = try terminateOnceStuck(daemon, during: "add")
        XCTAssertLessThan(took, 2)
        XCTAssertEqual(ended.status, 0, ended.stderr)
        let saved = try String(contentsOfFile: state, encoding: .utf8)
        XCTAssertTrue(saved.contains("song.wav"), "the place was saved: \(saved)")
    }

    /// A player a test starts dies with its parent (`ChildDeath`: PR_SET_PDEATHSIG = SIGKILL set
    /// between fork and exec): here the parent is a thread that ends at once, as the test runner's
    /// would when it is killed.
    func testAPlayerStartedByATestDiesWithItsParent() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        let config = dir + "/c.json"
        let object: [String: Any] = ["audio": "null", "state": "", "music": [song], "socket": socket!]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        final class Slot: @unchecked Sendable { var running: Jukebox.Running?; var error: Error? }
        let slot = Slot(), started = DispatchSemaphore(value: 0)
        Thread {
            do {
                let running = try Jukebox.start(["run", "--config", config])
                slot.running = running
                // The thread ends only once setpriv has set the signal and exec'd the player: a
                // parent gone before the prctl would not count. The command line tells, not
                // /proc/PID/exe, which under qemu-user (the arm64 suite) names the emulator.
                let cmdline = "/proc/\(running.process.processIdentifier)/cmdline"
                _ = waitFor(20) {
                    let words = ((try? Data(contentsOf: URL(fileURLWithPath: cmdline))) ?? Data()).split(separator: 0)
                        .map { String(decoding: $0, as: UTF8.self) }
                    return words.contains(Jukebox.binary) && !words.contains("--pdeathsig")
                }
            } catch { slot.error = error }
            started.signal()
        }.start()
        XCTAssertEqual(started.wait(timeout: .now() + 30), .success)
        let daemon = try XCTUnwrap(slot.running, "\(slot.error.map { "\($0)" } ?? "not started")")
        XCTAssertTrue(waitFor(10) { !daemon.process.isRunning }, "the player outlived the thread that started it")
        if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) }
        daemon.process.waitUntilExit()
        XCTAssertEqual(daemon.process.terminationReason, .uncaughtSignal)
        XCTAssertEqual(daemon.process.terminationStatus, SIGKILL)
    }

    /// The process ends without exit(3)'s handlers (`leaveProcess`): threads nobody waits for may
    /// still be inside a library whose handler frees what they use (OpenSSL's freed its error
    /// strings under a station's first fetch: SIGSEGV on the way out). A preloaded library
    /// registers a handler that says so; `/bin/true` (exit(3)) shows the probe works, and neither a
    /// play to its end nor a SIGTERMed daemon may run it.
    func testTheProcessLeavesWithoutExitHandlers() throws {
        let source = dir + "/probe.c", probe = dir + "/probe.so"
        try """
        #include <stdlib.h>
        #include <unistd.h>
        static void ran(void) { write(2, "exit handler ran\\n", 17); }
        __attribute__((constructor)) static void registered(void) { atexit(ran); }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        func shell(_ script: String, _ args: [String]) throws -> (status: Int32, stderr: String) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", script, "sh"] + args
            let err = dir + "/shell.err"
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            p.standardError = FileHandle(forWritingAtPath: err)
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            XCTAssertTrue(waitFor(60) { !p.isRunning }, "\(script) did not finish")
            if p.isRunning { p.terminate() }
            p.waitUntilExit()
            return (p.terminationStatus, (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        }
        // A C compiler for the machine the tests run on: the toolchain's clang where the tests are
        // built; the arm64 root the cross-built suite runs in under qemu-aarch64 has none.
        let built = try shell(#"for c in cc clang gcc; do command -v "$c" >/dev/null && exec "$c" -shared -fPIC -o "$1" "$2"; done; exit 99"#,
                              [probe, source])
        if built.status == 99 { throw XCTSkip("no C compiler on this machine to build the probe") }
        XCTAssertEqual(built.status, 0, built.stderr)
        let control = try shell(#"LD_PRELOAD="$1" /bin/true"#, [probe])
        XCTAssertEqual(control.stderr, "exit handler ran\n", "the probe does not work")

        let wav = dir + "/tone.wav"
        try TestAudio.write(path: wav, kind: .wav16, frames: 4410)
        let played = try Jukebox.run(["play", "--audio", "null", wav], environment: ["LD_PRELOAD": probe])
        XCTAssertEqual(played.status, 0, played.stderr)
        XCTAssertFalse(played.stderr.contains("exit handler ran"), played.stderr)

        // A track long enough to be seen playing however slow the build (0.1 s ended before the
        // first status under AddressSanitizer).
        let long = dir + "/long.wav"
        try TestAudio.write(path: long, kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([long], environment: ["LD_PRELOAD": probe])
        kill(daemon.process.processIdentifier, SIGTERM)
        let ended = try XCTUnwrap(daemon.wait(timeout: 10), "still running 10 s after SIGTERM (killed)")
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertFalse(ended.stderr.contains("exit handler ran"), ended.stderr)
    }
}

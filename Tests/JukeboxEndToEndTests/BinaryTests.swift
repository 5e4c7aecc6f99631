// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// The built `jukebox` binary, driven as a person or a service manager would.
final class BinaryTests: ScratchTestCase {

    func testVersionAndHelpOnEverySubcommand() throws {
        let version = try Jukebox.run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("jukebox "), version.stdout)
        let commands = [[], ["play"], ["run"], ["check-config"], ["demo"], ["ctl"], ["yield"], ["source"], ["probe"]]
        let probes = ["tone", "gpio", "i2c", "display", "input", "replay-i2c"].map { ["probe", $0] }
        for sub in commands + probes {
            for flag in ["--help", "-h"] {
                let r = try Jukebox.run(sub + [flag])
                XCTAssertEqual(r.status, 0, "\(sub) \(flag): \(r.stderr)")
                XCTAssertTrue(r.stdout.hasPrefix("Usage: jukebox " + sub.joined(separator: " ")) || sub.isEmpty, "\(sub): \(r.stdout)")
                XCTAssertTrue(r.stdout.contains("Usage"), "\(sub): \(r.stdout)")
                XCTAssertEqual(r.stderr, "", "\(sub)")
            }
        }
    }

    func testUsageErrorsGoToStderrWithExitCodeTwo() throws {
        let cases: [([String], String)] = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["play"], "play needs at least one file"),
            (["play", "--volume", "300", "x.wav"], "--volume must be a whole number from 0 to 100"),
            (["play", "--bogus", "x.wav"], "unknown option --bogus for 'play'"),
            (["run"], "run needs --config FILE"),
            (["play", "--repeat"], "--repeat needs a value"),
        ]
        for (args, message) in cases {
            let r = try Jukebox.run(args)
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", "\(args)")
        }
    }

    func testPlayToARecordingDeviceExitsZeroWithTheSourceAudioBitForBit() throws {
        let a = dir + "/a.wav", b = dir + "/b.flac", out = dir + "/out.raw"
        try TestAudio.write(path: a, kind: .wav16, frames: 22_050)
        try TestAudio.write(path: b, kind: .flac, frames: 30_001)
        // Three short tracks on a device that does not pace: the engine outruns the loop, the case
        // where a successor named late must still follow without a reopen or a lost sample.
        let r = try Jukebox.run(["play", "--device", "file:FILE=\(out),FORMAT=raw", a, b, a], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        let expected = try TestAudio.decode(path: a).bytes + TestAudio.decode(path: b).bytes + TestAudio.decode(path: a).bytes
        XCTAssertEqual(recorded.count, expected.count, "frames recorded vs decoded")
        XCTAssertTrue(recorded.elementsEqual(expected), "recorded audio differs from the decoded source")
    }

    func testPlaySkipsABadFileNamingItAndPlaysTheRest() throws {
        let good = dir + "/good.wav", bad = dir + "/bad.flac", out = dir + "/out.raw"
        try TestAudio.write(path: good, kind: .wav16, frames: 4410)
        FileManager.default.createFile(atPath: bad, contents: Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        let r = try Jukebox.run(["play", "--device", "file:FILE=\(out),FORMAT=raw", bad, good], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("skipped \(bad)"), r.stderr)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertTrue(recorded.elementsEqual(try TestAudio.decode(path: good).bytes))
    }

    func testPlayWithNothingPlayableSaysWhyAndFails() throws {
        let r = try Jukebox.run(["play", "--audio", "null", dir + "/missing.flac"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no such file or folder: \(dir!)/missing.flac"), r.stderr)
        XCTAssertTrue(r.stderr.contains("nothing to play"), r.stderr)
    }

    func testRunKilledWithSIGTERMResumesAtTheSavedPositionNextTime() throws {
        let song = dir + "/song.wav", state = dir + "/state.json", out = dir + "/out.raw"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 4)
        let first = dir + "/first.json", second = dir + "/second.json"
        try #"{"audio": "null", "state": "\#(state)", "music": ["\#(song)"]}"#.write(toFile: first, atomically: true, encoding: .utf8)
        try #"{"device": "file:FILE=\#(out),FORMAT=raw", "state": "\#(state)"}"#.write(toFile: second, atomically: true, encoding: .utf8)

        // First run: plays in real time through the silent output; stopped mid-track.
        let daemon = try Jukebox.start(["run", "--config", first])
        XCTAssertTrue(waitFor(10) { Self.phase(state) == "playing" }, "the first run never saved a playing state")
        Thread.sleep(forTimeInterval: 1.5)  // the scenario needs real playback time, not synchronisation
        let killedAt = Date()
        daemon.process.terminate()
        let stopped = daemon.wait(timeout: 5)
        let stopTime = Date().timeIntervalSince(killedAt)
        XCTAssertEqual(stopped?.status, 0, stopped?.stderr ?? "did not exit")
        XCTAssertLessThan(stopTime, 5, "SIGTERM took too long")
        let saved = try XCTUnwrap(Self.snapshot(state))
        let position = try XCTUnwrap(saved["position"] as? Double)
        XCTAssertGreaterThan(position, 0.5)
        XCTAssertLessThan(position, 3.5)
        XCTAssertEqual(saved["phase"] as? String, "playing")

        // Second run: resumes from the state file through a recording device and plays to the end.
        let resumed = try Jukebox.start(["run", "--config", second])
        XCTAssertTrue(waitFor(20) { Self.phase(state) == "stopped" }, "the second run never reached the end")
        resumed.process.terminate()
        XCTAssertEqual(resumed.wait(timeout: 5)?.status, 0)
        let source = try TestAudio.decode(path: song)
        let startFrame = Int((position * 44_100).rounded())
        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        let expected = source.bytes(frames: startFrame..<source.frames)
        XCTAssertEqual(recorded.count, expected.count, "resumed at frame \(recorded.count / 4) from the end, expected \(expected.count / 4)")
        // A resume mid-track fades in over 15 ms (so it does not click); after that it is the
        // source, bit for bit, from exactly the saved frame.
        let fade = 2048 * 4
        XCTAssertTrue(recorded.dropFirst(fade).elementsEqual(expected.dropFirst(fade)), "resumed audio is not the source from the saved frame")
    }

    func testRunWithADamagedStateFileKeepsItAndStartsFromTheConfiguredMusic() throws {
        let song = dir + "/song.wav", state = dir + "/state.json", config = dir + "/c.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 4410)
        try "{\"version\": 1, \"tracks\": [".write(toFile: state, atomically: true, encoding: .utf8)
        try #"{"audio": "null", "state": "\#(state)", "music": ["\#(song)"]}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config])
        XCTAssertTrue(waitFor(10) { Self.phase(state) != nil }, "no new state written")
        daemon.process.terminate()
        let result = daemon.wait(timeout: 5)
        XCTAssertEqual(result?.status, 0)
        XCTAssertTrue(result?.stderr.contains("is damaged") == true, result?.stderr ?? "")
        XCTAssertEqual(try String(contentsOfFile: state + ".damaged-1", encoding: .utf8), "{\"version\": 1, \"tracks\": [")
    }

    func testYieldReleasesTheDeviceRunsTheCommandAndThePlayerResumes() throws {
        let song = dir + "/song.wav", state = dir + "/state.json", config = dir + "/c.json", socket = dir + "/ctl"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 6)
        try #"{"audio": "null", "state": "\#(state)", "music": ["\#(song)"], "socket": "\#(socket)"}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertTrue(waitFor(10) { Self.phase(state) == "playing" })
        let during = dir + "/during.txt"
        let yield = try Jukebox.run(["yield", "--socket", socket, "--reason", "chime", "--",
                                     "sh", "-c", "\"$0\" ctl --socket \"$1\" status > \"$2\"; exit 3", Jukebox.binary, socket, during])
        XCTAssertEqual(yield.status, 3, "yield exits with the command's status: \(yield.stderr)")
        let seen = try String(contentsOfFile: during, encoding: .utf8)
        XCTAssertTrue(seen.contains("interrupted: chime"), seen)
        let after = try Jukebox.run(["ctl", "--socket", socket, "status"])
        XCTAssertEqual(after.status, 0)
        XCTAssertTrue(after.stdout.hasPrefix("▶ song"), after.stdout)
        let bad = try Jukebox.run(["ctl", "--socket", socket, "interrupt", "end"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("error: no interruption to end"), bad.stderr)
    }

    func testSIGHUPReloadsTheConfigurationWithoutStoppingPlayback() throws {
        let song = dir + "/song.wav", config = dir + "/c.json", socket = dir + "/ctl"
        // Long enough to be still playing after the readings below, each slow under qemu-aarch64.
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        func write(max: Int) throws {
            try #"{"audio": "null", "state": "", "music": ["\#(song)"], "socket": "\#(socket)", "volumeMax": \#(max)}"#
                .write(toFile: config, atomically: true, encoding: .utf8)
        }
        try write(max: 100)
        let daemon = try Jukebox.start(["run", "--config", config])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertTrue(waitFor(10) { (try? Jukebox.run(["ctl", "--socket", socket, "status"]))?.stdout.hasPrefix("▶") == true })
        _ = try Jukebox.run(["ctl", "--socket", socket, "vol", "90"])
        try write(max: 50)
        kill(daemon.process.processIdentifier, SIGHUP)
        // Each `ctl` takes about a second under qemu-aarch64: room for several readings.
        XCTAssertTrue(waitFor(15) { (try? Jukebox.run(["ctl", "--socket", socket, "status"]))?.stdout.contains("vol 50") == true },
                      "the new volume limit did not apply")
        let after = try Jukebox.run(["ctl", "--socket", socket, "status"]).stdout
        XCTAssertTrue(after.hasPrefix("▶ song"), "still playing: \(after)")
        // A broken config on reload keeps the running one.
        try "{not json".write(toFile: config, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        // The whole log (not its last lines, which a track change may have pushed it out of), with
        // the room for readings that qemu-aarch64 needs (above).
        XCTAssertTrue(waitFor(15) { (try? Jukebox.run(["ctl", "--socket", socket, "log", "200"]))?.stdout.contains("keeping the running configuration") == true },
                      "the broken config on reload was not reported")
        XCTAssertTrue(try Jukebox.run(["ctl", "--socket", socket, "status"]).stdout.hasPrefix("▶"))
    }

    func testCtlWithNoPlayerSaysSo() throws {
        let r = try Jukebox.run(["ctl", "--socket", dir + "/none", "status"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("no jukebox answers at \(dir!)/none"), r.stderr)
        let y = try Jukebox.run(["yield", "--socket", dir + "/none", "--", "true"])
        XCTAssertEqual(y.status, 0, "with no player the command still runs")
    }

    func testRunWithABadConfigSaysWhatToFix() throws {
        let config = dir + "/c.json"
        try #"{"saveInterval": 0}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let r = try Jukebox.run(["run", "--config", config])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("saveInterval: must be seconds from 1 to 300"), r.stderr)
    }

    func testRunWithANumberItsKeyCannotHoldOrAnEmptyConfigNamesTheProblem() throws {
        let config = dir + "/c.json"
        for (text, message) in [(#"{"mpd": {"port": 80.5}}"#, "mpd.port: 80.5 is not a whole number"),
                                (#"{"bootVolume": 1e300}"#, "bootVolume: 1e300 is too large for a whole number"),
                                ("", "the config file is empty")] {
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            let r = try Jukebox.run(["run", "--config", config])
            XCTAssertEqual(r.status, 1, text)
            XCTAssertTrue(r.stderr.contains(config + ": " + message), "\(text): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("not valid JSON"), r.stderr)
        }
    }

    /// The saved state: the queue file with its place sidecar laid over it.
    static func snapshot(_ path: String) -> [String: Any]? {
        SavedStateFile.read(path)
    }

    static func phase(_ path: String) -> String? {
        snapshot(path)?["phase"] as? String
    }
}

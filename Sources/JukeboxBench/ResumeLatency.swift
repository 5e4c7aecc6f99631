// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// Time from process start to the first sample when `jukebox run` resumes from a state file.
///
/// The benchmark reads CLOCK_MONOTONIC just before `posix_spawn`; the player, at `--log-level
/// debug`, writes the CLOCK_MONOTONIC instant its engine handed the first frames to the output
/// (`Sources/jukebox/Player.swift`). The device is the test device at real time; the state file
/// (written with the real `StateStore`) holds a 10-track queue, playing, 20 s into the current track,
/// so the figure includes loading the state, opening the device and seeking.
enum ResumeBench {
    /// Seconds from spawn to exit of `jukebox --version`, per run: what starting the process (exec,
    /// dynamic linking of its libraries, runtime set-up) costs before any work of its own.
    static func processFloor(runs: Int, in ws: Workspace) throws -> Samples {
        var times: [Double] = []
        for _ in 0..<runs {
            let child = try ws.start(["--version"])
            let status = child.waitForExit()
            let end = monotonicNow()
            guard status == 0 else { throw BenchError("jukebox --version exited \(status)") }
            times.append(end - child.spawnedAt)
        }
        return Samples(times)
    }

    /// Seconds per run for `format`.
    static func measure(_ format: BenchFormat, runs: Int, in ws: Workspace) throws -> Samples {
        let file = try ws.audio(format, seconds: 30)
        let statePath = ws.path("resume-\(format.rawValue).json")
        let configPath = ws.path("resume-\(format.rawValue).config.json")
        let config = """
        {"device": "\(ws.realTimeDevice)", "state": "\(statePath)", "socket": "", "resume": "playing", "logLevel": "debug"}
        """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        // Ten entries (the same file): the queue a state file usually holds, not just one track.
        let tracks = (1...10).map { (n: Int) in
            TrackInfo(path: file, title: "Track \(n)", artist: "jukebox-bench", album: "Figures", trackNumber: n, duration: 30)
        }
        let snapshot = Snapshot(tracks: tracks, current: 0, position: 20, phase: .playing, volume: 80)
        var latencies: [Double] = []
        for _ in 0..<runs {
            // Every run starts from the same file: the previous run's exit saved its own position.
            do { try StateStore(path: statePath).save(snapshot) } catch { throw BenchError("state file: \(error)") }
            let child = try ws.start(["run", "--config", configPath, "--log-level", "debug"])
            var firstSample: Double?
            let marker = "first sample handed to the output at monotonic "
            let seen = waitFor(10) {
                if let line = child.stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                   let range = line.range(of: marker) {
                    firstSample = Double(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
                }
                return firstSample != nil || child.poll()
            }
            child.send(SIGTERM)
            let status = try child.wait(timeout: 10)
            guard seen, let firstSample else {
                throw BenchError("\(format.label): no first sample (exit \(status)): \(child.stderr.suffix(600))")
            }
            latencies.append(firstSample - child.spawnedAt)
        }
        return Samples(latencies)
    }
}

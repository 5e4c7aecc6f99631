// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// How often the player's threads wake, and its CPU, while playing, paused and stopped.
struct IdleWakeups {
    /// What the player was doing.
    var phase: String
    /// The format of the track it was playing or paused in (nil once stopped).
    var format: BenchFormat?
    /// Context switches of all its threads per second (voluntary + involuntary, from
    /// /proc/PID/task/*/status): each one a wake-up from a sleep or a preemption.
    var wakeupsPerSecond: Double
    /// The same, per thread name (the loop is named like the binary; the engine threads too).
    var perThread: [String: Double]
    /// Of `wakeupsPerSecond`, the involuntary ones (preemptions: the machine's load, not a sleep
    /// of the player's ending).
    var involuntaryPerSecond: Double
    /// CPU seconds (user + system) per minute of wall time.
    var cpuPerMinute: Double
}

enum IdleBench {
    /// `jukebox run` with a control socket on the test device at real time: a track of each of
    /// `formats` playing, then paused, each watched for `seconds`; then stopped. Commands go
    /// through the control socket (one connection each) before each window, never during it.
    static func measure(seconds: Double, formats: [BenchFormat], in ws: Workspace) throws -> [IdleWakeups] {
        let socket = ws.path("idle.sock"), config = ws.path("idle.config.json")
        try """
        {"device": "\(ws.realTimeDevice)", "state": "\(ws.path("idle-state.json"))", "socket": "\(socket)", "releaseDelay": 300}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let child = try ws.start(["run", "--config", config])
        defer {
            child.send(SIGTERM)
            _ = try? child.wait(timeout: 10)
        }
        func command(_ line: String) throws { try controlCommand(line, socket: socket, section: "idle") }
        func window(_ phase: String, _ format: BenchFormat?) -> IdleWakeups {
            usleep(1_000_000)  // let the command's own work (cut, release) finish before the window
            let before = threads(child.pid), cpu0 = child.cpuNow() ?? 0, t0 = monotonicNow()
            usleep(useconds_t(seconds * 1_000_000))  // the window itself
            let after = threads(child.pid), cpu1 = child.cpuNow() ?? 0, wall = monotonicNow() - t0
            var perThread: [String: Double] = [:], involuntary = 0.0
            for (tid, a) in after {
                perThread[a.name, default: 0] += Double(a.switches - (before[tid]?.switches ?? 0)) / wall
                involuntary += Double(a.involuntary - (before[tid]?.involuntary ?? 0)) / wall
            }
            return IdleWakeups(phase: phase, format: format, wakeupsPerSecond: perThread.values.reduce(0, +),
                               perThread: perThread, involuntaryPerSecond: involuntary, cpuPerMinute: (cpu1 - cpu0) / wall * 60)
        }
        var results: [IdleWakeups] = []
        for format in formats {
            let file = try ws.audio(format, seconds: max(60, seconds * 2 + 10))
            try command("clear")
            try command("add \(file)")
            try command("play")
            results.append(window("playing", format))
            try command("pause")
            results.append(window("paused", format))
        }
        try command("stop")
        results.append(window("stopped", nil))
        return results
    }

    /// Context switches so far per thread id (all, and the involuntary ones), with the thread's name.
    static func threads(_ pid: pid_t) -> [String: (name: String, switches: Int, involuntary: Int)] {
        let dir = "/proc/\(pid)/task"
        var out: [String: (name: String, switches: Int, involuntary: Int)] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let text = try? String(contentsOfFile: "\(dir)/\(tid)/status", encoding: .utf8) else { continue }
            var name = "?", switches = 0, involuntary = 0
            for line in text.split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard words.count >= 2 else { continue }
                if words[0] == "Name:" { name = String(words[1]) }
                if words[0] == "voluntary_ctxt_switches:" || words[0] == "nonvoluntary_ctxt_switches:" { switches += Int(words[1]) ?? 0 }
                if words[0] == "nonvoluntary_ctxt_switches:" { involuntary += Int(words[1]) ?? 0 }
            }
            out[tid] = (name, switches, involuntary)
        }
        return out
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxFixtures

/// The environment variables that scale the reliability runs up from their CI defaults
/// (a few minutes on a 2-core machine) to long runs.
enum Knobs {
    /// `JUKEBOX_POWER_CUTS`: SIGKILLs in the power-cut run (default 200).
    static var powerCuts: Int { int("JUKEBOX_POWER_CUTS") ?? 200 }
    /// `JUKEBOX_POWER_CUT_PLAYERS`: players killed in parallel, each with its own state and device (default 5).
    static var powerCutPlayers: Int { max(1, int("JUKEBOX_POWER_CUT_PLAYERS") ?? 5) }
    /// `JUKEBOX_SOAK_HOURS`: hours of audio the soak plays (default 0.25: 45 s of wall time at 20x
    /// if it played all the time; with the random pauses, faults and underruns about 100 s).
    static var soakHours: Double { double("JUKEBOX_SOAK_HOURS") ?? 0.25 }
    /// `JUKEBOX_BUTTON_SOAK_SECONDS`: wall seconds of random GPIO button presses in-process (default 20).
    static var buttonSoakSeconds: Double { double("JUKEBOX_BUTTON_SOAK_SECONDS") ?? 20 }
    /// `JUKEBOX_SOAK_SPEED`: how many times faster than real time the soak's test device consumes
    /// (default 20: faster, and the device's ~160 ms buffer lasts too few wall milliseconds for the
    /// writer thread, so it underruns by itself).
    static var soakSpeed: Double { double("JUKEBOX_SOAK_SPEED") ?? 20 }
    /// `JUKEBOX_STORM_FAULTS`: device faults the fault storm injects in all (default 1000).
    static var stormFaults: Int { max(1, int("JUKEBOX_STORM_FAULTS") ?? 1000) }
    /// `JUKEBOX_STORM_RUNS`: fresh players (one seed each) the storm's faults are spread over (default 4).
    static var stormRuns: Int { max(1, int("JUKEBOX_STORM_RUNS") ?? 4) }
    /// `JUKEBOX_RELIABILITY_SEED`: the random seed (default: from the clock; always printed, so a
    /// failing run can be repeated).
    static var seed: UInt64 {
        if let text = ProcessInfo.processInfo.environment["JUKEBOX_RELIABILITY_SEED"], let s = UInt64(text) { return s }
        return UInt64(Date().timeIntervalSince1970 * 1000)
    }

    private static func int(_ name: String) -> Int? {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }
    }

    private static func double(_ name: String) -> Double? {
        ProcessInfo.processInfo.environment[name].flatMap { Double($0) }
    }
}

/// The core's seeded generator (SplitMix64), so a run is repeatable from its printed seed.
typealias SeededRandom = SeededGenerator

/// What `/proc` says about a process: its own memory and its open file descriptors.
enum ProcessProbe {
    /// RssAnon in KiB (the memory a leak grows; VmRSS swings with the page cache, see
    /// `ProcessMemory`), nil when the process is gone.
    static func anonKiB(_ pid: Int32) -> Int? { ProcessMemory.of(pid)?.anon }

    /// The open descriptors and what they point at (for a report when the count moves).
    /// The descriptors that must not change over a run: all but the track files, which are open
    /// only while a track is decoded (the decoder reads up to a second ahead, so near a track's
    /// end its file is already closed while the track still plays).
    static func lasting(_ fds: [String]) -> [String] {
        let audio = [".wav", ".flac", ".mp3", ".ogg", ".opus", ".aiff"]
        return fds.filter { fd in !audio.contains { fd.hasSuffix($0) } }
    }

    /// The descriptors of `pid` once `lasting` of them number `count`, or as they are after
    /// `timeout`. A save in flight holds its temporary file for milliseconds (a fault soak caught
    /// the bookmarks' `.tmp` open once); a leaked descriptor stays.
    static func fds(_ pid: Int32, settlingTo count: Int?, timeout: Double = 5) -> [String] {
        var seen = fds(pid)
        guard let count else { return seen }
        _ = waitFor(timeout) {
            seen = fds(pid)
            return lasting(seen).count == count
        }
        return seen
    }

    static func fds(_ pid: Int32) -> [String] {
        let dir = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { name in
            name + " → " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + name)) ?? "?")
        }
    }
}

/// Figures for the printed summaries.
enum Figures {
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func format(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// A thousand device faults, one after another, into the real binary playing through the test
/// device at 20x: busy (met at a reopen), unplug, xrun, suspend and stall, each checked to be
/// *noticed* (the counter moved, or the player said it waits) and *recovered* (playing and
/// advancing again within a bound once the fault is gone). No figure here depends on the
/// machine's load except the recovery bound, which is several probe intervals wide.
///
/// Several runs, each a fresh player with its own seed (base seed + run number), so the faults
/// meet the player in different places; `JUKEBOX_RELIABILITY_SEED` replays them. A failure names
/// the seed, the fault and its number, and prints the player's and the device's last events.
final class FaultStormTests: XCTestCase {
    /// Faults by weight: the cheap ones (recovered inside a write) dominate, so a thousand fit in a
    /// few minutes; a stall costs the player's 2 s stall detection each.
    static let weights: [(TestPCM.Fault, Int)] = [(.xrun, 30), (.suspend, 30), (.unplug, 20), (.busy, 17), (.stall, 3)]
    /// Seconds from a fault being cleared to playback advancing again: the first probe comes
    /// 0.125 s after the failure, then every 0.25 s; an open and the first writes follow.
    static let recoveryBound = 3.0

    func testAThousandDeviceFaultsAreEachNoticedAndRecovered() throws {
        let runs = Knobs.stormRuns, total = Knobs.stormFaults
        let base = Knobs.seed
        print("jukebox fault storm: \(total) faults in \(runs) runs, seeds \(base)...\(base + UInt64(runs - 1)) "
              + "(JUKEBOX_RELIABILITY_SEED=\(base) replays them)")
        var all = StormFigures()
        for run in 0..<runs {
            let faults = total / runs + (run < total % runs ? 1 : 0)
            guard let figures = try storm(seed: base + UInt64(run), faults: faults) else { return }
            all.add(figures)
        }
        print("jukebox fault storm: \(all.summary)")
        XCTAssertGreaterThanOrEqual(all.injected.values.reduce(0, +), total)
    }

    /// One player, `faults` faults; nil after a failure (already reported).
    private func storm(seed: UInt64, faults: Int) throws -> StormFigures? {
        var rng = SeededRandom(seed: seed)
        let dir = NSTemporaryDirectory() + "jukebox-storm-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rig = try SoakRig(dir: dir, speed: Knobs.soakSpeed)
        let player = try Binary.run(config: rig.config, home: rig.home, errPath: dir + "/stderr.txt")
        defer { if player.process.isRunning { player.powerCut() } }
        let control = try XCTUnwrap(ControlConnection.waitForPlayer(at: rig.socket, timeout: 15), "the player never answered")
        XCTAssertEqual(control.ask("repeat all")?.last?.hasPrefix("ok"), true)
        _ = control.ask("play")
        let started = Date()
        var figures = StormFigures()

        func fail(_ what: String, _ number: Int, _ kind: TestPCM.Fault) -> StormFigures? {
            let log = control.ask("log 30")?.joined(separator: "\n") ?? "no answer"
            let device = rig.pcm.events().suffix(20).map { "\($0.name) pid=\($0.pid) heard=\($0.heard)" }.joined(separator: "\n")
            XCTFail("""
            seed \(seed), fault \(number + 1) of \(faults) (\(kind.rawValue)): \(what)
            status: \(control.status().map { "\($0)" } ?? "no answer")
            player's last lines:
            \(log)
            device's last events:
            \(device)
            """)
            return nil
        }

        guard advancing(control, within: Self.recoveryBound) != nil else { return fail("not playing at the start", -1, .xrun) }
        for number in 0..<faults {
            let kind = Self.pick(&rng)
            let noticed: Bool
            switch kind {
            case .xrun, .suspend:
                // One-shot: armed by a change of the control file, met by the next write. A reopen
                // in between (a track of another format) disarms it, so re-arm a few times.
                let before = counters(control)
                var seen = false
                for _ in 0..<4 where !seen {
                    try rig.pcm.set([kind])
                    seen = waitFor(1) { counters(control)[kind.rawValue, default: 0] > before[kind.rawValue, default: 0] }
                }
                noticed = seen
            case .unplug:
                try rig.pcm.set([.unplug])
                noticed = waitFor(Self.recoveryBound) { control.status()?.phase == "waiting" }
            case .stall:
                // A stall is a lost device wherever it meets the player: mid-write, while the end of
                // a track plays out, in the drain before a reopen, or at the next open when it came
                // between streams. Within the stall timeout (2 s) of the device standing still, diag
                // counts a stall *and* a loss (the player then waits for the device). The counters
                // decide, not the phase: the wait can be too short to poll (the reopen may play at
                // once). Before the engine watched the play-out, a stall there left it "playing"
                // at the track's end, silent (seed 1796237088622, fault 209).
                let before = counters(control)
                try rig.pcm.set([.stall])
                noticed = waitFor(2 + Self.recoveryBound) {
                    let now = counters(control)
                    return now["stall", default: 0] > before["stall", default: 0]
                        && now["lost", default: 0] > before["lost", default: 0]
                }
            case .busy:
                // Busy is met when the device is opened: release it and come back, as around a
                // phone call, while another program holds it.
                try rig.pcm.set([.busy])
                guard control.ask("interrupt begin storm")?.last?.hasPrefix("ok") == true,
                      control.ask("interrupt end")?.last?.hasPrefix("ok") == true else {
                    return fail("the interruption was refused", number, kind)
                }
                noticed = waitFor(Self.recoveryBound) {
                    guard let s = control.status() else { return false }
                    return s.phase == "waiting" && s.message?.contains("busy") == true
                }
            case .nopause:
                continue
            }
            guard noticed else { return fail("the fault was never noticed", number, kind) }
            let cleared = Date()
            try rig.pcm.clear()
            guard advancing(control, within: Self.recoveryBound) != nil else {
                return fail("not playing and advancing \(Figures.format(Self.recoveryBound, 1)) s after the fault was cleared", number, kind)
            }
            figures.note(kind, recovery: Date().timeIntervalSince(cleared))
            if number == min(50, faults / 5) {
                figures.warm = (ProcessProbe.anonKiB(player.pid) ?? 0, ProcessProbe.fds(player.pid))
            }
        }
        figures.end = (ProcessProbe.anonKiB(player.pid) ?? 0,
                       ProcessProbe.fds(player.pid, settlingTo: figures.warm.map { ProcessProbe.lasting($0.fds).count }))
        figures.wall = Date().timeIntervalSince(started)
        let diag = control.ask("diag")?.first { $0.contains("audio device") }?.trimmingCharacters(in: .whitespaces) ?? "?"
        print("jukebox fault storm: seed \(seed): \(figures.summary); \(diag)")
        XCTAssertEqual(player.stop(timeout: 5), 0, "SIGTERM at the end: \(player.stderr.suffix(2000))")
        let warm = try XCTUnwrap(figures.warm)
        XCTAssertLessThanOrEqual(figures.end.anon - warm.anon, FaultSoakTests.anonToleranceKiB, "seed \(seed): RssAnon grew from \(warm.anon) to \(figures.end.anon) KiB")
        // The same number, track files aside (which one is open, if any, changes with the playback).
        XCTAssertEqual(ProcessProbe.lasting(figures.end.fds).count, ProcessProbe.lasting(warm.fds).count, "seed \(seed): open descriptors changed:\nwarm: \(warm.fds)\nend: \(figures.end.fds)")
        return figures
    }

    static func pick(_ rng: inout SeededRandom) -> TestPCM.Fault {
        var roll = Int.random(in: 0..<weights.reduce(0) { $0 + $1.1 }, using: &rng)
        for (fault, weight) in weights {
            if roll < weight { return fault }
            roll -= weight
        }
        return .xrun
    }

    /// The device's fault counters from `diag` ("audio device jt: xruns 5, suspends 0, … stalls 1, lost 1"),
    /// keyed by the fault's name (and `lost`).
    private func counters(_ control: ControlConnection) -> [String: Int] {
        guard let line = control.ask("diag")?.first(where: { $0.contains("audio device") }) else { return [:] }
        var result: [String: Int] = [:]
        let words = line.replacingOccurrences(of: ",", with: " ").split(separator: " ")
        for (i, word) in words.enumerated().dropLast() {
            guard let n = Int(words[i + 1]) else { continue }
            switch word {
            case "xruns": result["xrun"] = n
            case "suspends": result["suspend"] = n
            case "stalls": result["stall"] = n
            case "lost": result["lost"] = n
            default: break
            }
        }
        return result
    }
}

/// What the storm counts.
struct StormFigures {
    var injected: [String: Int] = [:]
    var longest: [String: Double] = [:]
    var total: [String: Double] = [:]
    var warm: (anon: Int, fds: [String])?
    var end: (anon: Int, fds: [String]) = (0, [])
    var wall = 0.0

    mutating func note(_ kind: TestPCM.Fault, recovery: Double) {
        injected[kind.rawValue, default: 0] += 1
        longest[kind.rawValue] = max(longest[kind.rawValue] ?? 0, recovery)
        total[kind.rawValue, default: 0] += recovery
    }

    mutating func add(_ other: StormFigures) {
        for (k, v) in other.injected { injected[k, default: 0] += v }
        for (k, v) in other.longest { longest[k] = max(longest[k] ?? 0, v) }
        for (k, v) in other.total { total[k, default: 0] += v }
        wall += other.wall
    }

    var summary: String {
        let kinds = injected.keys.sorted().map { k in
            "\(k) \(injected[k]!) (recovered in mean \(Figures.format(total[k]! / Double(injected[k]!), 2)) s, longest \(Figures.format(longest[k]!, 2)) s)"
        }
        var text = "\(injected.values.reduce(0, +)) faults noticed and recovered in \(Figures.format(wall, 0)) s: " + kinds.joined(separator: ", ")
        if let warm { text += "; RssAnon after warm-up \(warm.anon) KiB, end \(end.anon) KiB; fds \(warm.fds.count) → \(end.fds.count)" }
        return text
    }
}

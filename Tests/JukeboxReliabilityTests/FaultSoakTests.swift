// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// Hours of playback compressed by the test device's `speed`, through the real binary, with random
/// device faults (busy, unplug, xrun, suspend, stall) and random input on the control socket and on a
/// serial console (a pty): no crash, no phase that never ends, memory and descriptors flat.
///
/// Why the binary and not an in-process runtime: the binary is what runs on the box, its RSS and
/// descriptors are its own (a test process's are blurred by XCTest and the test's own work), and
/// both text inputs (socket, console) reach it from outside as they do in the field. GPIO buttons
/// cannot reach a separate process here (no uinput, no GPIO chip): `ButtonSoakTests` soaks them
/// in-process, through libgpiod's read path into a `Runtime` with the real audio engine.
final class FaultSoakTests: XCTestCase {
    /// RssAnon may grow this much between the warm-up checkpoint and the end (allocator arenas and
    /// caches settle in steps; a leak of a few hundred bytes per command or fault grows without end
    /// and crosses it in a long run). RssAnon, not VmRSS: VmRSS also counts mapped library pages,
    /// which come and go with the page cache (a 3.1 MiB swing failed CI once; see `ProcessMemory`).
    static let anonToleranceKiB = 3 * 1024

    func testHoursOfPlaybackWithRandomFaultsAndInputNeverCrashOrHangAndStayFlat() throws {
        let seed = Knobs.seed, speed = Knobs.soakSpeed
        // Runs until the device has consumed the planned audio or for three times the ideal wall
        // time (the random input keeps it from playing all the time). How much it consumed depends
        // on the machine's load: printed, never asserted. What is asserted cannot depend on load:
        // every checkpoint finds it playing and advancing soon after the faults are cleared, and
        // memory and descriptors stay flat.
        let audioTarget = Knobs.soakHours * 3600
        let wallSeconds = audioTarget / speed
        var rng = SeededRandom(seed: seed)
        let dir = NSTemporaryDirectory() + "jukebox-soak-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let soak = try SoakRig(dir: dir, speed: speed)

        let player = try Binary.run(config: soak.config, home: soak.home, errPath: dir + "/stderr.txt")
        defer { if player.process.isRunning { player.powerCut() } }
        let control = try XCTUnwrap(ControlConnection.waitForPlayer(at: soak.socket, timeout: 15), "the player never answered")
        XCTAssertEqual(control.ask("repeat all")?.last?.hasPrefix("ok"), true)
        let pid = player.pid
        let started = Date()
        let first = try XCTUnwrap(checkpoint(control, soak, pid: pid, seed: seed), "not playing at the start")
        var figures = SoakFigures(startAnon: first.anon, startFDs: first.fds)
        print("jukebox soak: seed \(seed), speed \(Figures.format(speed, 0))x, \(Figures.format(Knobs.soakHours, 2)) h of audio planned "
              + "(\(Figures.format(wallSeconds, 0)) s of wall time if it played all the time); "
              + "start: RssAnon \(first.anon) KiB, \(first.fds.count) fds")

        var activeFault: (kind: TestPCM.Fault, until: Date)?
        var heldYield: (ControlConnection, until: Date)?
        var nextCheckpoint = Date().addingTimeInterval(5)
        let warmUpAt = Date().addingTimeInterval(max(10, wallSeconds * 0.15))
        var consumed = 0.0
        while consumed < audioTarget && Date().timeIntervalSince(started) < wallSeconds * 3 {
            guard player.process.isRunning else {
                return XCTFail("the player died (status \(player.process.terminationStatus)): \(player.stderr.suffix(2000))")
            }
            soak.console.drain()
            if let s = control.status() { figures.phaseSamples[s.phase, default: 0] += 1 }
            if let f = activeFault, f.until <= Date() {
                try soak.pcm.clear()
                activeFault = nil
            }
            if let y = heldYield, y.until <= Date() { heldYield = nil }  // closing the connection ends its yield
            let roll = Double.random(in: 0..<1, using: &rng)
            if activeFault == nil && roll < 0.06 {
                let kind: TestPCM.Fault = [.busy, .unplug, .xrun, .suspend, .stall].randomElement(using: &rng)!
                try soak.pcm.set([kind])
                // xrun and suspend fire once per change; busy, unplug and stall last until cleared
                // (a stall is noticed after 2 s of nothing consumed).
                let hold = kind == .xrun || kind == .suspend ? 0.2 : Double.random(in: 0.3..<3, using: &rng)
                activeFault = (kind, Date().addingTimeInterval(hold))
                figures.faults[kind.rawValue, default: 0] += 1
            } else if roll < 0.45 {
                let line = SoakInput.command(&rng, folder: soak.folder)
                figures.socketCommands += 1
                if line.allSatisfy({ $0 == " " }) {
                    control.send(line)  // a blank line gets no answer, by design
                } else if control.ask(line, timeout: 5) == nil {
                    XCTFail("no answer to \(line) on the socket")
                    break
                }
            } else if roll < 0.75 {
                soak.console.type(SoakInput.consoleBytes(&rng))
                figures.consoleInputs += 1
            } else if roll < 0.82 {
                // Clients that come and go: a half line then gone, a garbage line, a yield whose
                // holder disappears later.
                figures.freshClients += 1
                if let c = ControlConnection(path: soak.socket) {
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: c.send("sta" + String(repeating: "x", count: Int.random(in: 0...2000, using: &rng)))
                    case 1: _ = c.ask(String(decoding: (0..<40).map { _ in UInt8.random(in: 32...126, using: &rng) }, as: UTF8.self))
                    default:
                        if heldYield == nil, c.ask("yield begin soak", timeout: 5)?.last?.hasPrefix("ok") == true {
                            heldYield = (c, Date().addingTimeInterval(Double.random(in: 0.1..<1, using: &rng)))
                            figures.yields += 1
                        }
                    }
                }
            }
            if Date() >= nextCheckpoint {
                try soak.pcm.clear()
                activeFault = nil
                heldYield = nil
                guard let at = checkpoint(control, soak, pid: pid, seed: seed) else { break }
                figures.checkpoints += 1
                figures.longestRecovery = max(figures.longestRecovery, at.recovery)
                if Date() >= warmUpAt && figures.warmAnon == nil { figures.warmAnon = at.anon; figures.warmFDs = at.fds }
                figures.endAnon = at.anon
                figures.endFDs = at.fds
                consumed = soak.audioSecondsPlayed()
                nextCheckpoint = Date().addingTimeInterval(5)
            }
            usleep(UInt32.random(in: 50_000...600_000, using: &rng))  // a person's (or script's) pace
        }

        // The end: a clean stop, then the figures.
        try soak.pcm.clear()
        if let final = checkpoint(control, soak, pid: pid, seed: seed) {
            figures.checkpoints += 1
            figures.longestRecovery = max(figures.longestRecovery, final.recovery)
            figures.endAnon = final.anon
            figures.endFDs = final.fds
        }
        figures.endFDs = ProcessProbe.fds(pid, settlingTo: figures.warmFDs.map { ProcessProbe.lasting($0).count })
        let device = control.ask("diag")?.first { $0.contains("audio device") }?.trimmingCharacters(in: .whitespaces) ?? "?"
        let wall = Date().timeIntervalSince(started)
        let status = player.stop(timeout: 5)
        let audio = soak.audioSecondsPlayed()
        print("""
        jukebox soak: \(Figures.format(wall, 1)) s wall, \(Figures.format(audio / 3600, 2)) h of audio consumed by the device \
        (\(Figures.format(audio / wall, 1))x); faults injected: \(figures.faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
        \(figures.socketCommands) socket commands, \(figures.consoleInputs) console inputs, \(figures.freshClients) short-lived clients, \(figures.yields) yields
        jukebox soak: phases sampled between inputs: \(figures.phaseSamples.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        jukebox soak: \(figures.checkpoints) checkpoints, longest from faults cleared to playing and advancing \(Figures.format(figures.longestRecovery, 2)) s; \(device)
        jukebox soak: RssAnon start \(figures.startAnon) KiB, after warm-up \(figures.warmAnon ?? -1) KiB, end \(figures.endAnon) KiB; \
        fds start \(figures.startFDs.count), after warm-up \(figures.warmFDs?.count ?? -1), end \(figures.endFDs.count)
        """)
        XCTAssertEqual(status, 0, "SIGTERM at the end: \(player.stderr.suffix(2000))")
        let warmAnon = try XCTUnwrap(figures.warmAnon, "no checkpoint after the warm-up")
        XCTAssertLessThanOrEqual(figures.endAnon - warmAnon, Self.anonToleranceKiB, "RssAnon grew from \(warmAnon) to \(figures.endAnon) KiB")
        XCTAssertEqual(ProcessProbe.lasting(figures.endFDs).count, figures.warmFDs.map { ProcessProbe.lasting($0).count } ?? -1,
                       "open descriptors changed (track files aside):\nwarm: \(figures.warmFDs ?? [])\nend: \(figures.endFDs)")
    }

    /// Clears what the random input may have left (interruptions, an empty queue, a pause or a
    /// stop), asks for play and requires playback to be under way and advancing within a bound:
    /// no phase may last once its cause is gone. Returns RssAnon and descriptors at that moment and
    /// how long playback took to be under way again.
    func checkpoint(_ control: ControlConnection, _ soak: SoakRig, pid: Int32, seed: UInt64) -> (anon: Int, fds: [String], recovery: Double)? {
        let cleared = Date()
        soak.console.type([0x03, 0x0D])  // end a console `events` stream, abandon a half line
        // Overlapping interruptions end one by one; the first refusal says none is left.
        for _ in 0..<20 {
            guard control.ask("interrupt end")?.last?.hasPrefix("ok") == true else { break }
        }
        if control.status()?.repeatMode == "off" { _ = control.ask("repeat all") }
        if control.status()?.count == 0 { _ = control.ask("load " + soak.folder) }
        _ = control.ask("play")
        // Busy and unplug recovery probe at most once a second; 6 s is several probes.
        var under = advancing(control, within: 6)
        // Two stops are the player's right answers, not wedges, and their causes are cleared too,
        // once: a broken current track that is the queue's last (repeat off or one) ends the queue,
        // rewound to its start, so play again; a queue the random input left with broken files only
        // (clear, then `add … bad.flac`) stops with its reason, so load the folder. A player that
        // stops at every play still fails here.
        if under == nil, let s = control.status(), s.phase == "stopped" {
            if s.message == "nothing in the queue can be played" { _ = control.ask("load " + soak.folder) }
            _ = control.ask("play")
            under = advancing(control, within: 6)
        }
        guard under != nil else {
            let diag = control.ask("diag")?.joined(separator: "\n") ?? "no answer"
            let log = control.ask("log 30")?.joined(separator: "\n") ?? ""
            let device = soak.pcm.events().suffix(20).map { "\($0.name) pid=\($0.pid) heard=\($0.heard)" }.joined(separator: "\n")
            XCTFail("seed \(seed) (JUKEBOX_RELIABILITY_SEED=\(seed) replays it): 6 s after the faults were cleared the player is not playing and advancing: "
                    + "\(control.status().map { "\($0)" } ?? "no status")\n\(diag)\nplayer's last lines:\n\(log)\ndevice's last events:\n\(device)")
            return nil
        }
        let recovery = Date().timeIntervalSince(cleared)
        soak.console.drain()
        guard let anon = ProcessProbe.anonKiB(pid) else { return nil }
        return (anon, ProcessProbe.fds(pid), recovery)
    }
}

/// What the soak counts.
struct SoakFigures {
    var startAnon: Int
    var startFDs: [String]
    var warmAnon: Int?
    var warmFDs: [String]?
    var endAnon = 0
    var endFDs: [String] = []
    var faults: [String: Int] = [:]
    var socketCommands = 0, consoleInputs = 0, freshClients = 0, yields = 0
    var checkpoints = 0
    var phaseSamples: [String: Int] = [:]
    var longestRecovery = 0.0

    init(startAnon: Int, startFDs: [String]) {
        self.startAnon = startAnon
        self.startFDs = startFDs
        endAnon = startAnon
        endFDs = startFDs
    }
}

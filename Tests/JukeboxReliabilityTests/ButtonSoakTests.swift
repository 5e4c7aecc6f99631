// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxAudio
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxFixtures
import XCTest

/// The part of the soak the binary cannot take: GPIO buttons. With no GPIO chip and no uinput
/// here, edges reach a loop only in-process, as the kernel's own records through libgpiod's read
/// path (`GPIOEventFeed`). So this runs a `Runtime` with the real audio engine on the fast test
/// device, presses, holds and bounces random buttons (mute included: an interruption while held)
/// with random device faults, and checks that every few seconds playback comes back once the
/// buttons are up and the faults cleared, and that this process's memory and descriptors stay flat.
final class ButtonSoakTests: XCTestCase {
    func testRandomPressesHoldsAndBounceWithDeviceFaultsNeverWedgeThePlayer() throws {
        let seed = Knobs.seed, seconds = Knobs.buttonSoakSeconds
        var rng = SeededRandom(seed: seed)
        let dir = NSTemporaryDirectory() + "jukebox-buttons-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let tracks = try (1...3).map { n -> TrackInfo in
            let path = dir + "/b\(n).wav"
            try TestAudio.write(path: path, kind: .wav16, frames: 8000 * 60, sampleRate: 8000, channels: 1)
            return TrackInfo(path: path, title: "b\(n)", duration: 60)
        }
        let pcm = try TestPCM(directory: dir + "/device", speed: 20)
        let buttons: [Button] = [.play, .next, .previous, .volumeUp, .volumeDown, .stop, .shuffle, .repeatMode, .mute]
        let feed = try GPIOEventFeed(buttons.indices.map { GPIOLineSpec(name: "GPIO\(20 + $0)") })
        let log = Log(level: .error)
        let source = GPIOSource(lines: feed.lines, roles: buttons.map { .button($0) }, log: log)
        let mailbox = Mailbox()
        let engine = AudioEngine(makeOutput: { AlsaOutput(device: pcm.name, configText: pcm.configText) }) { report in
            if let event = AudioWiring.event(for: report) { mailbox.post(event) }
        }
        let socket = dir + "/ctl"
        let seen = SeenStatus()
        let runtime = Runtime(state: State(), audio: engine, store: StateStore(path: dir + "/state.json"), status: seen,
                              log: log, mailbox: mailbox, control: try ControlSocket(path: socket), sources: [source])
        let box = RuntimeBox(runtime), done = DispatchSemaphore(value: 0)
        Thread {
            _ = box.runtime.run(initial: [.replaceQueue(tracks), .setRepeat(.all)])
            done.signal()
        }.start()
        let control = try XCTUnwrap(ControlConnection.waitForPlayer(at: socket, timeout: 10))

        let pid = getpid()
        var presses: [String: Int] = [:], faults: [String: Int] = [:]
        var checkpoints = 0, longest = 0.0
        var warm: (anon: Int, fds: [String])?, end: (anon: Int, fds: [String])?
        let start = (anon: ProcessProbe.anonKiB(pid) ?? 0, fds: ProcessProbe.fds(pid))
        let started = Date()
        var nextCheckpoint = Date().addingTimeInterval(4)
        while Date().timeIntervalSince(started) < seconds {
            if Double.random(in: 0..<1, using: &rng) < 0.1 {
                let kind: TestPCM.Fault = [.busy, .unplug, .xrun, .suspend].randomElement(using: &rng)!
                try pcm.set([kind])
                faults[kind.rawValue, default: 0] += 1
            }
            // A press with contact bounce, held for a tap or past the long-press and hold times.
            let line = Int.random(in: 0..<buttons.count, using: &rng)
            presses[buttons[line].rawValue, default: 0] += 1
            let t = UInt64(monotonicNow() * 1e9)
            let bounce = UInt64.random(in: 200_000...3_000_000, using: &rng)
            try feed.feed([(line, false, t), (line, true, t + bounce / 2), (line, false, t + bounce)])
            let hold = Bool.random(using: &rng) ? Double.random(in: 0.03..<0.2, using: &rng) : Double.random(in: 0.5..<1.6, using: &rng)
            usleep(UInt32(hold * 1e6))  // the finger on the button
            let r = UInt64(monotonicNow() * 1e9)
            try feed.feed([(line, true, r), (line, false, r + bounce / 2), (line, true, r + bounce)])
            if Double.random(in: 0..<1, using: &rng) < 0.3 { try pcm.clear() }
            usleep(UInt32.random(in: 20_000...300_000, using: &rng))  // a person's pace between presses, not synchronisation

            if Date() >= nextCheckpoint || Date().timeIntervalSince(started) >= seconds {
                try pcm.clear()
                let cleared = Date()
                _ = control.ask("play")
                guard advancing(control, within: 6) != nil else {
                    XCTFail("buttons up and faults cleared, yet not playing 6 s later: \(control.status().map { "\($0)" } ?? "no answer")\n"
                            + (control.ask("log 20")?.joined(separator: "\n") ?? ""))
                    break
                }
                checkpoints += 1
                longest = max(longest, Date().timeIntervalSince(cleared))
                let now = (anon: ProcessProbe.anonKiB(pid) ?? 0, fds: ProcessProbe.fds(pid))
                if warm == nil && Date().timeIntervalSince(started) >= seconds * 0.25 { warm = now }
                end = now
                nextCheckpoint = Date().addingTimeInterval(4)
            }
        }
        if let w = warm { end?.fds = ProcessProbe.fds(pid, settlingTo: ProcessProbe.lasting(w.fds).count) }
        mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the loop did not quit")
        feed.closeWriters()
        print("""
        jukebox button soak: seed \(seed), \(Figures.format(Date().timeIntervalSince(started), 1)) s, presses \
        \(presses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
        faults \(faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
        \(checkpoints) checkpoints, longest recovery \(Figures.format(longest, 2)) s
        jukebox button soak (this test process): RssAnon start \(start.anon) KiB, after warm-up \(warm?.anon ?? -1) KiB, end \(end?.anon ?? -1) KiB; \
        fds start \(start.fds.count), after warm-up \(warm?.fds.count ?? -1), end \(end?.fds.count ?? -1)
        """)
        // The presses reached the core (read after the loop ended: no race with it).
        // The volume starts at 100, so up presses alone may change nothing (seed 1796130267849:
        // volumeUp 3, no volumeDown); a down press always does.
        if presses["volumeDown", default: 0] > 0 {
            XCTAssertGreaterThan(seen.volumes.count, 1, "volume presses never changed the volume")
        }
        if presses["mute", default: 0] > 0 { XCTAssertTrue(seen.phases.contains("interrupted"), "mute never interrupted: \(seen.phases)") }
        if presses["shuffle", default: 0] > 0 { XCTAssertEqual(seen.shuffles, [false, true], "shuffle never toggled") }
        let w = try XCTUnwrap(warm, "no checkpoint after the warm-up"), e = try XCTUnwrap(end)
        XCTAssertLessThanOrEqual(e.anon - w.anon, FaultSoakTests.anonToleranceKiB, "RssAnon grew from \(w.anon) to \(e.anon) KiB")
        XCTAssertEqual(ProcessProbe.lasting(e.fds).count, ProcessProbe.lasting(w.fds).count,
                       "descriptors changed (track files aside):\nwarm: \(w.fds)\nend: \(e.fds)")
    }
}

/// What the loop rendered: written on the loop thread, read once the loop has ended.
final class SeenStatus: StatusSink, @unchecked Sendable {
    var volumes: Set<Int> = []
    var phases: Set<String> = []
    var shuffles: Set<Bool> = []

    func render(_ view: StatusView) {
        volumes.insert(view.volume)
        phases.insert(view.phase.rawValue)
        shuffles.insert(view.shuffle)
    }

    func report(_ message: String) {}
}

/// Hands the runtime to the loop thread.
final class RuntimeBox: @unchecked Sendable {
    let runtime: Runtime
    init(_ runtime: Runtime) { self.runtime = runtime }
}

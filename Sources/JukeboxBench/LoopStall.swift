// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxBoard
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import Synchronization

/// How long the runtime loop takes to act on a button edge or a socket command while the state
/// store is slow: a 2,000-track queue playing, every `fsync` of the store slowed to `fsyncDelay`
/// (the store's `beforeSync` test hook sleeps), and all the while saves due: each `next` moves
/// the place, every fourth press comes with a volume change and every tenth with an `add` (a new
/// queue file of ~1.3 MB).
///
/// A real `Runtime` loop with a real `GPIOSource` (edges written into pipes, as the button figure
/// does), a real control socket and the real `StateStore` and writer thread; the audio port only
/// records when it is called. Measured: button release → `play` reaches the port (the loop
/// acted), `status` request → reply (the loop answered), `vol N` sent → `setVolume` reaches the
/// port. A loop that saved on its own thread, as before, would stall each for two fsyncs.
enum LoopStallBench {
    struct Result {
        var fsyncDelay: Double
        var queueLength: Int
        var button: Samples
        var status: Samples
        var volume: Samples
        /// Writes the store finished during the run (two fsyncs each).
        var writes: Int
        var all: Samples { Samples(button.values + status.values + volume.values) }
    }

    static func measure(presses: Int, fsyncDelay: Double, queueLength: Int = 2000, in ws: Workspace) throws -> Result {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO27")])
        let source = GPIOSource(lines: feed.lines, roles: [.button(.next)], log: Log(level: .error))
        let mailbox = Mailbox()
        let folder = ws.path("loop-stall")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let syncs = Atomic<Int>(0)
        var store = StateStore(path: folder + "/state.json")
        store.beforeSync = {
            syncs.add(1, ordering: .relaxed)
            usleep(UInt32(fsyncDelay * 1e6))
        }
        let control = try ControlSocket(path: folder + "/control")
        let audio = StallAudioPort()
        let tracks = (0..<queueLength).map { i in
            TrackInfo(path: "/srv/music/Some Artist/Album \(i / 16)/\(i % 16 + 1) A Song Title Number \(i).flac",
                      title: "A Song Title Number \(i)", artist: "Some Artist", album: "Album \(i / 16)", trackNumber: i % 16 + 1,
                      duration: 225)
        }
        let runtime = Runtime(state: State(), audio: audio, store: store, status: SilentStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control, sources: [source])
        runtime.loadTracks = { paths in (paths.map { TrackInfo(path: $0 + "/1.flac", title: "Added", duration: 225) }, []) }
        let loop = LoopThread(runtime, initial: [.replaceQueue(tracks)])
        defer { loop.quit(waiting: 60) }
        guard waitFor(5, { audio.plays == 1 }) else { throw BenchError("loop stall: the first track never started") }
        let asker = try ControlClient(path: folder + "/control")
        // Changes are answered once saved: these clients send and never wait for the answer.
        let changer = try ControlClient(path: folder + "/control")
        var button: [Double] = [], status: [Double] = [], volume: [Double] = []
        for press in 1...presses {
            let t = UInt64(monotonicNow() * 1e9)
            try feed.feed([(0, false, t)])
            Thread.sleep(forTimeInterval: 0.06)  // a person's press: longer than the debounce, shorter than a hold
            let releasedAt = monotonicNow()
            try feed.feed([(0, true, UInt64(releasedAt * 1e9))])
            guard waitFor(5, { audio.plays == press + 1 }) else { throw BenchError("loop stall: press \(press) did not skip") }
            button.append(audio.lastPlayAt - releasedAt)
            let asked = monotonicNow()
            guard asker.request("status", timeout: 5) != nil else { throw BenchError("loop stall: status not answered") }
            status.append(monotonicNow() - asked)
            if press % 4 == 0 {
                let before = audio.volumes
                let sent = monotonicNow()
                _ = changer.send("vol \(20 + press % 60)")
                guard waitFor(5, { audio.volumes == before + 1 }) else { throw BenchError("loop stall: vol not handled") }
                volume.append(audio.lastVolumeAt - sent)
            }
            if press % 10 == 0 { _ = changer.send("add /srv/more\(press)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return Result(fsyncDelay: fsyncDelay, queueLength: queueLength, button: Samples(button), status: Samples(status),
                      volume: Samples(volume), writes: syncs.load(ordering: .relaxed) / 2)
    }
}

/// Notes when `play` and `setVolume` were called, and reports a position that moves with the
/// clock (so the core's timed position saves happen as while playing).
private final class StallAudioPort: AudioPort, @unchecked Sendable {
    private struct Calls {
        var plays = 0, lastPlayAt = Double.nan, playID: UInt64 = 0, startedAt = 0.0
        var volumes = 0, lastVolumeAt = Double.nan
    }
    private let calls = Mutex(Calls())
    var plays: Int { calls.withLock { $0.plays } }
    var lastPlayAt: Double { calls.withLock { $0.lastPlayAt } }
    var volumes: Int { calls.withLock { $0.volumes } }
    var lastVolumeAt: Double { calls.withLock { $0.lastVolumeAt } }
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        let now = monotonicNow()
        calls.withLock { $0.plays += 1; $0.lastPlayAt = now; $0.playID = id; $0.startedAt = now - seconds }
    }
    func setNext(id: UInt64, path: String) {}
    func clearNext() {}
    func pause() {}
    func resume() {}
    func stop() {}
    func release(token: UInt64) {}
    func probe() {}
    func seek(to seconds: Double) {}
    func setVolume(_ percent: Int) {
        let now = monotonicNow()
        calls.withLock { $0.volumes += 1; $0.lastVolumeAt = now }
    }
    func position() -> (id: UInt64, seconds: Double)? {
        calls.withLock { $0.plays == 0 ? nil : ($0.playID, monotonicNow() - $0.startedAt) }
    }
    func shutdown() {}
}

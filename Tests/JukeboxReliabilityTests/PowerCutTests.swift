// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// Power cuts at the binary level: `jukebox run` players on the test device at real-time pace are
/// SIGKILLed at random moments while a test drives them through the control socket (play, pause,
/// next, previous, seek, volume, shuffle/repeat, queue edits, `save`), and restarted; after each
/// restart the state must load, the queue and current track must be what they were, and the
/// resumed position must be within `saveInterval` of where playback really was.
///
/// "Where it really was" is the player's own `status --json` answer taken just before the kill
/// (the heard frame: written minus the device's delay), moved on by the wall time to the kill when
/// it was playing. "Where it resumed" is the restarted player's `status --json` while its device
/// is held busy, so it waits exactly at the place it loaded (and must be waiting, i.e. resuming
/// playback, when it was playing). Several players run in parallel, each with its own state folder
/// and test device, so 200+ kills fit in a few minutes; half the kills are aimed at a `save` in
/// flight and those that fall inside a write (a temp file left) are counted.
final class PowerCutTests: XCTestCase {
    func testSIGKILLAtRandomMomentsKeepsTheQueueAndLosesAtMostTheSaveInterval() throws {
        let run = try PowerCutRun(name: "powercut", players: PowerCutPlayer.self)
        let (r, errors) = (run.figures, run.figures.positionErrors)
        print("""
        jukebox power cut: seed \(run.seed), \(run.players) players in parallel, \(r.kills) SIGKILLs (\(r.killsDuringSave) with a save in flight, \(r.killsInsideAWrite) left a temp file: inside a write), \
        \(r.restarts) restarts, wall \(Figures.format(run.wall, 1)) s
        jukebox power cut: position lost (truth − resumed) over \(errors.count) kills with a current track: \
        max \(Figures.format(errors.max() ?? .nan)) s, median \(Figures.format(Figures.median(errors))) s, \
        min \(Figures.format(errors.min() ?? .nan)) s; \(r.nearEnd) kills near a track's end not measured; \
        save interval \(PowerCutPlayer.saveInterval) s, resume rewind 0 s
        jukebox power cut: operations before the kills: \(r.operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        """)
        run.assertEveryCutHeld()
        XCTAssertGreaterThan(errors.count, run.cuts / 2, "most kills had a track to measure")
    }
}

/// A player that a power-cut run drives: made from its index, the run's root folder, the shared
/// library, its own seed and the shared results; `run` does its share of the kills.
protocol PowerCutWorker: AnyObject, Sendable {
    init(index: Int, root: String, library: PowerCutLibrary, seed: UInt64, results: PowerCutResults) throws
    func run(cuts: Int)
}

/// A power-cut run as the knobs ask (`Knobs.seed`, `.powerCuts`, `.powerCutPlayers`): players of
/// type `Player` in a fresh `jukebox-<name>-` folder run on threads of their own, each with its
/// share of the kills and its own stream of random choices. The folder is removed afterwards.
struct PowerCutRun {
    let seed: UInt64, cuts: Int, players: Int
    /// The wall time all players took.
    let wall: Double
    let figures: PowerCutResults.Figures

    init<Player: PowerCutWorker>(name: String, players kind: Player.Type) throws {
        seed = Knobs.seed
        cuts = Knobs.powerCuts
        players = min(Knobs.powerCutPlayers, max(1, cuts))
        let root = NSTemporaryDirectory() + "jukebox-\(name)-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let library = try PowerCutLibrary(root: root)
        let results = PowerCutResults()
        let started = Date()
        let done = DispatchGroup()
        for w in 0..<players {
            let share = cuts / players + (w < cuts % players ? 1 : 0)
            let player = try Player(index: w, root: root, library: library, seed: seed &+ UInt64(w) &* 0x9E37_79B9, results: results)
            done.enter()
            Thread {
                player.run(cuts: share)
                done.leave()
            }.start()
        }
        done.wait()
        wall = Date().timeIntervalSince(started)
        figures = results.snapshot()
    }

    /// Fails with what the players found wrong (the first 25 and a count of the rest), and unless
    /// every planned cut happened.
    func assertEveryCutHeld(file: StaticString = #filePath, line: UInt = #line) {
        for failure in figures.failures.prefix(25) { XCTFail(failure, file: file, line: line) }
        if figures.failures.count > 25 { XCTFail("… and \(figures.failures.count - 25) more failures", file: file, line: line) }
        XCTAssertEqual(figures.kills, cuts, "every planned power cut happened", file: file, line: line)
    }
}

/// The music the players queue: four tracks in one folder (the config's `music`) and two more to
/// `add`, 8 kHz mono so five real-time players cost little CPU, 40 s each so most kills land
/// inside a track.
struct PowerCutLibrary: Sendable {
    let folder: String
    let tracks: [String]
    let extras: [String]
    static let seconds = 40.0
    /// How long before a track's end heard the player may already show and save the next one: it
    /// moves on when the next track's first frame is written (gapless), i.e. up to the device's
    /// buffer (`AlsaOutput.bufferMicroseconds`, 1 s) plus a decoded chunk ahead of hearing it (0.68 s
    /// on an idle machine), and the truth is known to `PowerCutPlayer.slack`. A cut in those last
    /// moments loses the rest of the track, less than this; the kills there are counted apart.
    static let endLead = 1.5

    init(root: String) throws {
        let folder = root + "/music"
        self.folder = folder
        let extraFolder = root + "/extra"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: extraFolder, withIntermediateDirectories: true)
        let frames = Int(Self.seconds * 8000)
        let kinds: [(String, TestAudio.Kind)] = [("t1", .wav16), ("t2", .flac), ("t3", .wav16), ("t4", .wav16)]
        tracks = try kinds.map { name, kind in
            let path = "\(folder)/\(name).\(kind.fileExtension)"
            try TestAudio.write(path: path, kind: kind, frames: frames, sampleRate: 8000, channels: 1)
            return path
        }
        extras = try ["x1", "x2"].map { name in
            let path = "\(extraFolder)/\(name).wav"
            try TestAudio.write(path: path, kind: .wav16, frames: frames, sampleRate: 8000, channels: 1)
            return path
        }
    }

    /// What the player shows as the title of a file without tags: its name without the extension.
    static func title(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }
}

/// Everything the parallel players found, collected under a lock.
final class PowerCutResults: @unchecked Sendable {
    struct Figures {
        var kills = 0, killsDuringSave = 0, killsInsideAWrite = 0, restarts = 0, nearEnd = 0, othersChecked = 0
        var positionErrors: [Double] = []
        var operations: [String: Int] = [:]
        var failures: [String] = []
    }

    private let lock = NSLock()
    private var figures = Figures()

    func update(_ change: (inout Figures) -> Void) {
        lock.lock()
        change(&figures)
        lock.unlock()
    }

    func snapshot() -> Figures {
        lock.lock()
        defer { lock.unlock() }
        return figures
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// Power cuts while bookmarks are saved (issue 16 item 4, issue 33): `jukebox run` players on the
/// test device at real-time pace switch between two sources (`load A`, `load B`), seek, pause,
/// skip and `save`, with `saveInterval` 1 s so the place is saved every second while playing (the
/// bookmarks file only at the other saves: a pause, a seek, a new track, another source); each is
/// SIGKILLed at a random moment (half of them with a `save` in flight) and restarted. After every
/// kill the bookmarks file must be readable JSON; after the restart the player's bookmarks
/// (`bookmarks --json`) must hold the source playing or paused when the power went at most
/// `saveInterval` behind where playback really was (the player's own `status --json` just before
/// the kill, moved on by the wall time: the state file's place made its bookmark at start), the
/// other source's bookmark exactly as the file held it, and a `load` of the first (device held
/// busy, so it waits where it resumed) must resume within the same bound. Reuses
/// `PowerCutTests`' rig (`PowerCutLibrary`, `Binary`, `ControlConnection`, `TestPCM`).
final class BookmarkPowerCutTests: XCTestCase {
    func testSIGKILLDuringBookmarkSavesLeavesEveryFileReadableAndLosesAtMostTheSaveInterval() throws {
        let run = try PowerCutRun(name: "bookmarkcut", players: BookmarkCutPlayer.self)
        let (r, errors) = (run.figures, run.figures.positionErrors)
        print("""
        jukebox bookmark power cut: seed \(run.seed), \(run.players) players in parallel, \(r.kills) SIGKILLs (\(r.killsDuringSave) with a save in flight, \
        \(r.killsInsideAWrite) left a bookmarks temp file: inside a write), \(r.restarts) restarts, wall \(Figures.format(run.wall, 1)) s
        jukebox bookmark power cut: bookmark lost (truth − saved) over \(errors.count) kills while a source played or was paused: \
        max \(Figures.format(errors.max() ?? .nan)) s, median \(Figures.format(Figures.median(errors))) s, \
        min \(Figures.format(errors.min() ?? .nan)) s; \(r.nearEnd) kills near a track's end or stopped not measured; \
        save interval \(BookmarkCutPlayer.saveInterval) s; the other source's bookmark checked untouched after \(r.othersChecked) kills
        jukebox bookmark power cut: operations: \(r.operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        """)
        run.assertEveryCutHeld()
        XCTAssertGreaterThan(errors.count, run.cuts / 2, "most kills had a bookmark to measure")
        XCTAssertGreaterThan(r.othersChecked, run.cuts / 2, "most kills had the other source's bookmark to compare")
    }
}

/// One player switching between two sources and killed at random moments.
final class BookmarkCutPlayer: PowerCutWorker, @unchecked Sendable {
    /// The config's `saveInterval` (its minimum): the place is saved every second while playing.
    static let saveInterval = 1.0
    /// The measurement's own error (see `PowerCutPlayer.slack`).
    static let slack = 0.3

    let index: Int
    let library: PowerCutLibrary
    let results: PowerCutResults
    let pcm: TestPCM
    let dir: String, home: String, socket: String, statePath: String, config: String, errPath: String
    /// The two sources: the library's folder and the extras' folder.
    let sources: [String]
    private var rng: SeededRandom
    private var current = 0
    private var player: Binary.Running?
    private var control: ControlConnection?
    private var errOffset = 0
    private var cut = 0
    private var steps: [String] = []

    init(index: Int, root: String, library: PowerCutLibrary, seed: UInt64, results: PowerCutResults) throws {
        self.index = index
        self.library = library
        self.results = results
        rng = SeededRandom(seed: seed)
        sources = [library.folder, (library.extras[0] as NSString).deletingLastPathComponent]
        dir = root + "/b\(index)"
        home = dir + "/home"
        socket = dir + "/ctl"
        statePath = dir + "/state/state.json"
        config = dir + "/config.json"
        errPath = dir + "/stderr.txt"
        pcm = try TestPCM(directory: dir + "/device", speed: 1)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
        pcm_type.jukeboxtest { lib "\(pcm.library)" }
        pcm.jt { type jukeboxtest control "\(pcm.controlPath)" lock "\(pcm.lockPath)" log "\(pcm.logPath)" speed 1 }

        """.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        try """
        {"device": "jt", "state": "\(statePath)", "socket": "\(socket)", "saveInterval": \(Self.saveInterval),
         "resumeRewind": 0, "logLevel": "info", "bookmarks": "always"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    var bookmarksPath: String { statePath + ".bookmarks" }

    func run(cuts: Int) {
        guard start(), let control, ask(control, "load \(sources[0])") else { return fail("the first start and load failed: \(newStderr())") }
        for k in 0..<cuts {
            cut = k
            steps = []
            guard cycle() else { break }
        }
        if let player, player.stop() != 0 { fail("SIGTERM at the end did not exit 0") }
    }

    private func cycle() -> Bool {
        guard let control, let player else { return false }
        for _ in 0..<Int.random(in: 1...3, using: &rng) { operate(control) }
        let pause = Double.random(in: 0..<3, using: &rng)
        steps.append("wait \(Figures.format(pause, 2)) s")
        usleep(UInt32(pause * 1e6))  // the scenario's playing time, not synchronisation

        let asked = monotonic()
        guard let truth = control.status() else { fail("no status before the kill"); return false }
        let answered = monotonic()
        if Bool.random(using: &rng) {
            control.send("save")
            steps.append("save in flight")
            results.update { $0.killsDuringSave += 1 }
        }
        usleep(UInt32.random(in: 0...30_000, using: &rng))  // where in the write the cut lands
        let killedAt = monotonic()
        player.powerCut()
        results.update { $0.kills += 1 }
        let truthPosition = (truth.position ?? 0) + (truth.phase == "playing" ? killedAt - (asked + answered) / 2 : 0)
        // The status was true at some moment between asked and answered, taken as the middle: a
        // loaded machine's slow answer widens the truth by half its round trip.
        let slack = Self.slack + (truth.phase == "playing" ? (answered - asked) / 2 : 0)
        steps.append("killed at \(truth.phase) \(truth.path.map(PowerCutLibrary.title) ?? "-") \(Figures.format(truthPosition, 2)) s")

        let folder = (statePath as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        if names.contains(where: { $0.hasPrefix(".state.json.bookmarks.") && $0.hasSuffix(".tmp") }) {
            results.update { $0.killsInsideAWrite += 1 }
        }
        if names.contains(where: { $0.contains("damaged") }) { fail("a damaged file after the kill: \(names)") }
        guard let marks = Self.bookmarks(bookmarksPath) else { fail("the bookmarks file is not readable after the kill"); return false }
        let measurable = truth.path != nil && (truth.phase == "playing" || truth.phase == "paused")
            && truthPosition < PowerCutLibrary.seconds - PowerCutLibrary.endLead
        let other = sources[1 - current]

        // The restart on a busy device, then a load of the playing source: it waits where it resumed.
        try? pcm.set([.busy])
        guard start(), let again = self.control else { fail("the restart never answered: \(newStderr())"); return false }
        results.update { $0.restarts += 1 }
        if newStderr().contains("bookmarks file") { fail("the restart reported: \(newStderr())") }
        // The bookmarks as the restarted player has them, before anything plays on: the file's,
        // with the state file's place for the source it held.
        guard let live = Self.liveBookmarks(again) else { fail("bookmarks --json after the restart is not a bookmarks list"); return false }
        var lostSaved: Double?
        if measurable, let path = truth.path {
            if let mark = live[sources[current]], mark.track == path {
                lostSaved = truthPosition - mark.position
            } else {
                fail("the bookmark of \(sources[current]) is \(live[sources[current]].map { "\($0.track) \($0.position)" } ?? "absent"), was \(path)")
            }
        }
        // The other source was left before the kill: its bookmark is the file's, untouched.
        if let kept = marks[other] {
            results.update { $0.othersChecked += 1 }
            if let now = live[other], now.track == kept.track, abs(now.position - kept.position) < 0.01 {} else {
                fail("the bookmark of \(other) was \(kept.track) \(kept.position) in the file, is \(live[other].map { "\($0.track) \($0.position)" } ?? "absent") after the restart")
            }
        }
        guard ask(again, "load \(sources[current])"), let after = again.status() else { return false }
        if let lost = lostSaved, let path = truth.path {
            let resumed = after.position ?? -1
            let lostResumed = truthPosition - resumed
            results.update { $0.positionErrors.append(max(lost, lostResumed)) }
            if after.path != path { fail("resumed at \(after.path ?? "none"), was \(path)") }
            for (what, value) in [("saved", lost), ("resumed", lostResumed)]
            where value > Self.saveInterval + slack || value < -slack {
                fail("\(what) bookmark \(Figures.format(value, 2)) s from the truth \(Figures.format(truthPosition, 2)) s (slack \(Figures.format(slack, 2)) s)")
            }
        } else {
            results.update { $0.nearEnd += 1 }
        }
        try? pcm.clear()
        if !waitFor(3, { again.status()?.phase == "playing" }) { fail("still not playing 3 s after the device was freed") }
        return true
    }

    private func operate(_ control: ControlConnection) {
        let r = Double.random(in: 0..<1, using: &rng)
        let line: String, op: String
        if r < 0.35 {
            current = 1 - current
            (op, line) = ("load", "load \(sources[current])")
        } else if r < 0.6 {
            (op, line) = ("seek", "seek 0:\(String(format: "%02d", Int.random(in: 0...30, using: &rng)))")
        } else if r < 0.75 {
            (op, line) = ("toggle", "toggle")
        } else if r < 0.85 {
            (op, line) = ("next", "next")
        } else {
            (op, line) = ("save", "save")
        }
        results.update { $0.operations[op, default: 0] += 1 }
        _ = ask(control, line)
    }

    @discardableResult
    private func ask(_ control: ControlConnection, _ line: String) -> Bool {
        steps.append(line)
        guard let reply = control.ask(line), let last = reply.last, last.hasPrefix("ok") else {
            fail("\(line) was refused or not answered")
            return false
        }
        return true
    }

    /// The bookmarks file, source → (track, position), read with JSONSerialization (not the
    /// product's decoder); nil when it is absent or not a bookmarks file.
    static func bookmarks(_ path: String) -> [String: (track: String, position: Double)]? {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              object["version"] as? Int == 1 else { return nil }
        return marks(object)
    }

    /// The `bookmarks` list of a decoded file or `bookmarks --json` reply, each of one path.
    static func marks(_ object: [String: Any]) -> [String: (track: String, position: Double)]? {
        guard let list = object["bookmarks"] as? [[String: Any]] else { return nil }
        var result: [String: (track: String, position: Double)] = [:]
        for entry in list {
            guard let paths = entry["paths"] as? [String], paths.count == 1, let track = entry["track"] as? String,
                  let position = (entry["position"] as? NSNumber)?.doubleValue else { return nil }
            result[paths[0]] = (track, position)
        }
        return result
    }

    /// `bookmarks --json` of a running player, source → (track, position); nil when it is not a
    /// bookmarks list.
    static func liveBookmarks(_ control: ControlConnection) -> [String: (track: String, position: Double)]? {
        guard let last = control.ask("bookmarks --json")?.last, last.hasPrefix("ok "),
              let object = try? JSONSerialization.jsonObject(with: Data(last.dropFirst(3).utf8)) as? [String: Any] else { return nil }
        return marks(object)
    }

    private func start() -> Bool {
        errOffset = (try? FileManager.default.attributesOfItem(atPath: errPath)[.size] as? Int) ?? 0
        guard let running = try? Binary.run(config: config, home: home, errPath: errPath) else { return false }
        player = running
        control = ControlConnection.waitForPlayer(at: socket, timeout: 15)
        return control != nil
    }

    private func newStderr() -> String {
        guard let data = FileManager.default.contents(atPath: errPath), data.count >= errOffset else { return "" }
        return String(decoding: data.dropFirst(errOffset), as: UTF8.self)
    }

    private func fail(_ message: String) {
        let text = "bookmark power cut player \(index), kill \(cut + 1): \(message)\n    steps: \(steps.joined(separator: "; "))"
        results.update { $0.failures.append(text) }
    }

    private func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

/// One `jukebox run` player with its own state folder, control socket and test device, driven
/// through random operations and SIGKILLed at random moments (see `PowerCutTests`).
final class PowerCutPlayer: PowerCutWorker, @unchecked Sendable {
    /// The config's `saveInterval`: the most position a power cut may cost.
    static let saveInterval = 5.0
    /// What the measurement itself can be off by: the truth is the heard position from a status
    /// answer up to a few ms before the kill, moved on by wall time; the player's loop decides
    /// on a save at its 0.25 s tick, so a save is due up to one tick after the interval.
    static let slack = 0.3

    let index: Int
    let library: PowerCutLibrary
    let results: PowerCutResults
    let pcm: TestPCM
    let dir: String, home: String, socket: String, stateFolder: String, statePath: String, config: String, errPath: String
    private var rng: SeededRandom
    /// The queue (in queue order, not play order) the player must have.
    private var expected: [String]
    private var player: Binary.Running?
    private var control: ControlConnection?
    private var errOffset = 0
    private var cut = 0
    private var steps: [String] = []
    private var lastTemps: Set<String> = []

    init(index: Int, root: String, library: PowerCutLibrary, seed: UInt64, results: PowerCutResults) throws {
        self.index = index
        self.library = library
        self.results = results
        rng = SeededRandom(seed: seed)
        expected = library.tracks
        dir = root + "/p\(index)"
        home = dir + "/home"
        socket = dir + "/ctl"
        stateFolder = dir + "/state"
        statePath = stateFolder + "/state.json"
        config = dir + "/config.json"
        errPath = dir + "/stderr.txt"
        // Real-time pace and no recording (nothing here reads it; five players for minutes would
        // fill the disk for nothing).
        pcm = try TestPCM(directory: dir + "/device", speed: 1)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
        pcm_type.jukeboxtest { lib "\(pcm.library)" }
        pcm.jt { type jukeboxtest control "\(pcm.controlPath)" lock "\(pcm.lockPath)" log "\(pcm.logPath)" speed 1 }

        """.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        try """
        {"device": "jt", "state": "\(statePath)", "music": ["\(library.folder)"], "socket": "\(socket)",
         "saveInterval": \(Self.saveInterval), "resumeRewind": 0, "logLevel": "info"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// Starts the player, then `cuts` times: random operations, a random wait, the truth, a kill,
    /// the checks on the file left behind, a restart and the checks on what it resumed.
    func run(cuts: Int) {
        guard start(), let first = control?.status() else { return fail("the first start never answered: \(newStderr())") }
        if first.count != library.tracks.count || queueTitles() != library.tracks.map(PowerCutLibrary.title) {
            fail("the first start did not queue the configured folder in order: \(queueTitles() ?? [])")
        }
        for k in 0..<cuts {
            cut = k
            steps = []
            guard cycle() else { break }
        }
        if let player {
            let status = player.stop()
            if status != 0 { fail("SIGTERM at the end: exit \(status.map(String.init) ?? "none (killed after 10 s)")") }
        }
    }

    // One power cut and its restart; false when the player cannot go on.
    private func cycle() -> Bool {
        guard let control, let player else { return false }
        for _ in 0..<Int.random(in: 1...4, using: &rng) { operate(control) }
        // How long it plays on before the cut: mostly short, a fifth across a save interval.
        let r = Double.random(in: 0..<1, using: &rng)
        let pause = r < 0.4 ? Double.random(in: 0..<1, using: &rng)
            : r < 0.8 ? Double.random(in: 1..<5, using: &rng) : Double.random(in: 5..<8, using: &rng)
        steps.append("wait \(Figures.format(pause, 2)) s")
        usleep(UInt32(pause * 1e6))  // the scenario's playing time, not synchronisation

        let asked = monotonic()
        guard let truth = control.status() else { fail("no status before the kill"); return false }
        let answered = monotonic()
        var volumes = [truth.volume]
        let flight = Double.random(in: 0..<1, using: &rng)
        if flight < 0.5 {
            control.send("save")
            steps.append("save in flight")
            results.update { $0.killsDuringSave += 1 }
        } else if flight < 0.7 {
            let v = Int.random(in: 0...100, using: &rng)
            control.send("vol \(v)")
            volumes.append(v)
            steps.append("vol \(v) in flight")
        }
        usleep(UInt32.random(in: 0...30_000, using: &rng))  // where in the save the cut lands
        let killedAt = monotonic()
        player.powerCut()
        results.update { $0.kills += 1 }
        let truthPosition = (truth.position ?? 0) + (truth.phase == "playing" ? killedAt - (asked + answered) / 2 : 0)
        // The status was true at some moment between asked and answered, taken as the middle: a
        // loaded machine's slow answer widens the truth by half its round trip.
        let slack = Self.slack + (truth.phase == "playing" ? (answered - asked) / 2 : 0)
        steps.append("killed at \(truth.phase) \(truth.path.map(PowerCutLibrary.title) ?? "-") \(Figures.format(truthPosition, 2)) s")

        // The file the cut left behind; a temp file means the cut fell inside a save's write.
        // (Counted once: a leftover stays until the next save replaces it.)
        for temp in [statePath + ".tmp", statePath + ".place.tmp"] {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: temp) else { continue }
            let stamp = "\(temp) \(attributes[.systemFileNumber] ?? 0) \(attributes[.modificationDate] ?? 0)"
            if !lastTemps.contains(stamp) { results.update { $0.killsInsideAWrite += 1 } }
            lastTemps.insert(stamp)
        }
        let damaged = ((try? FileManager.default.contentsOfDirectory(atPath: stateFolder)) ?? []).filter { $0.contains("damaged") }
        if !damaged.isEmpty { fail("the power cut left a damaged state file: \(damaged)") }
        // The queue and the modes, as the files left say (the queue file and its place sidecar);
        // the position is checked below through the restarted player.
        guard let saved = SavedState(path: statePath) else { fail("no readable state file after the kill"); return false }
        if saved.tracks != expected {
            fail("saved queue \(saved.tracks.map(PowerCutLibrary.title)) is not \(expected.map(PowerCutLibrary.title))")
        }
        if !volumes.contains(saved.volume) { fail("saved volume \(saved.volume), expected one of \(volumes)") }
        if saved.shuffle != truth.shuffle || saved.repeatMode != truth.repeatMode {
            fail("saved shuffle \(saved.shuffle) repeat \(saved.repeatMode), was \(truth.shuffle) \(truth.repeatMode)")
        }

        // The restart, on a busy device: a player that resumes playing waits for it at exactly the
        // position it loaded, so what it shows is what it resumed, not that plus some playing.
        try? pcm.set([.busy])
        guard start(), let again = self.control, let after = again.status() else {
            fail("the restart never answered: \(newStderr())")
            return false
        }
        results.update { $0.restarts += 1 }
        let log = newStderr()
        if log.contains("damaged") || log.contains("cannot read state") { fail("the restart reported: \(log)") }
        // An empty saved queue means the config's music is loaded again.
        let wasEmpty = expected.isEmpty
        if wasEmpty { expected = library.tracks }
        if after.count != expected.count || queueTitles() != expected.map(PowerCutLibrary.title) {
            fail("resumed queue \(queueTitles() ?? []) is not \(expected.map(PowerCutLibrary.title))")
        }
        if !volumes.contains(after.volume) || after.shuffle != truth.shuffle || after.repeatMode != truth.repeatMode {
            fail("resumed vol \(after.volume) shuffle \(after.shuffle) repeat \(after.repeatMode), was \(volumes) \(truth.shuffle) \(truth.repeatMode)")
        }
        let nearEnd = truth.path != nil && truthPosition > PowerCutLibrary.seconds - PowerCutLibrary.endLead
        if nearEnd {
            results.update { $0.nearEnd += 1 }
        } else if let path = truth.path, !wasEmpty {
            // The track may have ended (and the next begun) between the status and the kill only
            // near its end; anywhere else the current track and phase are what the status said.
            if after.path != path { fail("resumed at \(after.path ?? "none"), was \(path)") }
            // Playing until the engine's open of the busy device has failed, then waiting; either
            // way nothing is heard, so the position is the one loaded.
            let phases = truth.phase == "playing" ? ["playing", "waiting"] : [truth.phase]
            if !phases.contains(after.phase) { fail("resumed \(after.phase), was \(truth.phase)") }
            let resumed = after.position ?? -1
            let lost = truthPosition - resumed
            results.update { $0.positionErrors.append(lost) }
            if lost > Self.saveInterval + slack || lost < -slack {
                fail("resumed at \(Figures.format(resumed, 2)) s, \(Figures.format(lost, 2)) s from the truth \(Figures.format(truthPosition, 2)) s (slack \(Figures.format(slack, 2)) s)")
            }
        }
        try? pcm.clear()
        if after.phase == "waiting" || after.phase == "playing" {
            // The retry (at most a second apart) takes the freed device and plays on.
            if !waitFor(3, { again.status()?.phase == "playing" }) { fail("still not playing 3 s after the device was freed") }
        }
        return true
    }

    // One random operation, with the queue model kept in step.
    private func operate(_ control: ControlConnection) {
        let ops: [(String, Int)] = [("play", 10), ("pause", 8), ("toggle", 4), ("stop", 3), ("next", 10), ("prev", 8),
                                    ("seek", 12), ("vol", 8), ("shuffle", 6), ("repeat", 5), ("add", 5), ("save", 8),
                                    ("clear", 2), ("load", 3)]
        var pick = Int.random(in: 0..<ops.reduce(0) { $0 + $1.1 }, using: &rng)
        var op = ops[0].0
        for (name, weight) in ops {
            if pick < weight { op = name; break }
            pick -= weight
        }
        if expected.isEmpty && Bool.random(using: &rng) { op = "load" }
        let line: String
        switch op {
        case "seek": line = "seek 0:\(String(format: "%02d", Int.random(in: 0...30, using: &rng)))"
        case "vol": line = "vol \(Int.random(in: 0...100, using: &rng))"
        case "shuffle": line = "shuffle " + (Bool.random(using: &rng) ? "on" : "off")
        case "repeat": line = "repeat " + ["off", "one", "all"].randomElement(using: &rng)!
        case "add": line = "add " + library.extras.randomElement(using: &rng)!
        case "load": line = "load " + library.folder
        default: line = op
        }
        steps.append(line)
        results.update { $0.operations[op, default: 0] += 1 }
        guard let reply = control.ask(line), let last = reply.last, last.hasPrefix("ok") else {
            return fail("\(line) was refused or not answered")
        }
        switch op {
        case "add": expected.append(String(line.dropFirst(4)))
        case "load": expected = library.tracks
        case "clear": expected = []
        default: break
        }
    }

    private func start() -> Bool {
        errOffset = (try? FileManager.default.attributesOfItem(atPath: errPath)[.size] as? Int) ?? 0
        guard let running = try? Binary.run(config: config, home: home, errPath: errPath) else { return false }
        player = running
        control = ControlConnection.waitForPlayer(at: socket, timeout: 15)
        return control != nil
    }

    // What the current run wrote to stderr.
    private func newStderr() -> String {
        guard let data = FileManager.default.contents(atPath: errPath), data.count >= errOffset else { return "" }
        return String(decoding: data.dropFirst(errOffset), as: UTF8.self)
    }

    // The titles of the running player's queue, in queue order, from `queue` pages.
    private func queueTitles() -> [String]? {
        var titles: [String] = []
        var page = 1
        while let reply = control?.ask("queue \(page)"), let last = reply.last, last.hasPrefix("ok queue page") {
            for line in reply.dropLast() {
                var entry = Substring(line.trimmingCharacters(in: .whitespaces))
                if entry.hasPrefix("> ") { entry = entry.dropFirst(2) }
                guard let dot = entry.range(of: ". ") else { continue }
                let rest = entry[dot.upperBound...]
                titles.append(String(rest.range(of: "  ").map { rest[..<$0.lowerBound] } ?? rest))
            }
            // "ok queue page 1/2, 25 tracks"
            let pages = last.split(separator: "/").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 1
            if page >= pages { return titles }
            page += 1
        }
        return titles.isEmpty && expected.isEmpty ? [] : nil
    }

    private func fail(_ message: String) {
        let text = "power cut player \(index), kill \(cut + 1): \(message)\n    steps: \(steps.joined(separator: "; "))"
        results.update { $0.failures.append(text) }
    }

    private func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

/// The fields of the state file the checks compare: the queue and the modes (read with
/// JSONSerialization, not with the product's own decoder, so the test does not share its bugs).
struct SavedState {
    var tracks: [String]
    var volume: Int
    var shuffle: Bool
    var repeatMode: String

    /// The queue file with its place sidecar laid over it (`SavedStateFile`).
    init?(path: String) {
        guard let json = SavedStateFile.read(path), let tracks = json["tracks"] as? [[String: Any]] else { return nil }
        self.tracks = tracks.compactMap { $0["path"] as? String }
        volume = json["volume"] as? Int ?? -1
        shuffle = json["shuffle"] as? Bool ?? false
        repeatMode = json["repeat"] as? String ?? ""
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxSystem

/// `jukebox run`'s memory while playing (issue 33, target 3), without faces and with the MPD
/// listener, the MQTT face and the web app on, each with a client: one run of the service on one
/// device, every format played in turn as a box plays them over a day.
struct FacesRSS {
    /// The highest sample while one format played (after its settling time), in KiB.
    struct FormatPeak {
        var format: BenchFormat
        var rssKiB: Int, anonKiB: Int
    }
    /// The ALSA PCM, and what kind of path it stands for.
    var device: String, deviceKind: String
    /// Which faces were on.
    var faces: FaceSet
    var formats: [FormatPeak]
    /// The highest VmRSS sample of the whole run (what `rssRunFaces` compares), with RssAnon and
    /// the thread count at that sample.
    var maxRssKiB: Int, anonAtMaxKiB: Int, threadsAtMax: Int
    /// Pss_Anon at that sample (KiB, from /proc/PID/smaps_rollup: smaps prints it only there).
    var pssAnonAtMaxKiB: Int
    /// /proc/PID/smaps at that sample, by mapping (nil if it could not be read).
    var smaps: SmapsSummary?
    /// The web app's own process (`jukebox web`, a process of its own on a box too): its highest
    /// VmRSS and RssAnon samples, KiB; nil without the web app.
    var webMaxRssKiB: Int?, webAnonKiB: Int?
    /// What the clients saw, to show the faces were live: MPD `idle` answers, the event stream's
    /// `status` events, MQTT messages `mosquitto_sub` received from the player's topic.
    var clients: [String: Int]
}

/// The faces a run turns on: the MPD listener, the MQTT face, the web app.
struct FaceSet: Equatable {
    var mpd = false, mqtt = false, web = false

    static let none = FaceSet()
    static let mpdAndWeb = FaceSet(mpd: true, web: true)
    static let all = FaceSet(mpd: true, mqtt: true, web: true)

    /// "MPD+MQTT+web", "no faces".
    var label: String {
        var names: [String] = []
        if mpd { names.append("MPD") }
        if mqtt { names.append("MQTT") }
        if web { names.append("web") }
        return names.isEmpty ? "no faces" : names.joined(separator: "+")
    }
}

enum FacesBench {
    /// The topic the bench's MQTT face publishes under.
    static let topic = "jukebox/bench"

    /// One run per device in `devices` and per set of faces in `sets`: `jukebox run`, then each
    /// format's track for `settle` + `window` seconds, VmRSS sampled every 50 ms in the window.
    /// Without mosquitto a set's MQTT is left out (the run's label says so).
    static func measure(devices: [(name: String, kind: String)], sets: [FaceSet], settle: Double, window: Double,
                        in ws: Workspace) throws -> [FacesRSS] {
        let assetsDir = Workspace.sourceTree + "/Sources/JukeboxWeb/Assets"
        var files: [(BenchFormat, String)] = []
        for format in BenchFormat.allCases { files.append((format, try ws.audio(format, seconds: 60))) }
        let broker = try BenchBroker(in: ws)
        defer { broker?.stop() }
        var out: [FacesRSS] = []
        var runIndex = 0
        for device in devices {
            for wanted in sets {
                runIndex += 1
                var faces = wanted
                faces.mqtt = wanted.mqtt && broker != nil
                out.append(try run(device: device, faces: faces, broker: broker, files: files, assets: assetsDir,
                                   settle: settle, window: window, tag: "faces\(runIndex)", in: ws))
            }
        }
        return out
    }

    private static func run(device: (name: String, kind: String), faces: FaceSet, broker: BenchBroker?, files: [(BenchFormat, String)],
                            assets: String, settle: Double, window: Double, tag: String, in ws: Workspace) throws -> FacesRSS {
        let folder = ws.path(tag)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let socket = folder + "/control.sock", config = folder + "/config.json"
        let mpdPort = try IcecastServer.freePort()
        var parts: [String] = [
            "\"device\": \"\(device.name)\"", "\"state\": \"\(folder)/state.json\"", "\"socket\": \"\(socket)\"", "\"releaseDelay\": 300",
        ]
        if faces.mpd { parts.append("\"mpd\": {\"bind\": \"127.0.0.1\", \"port\": \(mpdPort)}") }
        if faces.mqtt, let broker {
            parts.append("\"mqtt\": {\"host\": \"127.0.0.1\", \"port\": \(broker.port), \"topic\": \"\(topic)\"}")
        }
        try ("{" + parts.joined(separator: ", ") + "}\n").write(toFile: config, atomically: true, encoding: .utf8)
        let tied = ChildDeath.command(ws.binary, ["run", "--config", config])
        let player = try Child(binary: tied.executable, args: tied.arguments, environment: ["HOME": ws.home], outputBase: folder + "/player")
        defer { player.send(SIGTERM); _ = try? player.wait(timeout: 10) }
        func command(_ line: String) throws { try controlCommand(line, socket: socket, section: "faces") }
        try command("status")

        var web: Child?, mpd: MPDIdleClient?, events: WebEventsClient?, subscriber: Child?
        defer {
            for c in [web, subscriber].compactMap({ $0 }) { c.send(SIGTERM); _ = try? c.wait(timeout: 10) }
        }
        if faces.mpd { mpd = try MPDIdleClient(port: mpdPort) }
        if faces.web {
            try FileManager.default.createDirectory(atPath: folder + "/web-state", withIntermediateDirectories: true)
            let webCommand = ChildDeath.command(ws.binary, ["web", "--socket", socket, "--assets", assets, "--listen", "127.0.0.1:0",
                                                            "--state", folder + "/web-state"])
            let w = try Child(binary: webCommand.executable, args: webCommand.arguments, environment: ["HOME": ws.home], outputBase: folder + "/web")
            web = w
            var port = 0
            _ = waitFor(10) {
                let text = (try? String(contentsOfFile: w.outPath, encoding: .utf8)) ?? ""
                guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("web: listening on http://127.0.0.1:") }) else { return false }
                port = Int(line.dropFirst("web: listening on http://127.0.0.1:".count).prefix { $0.isNumber }) ?? 0
                return port > 0
            }
            guard port > 0 else { throw BenchError("faces: jukebox web did not say where it listens: \(w.stderr.suffix(400))") }
            events = try WebEventsClient(port: port)
        }
        if faces.mqtt, let broker, FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub") {
            let sub = ChildDeath.command("/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic + "/#", "-v"])
            subscriber = try Child(binary: sub.executable, args: sub.arguments, environment: [:], outputBase: folder + "/mqtt-sub")
        }

        var peaks: [FacesRSS.FormatPeak] = []
        var maxRss = 0, anonAtMax = 0, threadsAtMax = 0, pssAnonAtMax = 0, smapsAtMax: String?
        var webMax = 0, webAnon = 0
        for (format, file) in files {
            try command("clear")
            try command("add \(file)")
            try command("play")
            var peak = FacesRSS.FormatPeak(format: format, rssKiB: 0, anonKiB: 0)
            let start = monotonicNow()
            while monotonicNow() - start < settle + window {
                try mpd?.poll()
                events?.poll()
                if monotonicNow() - start >= settle, let m = player.memory() {
                    if m.rss > peak.rssKiB { peak = .init(format: format, rssKiB: m.rss, anonKiB: m.anon) }
                    if m.rss > maxRss {
                        maxRss = m.rss
                        anonAtMax = m.anon
                        threadsAtMax = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(player.pid)/task").count) ?? 0
                        smapsAtMax = procText("/proc/\(player.pid)/smaps")
                        // The rollup is one smaps block: the same reader sums its Pss_Anon.
                        pssAnonAtMax = procText("/proc/\(player.pid)/smaps_rollup").map { SmapsSummary.parse($0).pssAnon } ?? 0
                    }
                    if let w = web?.memory(), w.rss > webMax { webMax = w.rss; webAnon = w.anon }
                }
                usleep(50_000)  // the sampling period, not a wait for anything
            }
            guard !player.poll() else { throw BenchError("faces: the player exited \(player.status ?? -1): \(player.stderr.suffix(600))") }
            peaks.append(peak)
        }
        try command("stop")
        var clients: [String: Int] = [:]
        if let mpd { clients["mpdIdleAnswers"] = mpd.changes }
        if let events { events.poll(); clients["webStatusEvents"] = events.statusEvents }
        if let subscriber {
            let lines = ((try? String(contentsOfFile: subscriber.outPath, encoding: .utf8)) ?? "").split(separator: "\n")
            clients["mqttMessages"] = lines.count
        }
        return FacesRSS(device: device.name, deviceKind: device.kind, faces: faces, formats: peaks, maxRssKiB: maxRss,
                        anonAtMaxKiB: anonAtMax, threadsAtMax: threadsAtMax, pssAnonAtMaxKiB: pssAnonAtMax, smaps: smapsAtMax.map(SmapsSummary.parse),
                        webMaxRssKiB: faces.web ? webMax : nil, webAnonKiB: faces.web ? webAnon : nil, clients: clients)
    }

    /// The whole text of a /proc file (whose size reads as 0; `String(contentsOfFile:)` has
    /// stopped at a page of one), nil once the process is gone.
    static func procText(_ path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let data = try? file.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

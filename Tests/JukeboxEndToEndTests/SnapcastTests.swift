// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// jukebox → snapserver → snapclient on 127.0.0.1, all real (Debian's snapserver and snapclient):
/// jukebox plays into snapserver's pipe source (`"output": {"type": "snapcast"}`), snapclient
/// plays into an ALSA `file` PCM (over the test device, which keeps real time as a card would),
/// and the recording is compared with the decoded tracks. snapserver runs
/// `jukebox snapcast-control` as the stream's controlscript; its JSON-RPC port is the clients'.
/// Skipped where snapserver or snapclient is not installed (board/setup.sh installs both).
final class SnapcastTests: DaemonTestCase {
    var server: Process?
    var client: Process?
    var daemon: Jukebox.Running?
    var controlPort = 0
    var pcm: TestPCM!
    var fifo: String { dir + "/fifo" }
    var clientRecording: String { dir + "/client.raw" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        for program in ["/usr/bin/snapserver", "/usr/bin/snapclient"] where !FileManager.default.isExecutableFile(atPath: program) {
            throw missingPeer("no \(program): board/setup.sh installs snapserver and snapclient")
        }
    }

    override func tearDown() {
        stopAll()
        super.tearDown()
    }

    func log(_ name: String) -> String { (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "" }

    /// snapserver with one pipe stream "jukebox" (its controlscript: this binary under the name
    /// snapcast-control), then snapclient recording what it plays. Ports are free ones, tried again
    /// when taken meanwhile.
    func startSnapcast(codec: String, sampleFormat: String = "44100:16:2", bufferMs: Int = 400, device: String = "pcm",
                       withClient: Bool = true) throws {
        let script = dir + "/snapcast-control"
        if !FileManager.default.fileExists(atPath: script) {
            try FileManager.default.createSymbolicLink(atPath: script, withDestinationPath: Jukebox.binary)
        }
        var streamPort = 0
        for attempt in 0..<3 {
            streamPort = try MPDWire.freePort()
            controlPort = try MPDWire.freePort()
            let config = """
            [server]
            datadir = \(dir!)
            [http]
            enabled = false
            [tcp]
            bind_to_address = 127.0.0.1
            port = \(controlPort)
            [stream]
            bind_to_address = 127.0.0.1
            port = \(streamPort)
            buffer = \(bufferMs)
            source = pipe://\(fifo)?name=jukebox&sampleformat=\(sampleFormat)&codec=\(codec)&controlscript=\(script)
            [logging]
            sink = file:\(dir!)/server.log
            filter = *:info

            """
            try config.write(toFile: dir + "/snapserver.conf", atomically: true, encoding: .utf8)
            let p = Process()
            // Before other work, as on a box of its own: a reader late by 50 ms resynchronises the
            // stream (a gap). nice(1) runs it at the usual priority where it may not raise it.
            p.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
            p.arguments = ["-n", "-10", "/usr/bin/snapserver", "-c", dir + "/snapserver.conf"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            p.standardInput = FileHandle.nullDevice
            var env = ProcessInfo.processInfo.environment
            env["JUKEBOX_SOCKET"] = socket  // what the controlscript it starts follows
            p.environment = env
            try p.run()
            server = p
            if waitFor(5, { (try? MPDWire(port: self.controlPort, timeout: 1)) != nil && (try? MPDWire(port: streamPort, timeout: 1)) != nil }) {
                break
            }
            RealMPD.stop(p)
            server = nil
            if attempt == 2 { throw NSError(domain: "snapcast", code: 1, userInfo: [NSLocalizedDescriptionKey: "snapserver did not start: \(log("server.log"))"]) }
        }
        guard withClient else { return }
        // The client's card: the ALSA file plugin (the recording) over the test device (real time).
        pcm = try TestPCM(directory: dir + "/" + device)
        let home = dir + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try (pcm.configText + """
        pcm.snaprec {
            type file
            slave.pcm "\(pcm.name)"
            file "\(clientRecording)"
            format "raw"
        }

        """).write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        let c = Process()
        c.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
        // A 200 ms device buffer (snapclient's 80 ms underruns on a loaded machine, and an underrun
        // makes it resynchronise, dropping frames); no mixer, so nothing scales the samples.
        c.arguments = ["-n", "-10", "/usr/bin/snapclient", "-h", "127.0.0.1", "-p", String(streamPort), "-s", "snaprec", "--player", "alsa:buffer_time=200,fragments=4",
                       "--mixer", "none", "--hostID", "jukebox-test", "--logsink", "file:\(dir!)/client.log"]
        c.standardOutput = FileHandle.nullDevice
        c.standardError = FileHandle.nullDevice
        c.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = home
        env.removeValue(forKey: "ALSA_CONFIG_PATH")
        c.environment = env
        try c.run()
        client = c
        // It opens the device once it has the stream's header: the file plugin makes the file then.
        XCTAssertTrue(waitFor(5) { FileManager.default.fileExists(atPath: self.clientRecording) },
                      "snapclient never opened its device: \(log("client.log"))")
    }

    /// jukebox playing into the stream, paused at the start unless `playing`.
    func startJukebox(_ music: [String], sampleFormat: String = "44100:16:2", playing: Bool) throws {
        let config = dir + "/jukebox.json"
        let object: [String: Any] = ["output": ["type": "snapcast", "pipe": fifo, "sampleFormat": sampleFormat], "state": "",
                                     "music": music, "socket": socket as String, "resume": playing ? "playing" : "paused"]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        daemon = try Jukebox.start(["run", "--config", config])
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status"))?.stdout.isEmpty == false }, "jukebox did not start")
    }

    /// Where `needle` first occurs in `haystack`, from `from`.
    static func find(_ needle: ArraySlice<UInt8>, in haystack: [UInt8], from: Int = 0) -> Int? {
        guard !needle.isEmpty, haystack.count - from >= needle.count else { return nil }
        let n = Array(needle)
        return haystack.withUnsafeBufferPointer { h in
            n.withUnsafeBufferPointer { n in
                var i = from
                while i <= h.count - n.count {
                    if h[i] == n[0] && memcmp(h.baseAddress! + i, n.baseAddress!, n.count) == 0 { return i }
                    i += 1
                }
                return nil
            }
        }
    }

    /// Two tracks cut from one signal (A's end is B's start) play A then B; snapclient's recording
    /// holds decode(A) + decode(B) byte for byte, with silence before and after, for the PCM and
    /// FLAC codecs (both lossless). The time from `play` to the client playing the first frame is
    /// printed (the test device's clock). snapserver reads the pipe on a timer; when its thread
    /// runs more than 50 ms late (a loaded machine: CI) it resynchronises the stream and the
    /// clients hear a gap, which it logs ("onResync"): such a run is run again (up to 3 times); a
    /// difference without it fails at once.
    func testTheClientPlaysWhatJukeboxPlaysBitExactAndGaplessAcrossATrackBoundary() throws {
        let a = dir + "/a.flac", b = dir + "/b.wav"
        // From frame 101: the signal is not zero at the first frame, so the start is unambiguous.
        try TestAudio.write(path: a, kind: .flac, frames: 40_011, startFrame: 101)
        try TestAudio.write(path: b, kind: .wav16, frames: 30_021, startFrame: 40_112)
        let expected = try TestAudio.decode(path: a).bytes + TestAudio.decode(path: b).bytes
        for codec in ["pcm", "flac"] {
            var attempt = 0
            while true {
                attempt += 1
                let run = try playAndRecord([a, b], expected: expected, codec: codec, device: "pcm-\(codec)-\(attempt)")
                stopAll()
                if let latency = run.latency, run.difference == nil {
                    print(String(format: "snapcast %@: bit-exact, %d frames across the track boundary, silence around; play → first frame "
                                 + "played by snapclient %.0f ms (snapserver buffer 400 ms); attempt %d", codec, expected.count / 4, latency * 1000, attempt))
                    break
                }
                let why = run.difference ?? "no clock start found"
                if run.resynced && attempt < 3 {
                    print("snapcast \(codec): attempt \(attempt): snapserver or snapclient resynchronised (the machine's load): \(why)")
                    continue
                }
                XCTFail("\(codec): \(why)")
                break
            }
        }
    }

    /// Snapcast's clients (Snapweb, the Android app) speak JSON-RPC to snapserver's TCP port:
    /// the stream's properties carry jukebox's song (from `jukebox snapcast-control`, which
    /// snapserver runs), `Stream.Control` and `Stream.SetProperty` reach the player, and each
    /// change comes back as `Stream.OnProperties`.
    func testSnapcastClientsSeeTheSongAndControlThePlayerThroughSnapserversJSONRPC() throws {
        let a = dir + "/a.flac", b = dir + "/b.flac"
        try TestAudio.write(path: a, kind: .flac, frames: 44_100 * 10, tags: .init(title: "Alpha", artist: "Ann", album: "First", track: 1))
        try TestAudio.write(path: b, kind: .flac, frames: 44_100 * 10, tags: .init(title: "Beta", album: "First", track: 2))
        try startSnapcast(codec: "pcm", withClient: false)
        try startJukebox([a, b], playing: true)
        XCTAssertTrue(waitFor(5) { (try? self.ctl("status"))?.stdout.hasPrefix("▶") == true })
        let wire = try MPDWire(port: controlPort, timeout: 1)
        var lines: [[String: Any]] = []
        var nextID = 0
        /// Reads until a line satisfies `test` (5 s); every line read is kept in `lines`.
        func awaitLine(_ test: ([String: Any]) -> Bool) -> [String: Any]? {
            if let seen = lines.first(where: test) { return seen }
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                guard let line = wire.readLine() else { continue }
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { continue }
                lines.append(object)
                if test(object) { return object }
            }
            return nil
        }
        func call(_ method: String, _ params: [String: Any]) throws -> [String: Any]? {
            nextID += 1
            let id = nextID
            let request: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
            XCTAssertTrue(wire.send(String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self) + "\n"))
            return awaitLine { $0["id"] as? Int == id }
        }
        func stream(_ status: [String: Any]?) -> [String: Any]? {
            let streams = ((status?["result"] as? [String: Any])?["server"] as? [String: Any])?["streams"] as? [[String: Any]]
            return streams?.first { $0["id"] as? String == "jukebox" }
        }
        func title(_ properties: [String: Any]?) -> String? { (properties?["metadata"] as? [String: Any])?["title"] as? String }
        func changed(_ test: @escaping ([String: Any]) -> Bool) -> [String: Any]? {
            awaitLine { $0["method"] as? String == "Stream.OnProperties" && (($0["params"] as? [String: Any])?["id"] as? String) == "jukebox"
                && test((($0["params"] as? [String: Any])?["properties"] as? [String: Any]) ?? [:]) }
        }
        // The plugin reports once it follows the player: the stream's properties carry the song.
        var properties: [String: Any]?
        XCTAssertTrue(waitFor(5) {
            properties = (try? stream(call("Server.GetStatus", [:])))?["properties"] as? [String: Any]
            return title(properties) == "Alpha"
        }, "the stream never carried jukebox's song: \(String(describing: properties)); server: \(log("server.log"))")
        XCTAssertEqual((properties?["metadata"] as? [String: Any])?["artist"] as? [String], ["Ann"])
        XCTAssertEqual(properties?["playbackStatus"] as? String, "playing")
        XCTAssertEqual(properties?["canControl"] as? Bool, true)

        let started = Date()
        XCTAssertEqual(try call("Stream.Control", ["id": "jukebox", "command": "pause"])?["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"paused\"") }, "pause did not reach jukebox: \(status())")
        let reached = Date().timeIntervalSince(started)
        XCTAssertNotNil(changed { $0["playbackStatus"] as? String == "paused" }, "no Stream.OnProperties for the pause")
        XCTAssertEqual(try call("Stream.Control", ["id": "jukebox", "command": "play"])?["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"phase\":\"playing\"") }, "play did not reach jukebox: \(status())")
        XCTAssertNotNil(changed { $0["playbackStatus"] as? String == "playing" }, "no Stream.OnProperties for the play")
        XCTAssertEqual(try call("Stream.Control", ["id": "jukebox", "command": "next"])?["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"title\":\"Beta\"") }, "next did not reach jukebox: \(status())")
        XCTAssertNotNil(changed { title($0) == "Beta" }, "Stream.OnProperties did not carry the next title")
        XCTAssertEqual(try call("Stream.SetProperty", ["id": "jukebox", "property": "volume", "value": 40])?["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"volume\":40") }, "the volume did not reach jukebox: \(status())")
        XCTAssertEqual(try call("Stream.SetProperty", ["id": "jukebox", "property": "loopStatus", "value": "playlist"])?["result"] as? String, "ok")
        XCTAssertTrue(waitFor(5) { self.status().contains("\"repeat\":\"all\"") }, "loopStatus did not reach jukebox: \(status())")
        XCTAssertNotNil(changed { $0["loopStatus"] as? String == "playlist" && $0["volume"] as? Int == 40 })
        // snapserver understood every property and tag the plugin sent.
        let warnings = log("server.log").split(separator: "\n").filter { $0.contains("not supoorted") || $0.contains("not supported") }
        XCTAssertEqual(warnings, [], "snapserver did not know what the plugin sent")
        print(String(format: "snapcast control: Stream.Control pause reached jukebox in %.0f ms", reached * 1000))
    }

    func status() -> String { (try? ctl("status", "--json").stdout) ?? "" }

    /// What the Opus codec changes, measured (not bit-exact: lossy, and snapserver resamples
    /// anything but 48000:16:2 to it): the recording is aligned with the source by
    /// cross-correlation and the signal-to-noise ratio printed; it must still be the same music.
    func testOpusIsLossyAndTheTestSaysHowMuch() throws {
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 40_011, startFrame: 101, sampleRate: 48000)
        try TestAudio.write(path: b, kind: .wav16, frames: 30_021, startFrame: 40_112, sampleRate: 48000)
        let expectedBytes = try TestAudio.decode(path: a).bytes + TestAudio.decode(path: b).bytes
        let expected = expectedBytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        try startSnapcast(codec: "opus", sampleFormat: "48000:16:2")
        try startJukebox([a, b], sampleFormat: "48000:16:2", playing: false)
        XCTAssertTrue(try ctl("play").stdout.hasPrefix("▶"))
        var recorded: [Int16] = []
        var first: Int?
        // The music (1.5 s) behind a 0.4 s buffer, then 0.2 s more.
        _ = waitFor(10) {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: self.clientRecording))).map { [UInt8]($0) } ?? []
            recorded = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            if first == nil { first = recorded.firstIndex { abs(Int($0)) > 300 } }
            return first.map { recorded.count >= $0 + expected.count + 2 * 9600 } ?? false
        }
        let rough = try XCTUnwrap(first, "the client never played anything; client: \(log("client.log"))") / 2 * 2
        // The best lag near the first loud sample (channel 0, 2048 frames).
        var best = (lag: 0, score: -Double.infinity)
        for lag in stride(from: max(0, rough - 2 * 1200), through: rough + 2 * 1200, by: 2) where lag + 2 * 2048 <= recorded.count {
            var score = 0.0
            for f in 0..<2048 { score += Double(recorded[lag + 2 * f]) * Double(expected[2 * f]) }
            if score > best.score { best = (lag, score) }
        }
        var signal = 0.0, noise = 0.0, peak = 0
        for i in 0..<min(expected.count, recorded.count - best.lag) {
            let e = Double(expected[i]), d = Double(recorded[best.lag + i]) - e
            signal += e * e
            noise += d * d
            peak = max(peak, abs(Int(d)))
        }
        let snr = 10 * log10(signal / max(noise, 1))
        let exact = recorded[best.lag..<min(recorded.count, best.lag + expected.count)].elementsEqual(expected)
        print(String(format: "snapcast opus: not bit-exact (%@), SNR %.1f dB against the source, peak error %d of 32768, aligned %d frames "
                     + "after the first loud sample", exact ? "yet equal!" : "lossy", snr, peak, (best.lag - rough) / 2))
        XCTAssertFalse(exact, "Opus came out bit-exact: the codec was not used?")
        XCTAssertGreaterThan(snr, 10, "not the same music any more")
    }

    /// One run: snapserver, snapclient, jukebox paused with `music`, `play`, then the recording.
    func playAndRecord(_ music: [String], expected: [UInt8], codec: String, device: String)
        throws -> (difference: String?, resynced: Bool, latency: Double?) {
        try startSnapcast(codec: codec, device: device)
        try startJukebox(music, playing: false)
        XCTAssertFalse(try ctl("status").stdout.hasPrefix("▶"), "playing before play")
        let played = Self.monotonic()
        XCTAssertTrue(try ctl("play").stdout.hasPrefix("▶"))
        var recording: [UInt8] = []
        var start: Int?
        // 1.6 s of music behind a 0.4 s buffer, then (the pipe kept open) silence: 0.1 s of it.
        _ = waitFor(10) {
            recording = (try? Data(contentsOf: URL(fileURLWithPath: self.clientRecording))).map { [UInt8]($0) } ?? []
            if start == nil { start = Self.find(expected.prefix(256), in: recording) }
            return start.map { recording.count >= $0 + expected.count + 4410 * 4 } ?? false
        }
        let resynced = log("server.log").contains("onResync") || log("client.log").contains("abs(age")
            || log("client.log").contains("Buffer->full()")
        guard let start else {
            return ("the client never played A's first frames; client: \(log("client.log")) server: \(log("server.log"))", resynced, nil)
        }
        let heard = Array(recording[start..<min(recording.count, start + expected.count)])
        if let index = zip(heard, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
            ?? (heard.count == expected.count ? nil : heard.count) {
            // Say what happened there: silence put in (a gap), or frames left out.
            let at = start + index
            let zeros = recording[min(at, recording.count)...].prefix { $0 == 0 }.count
            let resumes = Self.find(expected[index..<min(expected.count, index + 256)], in: recording, from: min(at, recording.count))
            // In steps: Swift 6.0.3 cannot type-check it as one expression in reasonable time.
            let rest: String = resumes.map { "follows \(($0 - at) / 4) frames later" } ?? "is not found"
            let clientTail: String = log("client.log").split(separator: "\n").filter { !$0.contains("Stats") }.suffix(10).joined(separator: "\n")
            let serverTail: String = log("server.log").split(separator: "\n").suffix(8).joined(separator: "\n")
            var text = "what snapclient played differs from frame \(index / 4) of \(expected.count / 4): \(zeros / 4) frames of silence there, "
            text += "the rest " + rest
            text += "\nclient: " + clientTail
            text += "\nserver: " + serverTail
            return (text, resynced, nil)
        }
        XCTAssertTrue(recording[..<start].allSatisfy { $0 == 0 }, "\(codec): something but silence before A")
        XCTAssertTrue(recording[(start + expected.count)...].allSatisfy { $0 == 0 }, "\(codec): something but silence after B")
        // The file plugin and the device under it got the same bytes: the device's clock times them.
        let device = pcm.recording()
        XCTAssertTrue(device.count >= start && device[..<start] == recording[..<start], "\(codec): the file plugin and its device differ")
        XCTAssertTrue(client?.isRunning == true && server?.isRunning == true, "snapclient or snapserver ended")
        return (nil, resynced, try playedAt(byte: start).map { $0 - played })
    }

    /// Stops jukebox, snapclient and snapserver, and removes the pipe and the recording.
    func stopAll() {
        if let daemon { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        daemon = nil
        for p in [client, server].compactMap({ $0 }) { RealMPD.stop(p) }
        (client, server) = (nil, nil)
        try? FileManager.default.removeItem(atPath: clientRecording)
        try? FileManager.default.removeItem(atPath: fifo)
    }

    /// CLOCK_MONOTONIC now, in seconds (the test device's clock).
    static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// CLOCK_MONOTONIC seconds when the device played the frame at byte `byte` of its recording:
    /// from the last (re)start of its clock before that byte (`start`, `unpause`, `resume`).
    func playedAt(byte: Int) throws -> Double? {
        let anchors = pcm.events().filter { ["start", "unpause", "resume"].contains($0.name) && $0.heard <= byte }
        guard let anchor = anchors.last, let t = Double(anchor.fields["t"] ?? "") else { return nil }
        return t + Double(byte - anchor.heard) / 4 / 44100
    }
}

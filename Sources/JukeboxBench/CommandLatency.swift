// SPDX-License-Identifier: MIT
import CSndfile
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// Time from a control command (pause, resume, seek, next, volume) to the first frame the audio
/// device plays differently because of it, measured on the device's own clock.
///
/// How: the real `jukebox play` plays tracks of a known signal on the test device at real time
/// (`Workspace.recordingDevice`), which records every byte written and logs each start and stop
/// of its clock with the CLOCK_MONOTONIC instant and the recording offset then being played
/// (`t=` and `heard=`, Sources/JukeboxTestPCM). From a start the device consumes exactly `rate`
/// frames a second, so the log and the recording tell when each recorded frame was played; what
/// was written but dropped (past a stop's `heard`) was never played. The benchmark reads
/// CLOCK_MONOTONIC just before it writes the command to an already connected control socket.
/// The signal: left channel a constant per track (12000 or 20000 at volume 100), right channel
/// the frame index (mod 65536). The first changed frame is the first frame after the command
/// that is not what the device would have played without it:
/// - while playing (pause, seek, next, volume): the first frame whose left channel leaves the
///   level before the command (a fade or gain change) or whose index does not follow, or, when the
///   device stopped first (a drop), the frame that would have played at the stop; for volume on a
///   device that drops, the first frame played at the new gain after the drop (the stop alone is
///   silence, not the change asked for);
/// - while silent (resume): the first non-silent frame played.
/// The figure therefore includes the socket, the loop, the engine, reopening the device where the
/// player released it (resume) and decoding; it says nothing of an analogue stage after the device.
/// Two devices: the test device itself, on which the player drops (`CutMethod.drop`, as on pulse),
/// and `plug` over it (`Workspace.rewindingDevice`), on which the player rewinds, keeps 10 ms and
/// fades over 15 ms as on hw, plughw and dmix; the test device takes rewound frames back like a
/// kernel-backed device and overwrites them in the recording. No real sound card is measured. From
/// the same recording: whether resume continues at the frame after the last one heard (what was
/// cut is neither heard nor counted), whether a seek lands on its frame and whether next starts
/// the next track at frame 0 (the index is read where the level is full, past any fade).
/// Pauses between commands wait for the device log to show the previous command's effect (never
/// only a sleep), and each command's change is looked for only up to the next command.
struct CommandLatency {
    /// One action's figures over the repetitions.
    struct Action {
        /// pause, resume, seek, next, volume.
        var name: String
        /// Seconds from the command to the first changed frame, one per repetition where it was seen.
        var change: Samples
        /// Seek and next: seconds from the command to the first frame of the new audio.
        var newSound: Samples?
        /// How the change showed at the device (e.g. "the sound stopped (drop)").
        var shows: Set<String>
        /// Commands sent.
        var sent: Int

        /// Every command's change seen, the p95 within `CommandLatencyBench.targetSeconds`.
        var met: Bool { !change.values.isEmpty && change.values.count == sent && change.p95 <= CommandLatencyBench.targetSeconds }
    }

    /// In the order pause, resume, seek, next, volume.
    var actions: [Action]
    /// Frame-exactness checks: what, how many held, out of how many, and how far off each miss was.
    var exact: [(what: String, held: Int, of: Int, misses: [String])]
    /// Commands whose change was not seen before the next command (each a line).
    var unseen: [String]
    /// The PCM played to and how the player cuts on it: `drop` or `rewind`.
    var device: String
    var cut: String
    /// The device's frames a second.
    var rate: Int
}

enum CommandLatencyBench {
    static let rate = 44100
    /// The left channel of the two tracks at volume 100.
    static let markers: [Int16] = [12000, 20000]
    /// The target, also in `Report.targets`.
    static let targetSeconds = 0.030

    /// `reps` repetitions of pause, resume, seek and next, then `reps` volume changes (100 ↔ 50),
    /// played to `device`; `rewinds`: the player rewinds on it (else it drops).
    static func measure(reps: Int, device: String, rewinds: Bool, in ws: Workspace) throws -> CommandLatency {
        let seconds = 20.0
        let tracks = try (0..<2).map { n -> String in
            let path = ws.path("latency-\(n).wav")
            try writeSignal(path: path, marker: markers[n], frames: Int(seconds * Double(rate)))
            return path
        }
        // Every `next` goes on to the other track; the volume changes stay within the last one.
        let queue = (0..<(reps + 2)).map { tracks[$0 % 2] }
        let socket = ws.path("latency.sock")
        try? FileManager.default.removeItem(atPath: ws.recordingPath)
        try? FileManager.default.removeItem(atPath: ws.recordingLogPath)
        let child = try ws.start(["play", "--device", device, "--socket", socket, "--volume", "100"] + queue)
        defer {
            child.send(SIGTERM)
            _ = try? child.wait(timeout: 10)
        }
        let log = DeviceLog(path: ws.recordingLogPath, pid: child.pid)
        guard log.wait(timeout: 10, for: "start", after: 0) != nil else {
            throw BenchError("latency: the player did not start the device: \(child.stderr.suffix(600))")
        }
        var sent: [(action: String, at: Double, seekFrame: Int?)] = []
        var unseen: [String] = []
        /// Sends `line` and returns when the device shows its effect (`then`: a stop, then a start
        /// after it) and `settle` more seconds have passed.
        func command(_ action: String, _ line: String, seekFrame: Int? = nil, then effect: [String], settle: Double = 0.4) throws {
            let client: ControlClient
            do { client = try ControlClient(path: socket) } catch { throw BenchError("latency: socket: \(error)") }
            let at = monotonicNow()
            guard client.send(line) else { throw BenchError("latency: `\(line)`: the player hung up") }
            sent.append((action, at, seekFrame))
            let reply = client.readLine(timeout: 10)
            guard let reply, reply.hasPrefix("ok") else { throw BenchError("latency: `\(line)` answered \(reply ?? "nothing")") }
            var after = at
            for name in effect {
                guard let t = log.wait(timeout: 5, for: name, after: after) else {
                    unseen.append("\(action): no device \(name) within 5 s")
                    break
                }
                after = t
            }
            usleep(useconds_t(settle * 1_000_000))
        }
        usleep(1_000_000)  // a full device buffer, as in steady playback
        for rep in 0..<reps {
            try command("pause", "pause", then: ["stop"], settle: 0.3)
            try command("resume", "play", then: ["start"])
            let target = 5 + rep % 4
            try command("seek", "seek 0:0\(target)", seekFrame: target * rate, then: ["stop", "start"])
            try command("next", "next", then: ["stop", "start"])
        }
        for rep in 0..<reps {
            // On a drop-only device the change drops and restarts it: wait for that, as for a seek.
            try command("volume", rep % 2 == 0 ? "vol 50" : "vol 100", then: rewinds ? [] : ["stop", "start"], settle: 0.4)
        }
        child.send(SIGTERM)
        _ = try child.wait(timeout: 10)
        var result = try analyse(sent: sent, unseen: unseen, recording: ws.recordingPath, log: log)
        result.device = device
        result.cut = rewinds ? "rewind" : "drop"
        return result
    }

    /// 16-bit stereo WAV: left `marker`, right the frame index (wrapping at 16 bits).
    static func writeSignal(path: String, marker: Int16, frames: Int) throws {
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = 2
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw BenchError("\(path): " + String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        var samples = [Int16](repeating: 0, count: frames * 2)
        for f in 0..<frames {
            samples[2 * f] = marker
            samples[2 * f + 1] = Int16(truncatingIfNeeded: f)
        }
        guard sf_writef_short(file, &samples, sf_count_t(frames)) == frames else {
            throw BenchError("\(path): short write: " + String(cString: sf_strerror(file)))
        }
    }

    /// The device's event log for one process.
    final class DeviceLog {
        let path: String
        let pid: pid_t
        init(path: String, pid: pid_t) {
            self.path = path
            self.pid = pid
        }

        /// One line: the event, `heard=`, `t=` and every other `key=value`.
        struct Event {
            var name: String
            var heard: Int
            var time: Double?
            var fields: [String: String]
        }

        /// Its events so far.
        func events() -> [Event] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
            return TestPCM.events(inLog: text).filter { $0.pid == pid }.map {
                Event(name: $0.name, heard: $0.heard, time: $0.fields["t"].flatMap(Double.init), fields: $0.fields)
            }
        }

        /// The time of the first `name` event after `after`, waiting up to `timeout` seconds.
        func wait(timeout: Double, for name: String, after: Double) -> Double? {
            var found: Double?
            _ = waitFor(timeout) {
                found = events().first { $0.name == name && ($0.time ?? 0) > after }?.time
                return found != nil
            }
            return found
        }
    }

    /// A stretch the device played without stopping: recording bytes `from..<to`, the first at `start`.
    struct Played {
        var start: Double
        var from: Int, to: Int
        var frameBytes: Int
        var rate: Double
        /// The event that stopped the clock (stop when the player dropped or drained).
        var ending: String
        func time(_ offset: Int) -> Double { start + Double((offset - from) / frameBytes) / rate }
        var end: Double { time(to) }
        /// The first frame played at or after `t` (clamped to the stretch).
        func frame(at t: Double) -> Int {
            let k = Int(((t - start) * rate).rounded(.up))
            return from + min(max(0, k), (to - from) / frameBytes) * frameBytes
        }
    }

    /// The stretches played, from the log: a clock runs from a start (unpause, resume, unstall) to
    /// the next stop (pause, underrun, xrun, suspend, unplug, stall, close).
    static func played(_ events: [DeviceLog.Event]) throws -> [Played] {
        var out: [Played] = []
        var open: (t: Double, heard: Int)?
        var frameBytes = 0, rate = 0.0
        for e in events {
            switch e.name {
            case "params":
                guard e.fields["format"] == "S16_LE", e.fields["channels"] == "2", let r = Double(e.fields["rate"] ?? "") else {
                    throw BenchError("latency: the device was opened as \(e.fields), not S16_LE stereo")
                }
                frameBytes = 4
                rate = r
            case "start", "unpause", "resume", "unstall":
                guard let t = e.time else { throw BenchError("latency: the test device logs no times (rebuild it)") }
                if open == nil { open = (t, e.heard) }
            case "stop", "pause", "underrun", "xrun", "suspend", "unplug", "stall", "close":
                if let o = open, e.heard > o.heard, frameBytes > 0 {
                    out.append(Played(start: o.t, from: o.heard, to: e.heard, frameBytes: frameBytes, rate: rate, ending: e.name))
                }
                open = nil
            default: break
            }
        }
        return out
    }

    static func analyse(sent: [(action: String, at: Double, seekFrame: Int?)], unseen: [String],
                        recording path: String, log: DeviceLog) throws -> CommandLatency {
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        let played = try Self.played(log.events())
        func sample(_ offset: Int) -> Int16 {
            guard offset >= 0, offset + 1 < bytes.count else { return 0 }
            return Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
        }
        func left(_ frame: Int) -> Int16 { sample(frame) }
        func right(_ frame: Int) -> Int16 { sample(frame + 2) }
        // The index of the stretch's first frame, read at its first frame at full level (`marker`).
        func firstIndex(_ s: Played, marker: Int16) -> Int16? {
            var f = s.from
            while f < s.to, left(f) != marker { f += s.frameBytes }
            guard f < s.to else { return nil }
            return right(f) &- Int16(truncatingIfNeeded: (f - s.from) / s.frameBytes)
        }
        // The first non-silent frame played in [from, until): its time and stretch.
        func firstSound(from t: Double, until: Double, after stretch: Int = -1) -> (at: Double, stretch: Int)? {
            for (i, s) in played.enumerated() where i > stretch && s.end > t && s.start < until {
                var f = s.frame(at: t)
                while f < s.to, left(f) == 0 { f += s.frameBytes }
                if f < s.to, s.time(f) < until { return (s.time(f), i) }
            }
            return nil
        }

        var changes: [String: [Double]] = [:], news: [String: [Double]] = [:], shows: [String: Set<String>] = [:]
        var counts: [String: Int] = [:]
        var exact: [String: (misses: [String], of: Int)] = [:]
        var unseen = unseen
        var lastHeardIndex: (index: Int16, marker: Int16)?  // the last frame before a pause's cut
        for (n, c) in sent.enumerated() {
            counts[c.action, default: 0] += 1
            let until = n + 1 < sent.count ? sent[n + 1].at : .infinity
            // `got` and `expected` are frame indices mod 65536; a miss records how far off it was.
            func note(_ what: String, got: Int16?, expected: Int16) {
                exact[what, default: ([], 0)].of += 1
                guard let got else { exact[what]!.misses.append("no full-level frame"); return }
                let off = Int(got &- expected)
                guard off != 0 else { return }
                if c.action == "resume" {
                    exact[what]!.misses.append(off < 0 ? "\(-off) frames heard twice" : "\(off) frames never heard")
                } else {
                    exact[what]!.misses.append("\(off) frames")
                }
            }
            if let i = played.firstIndex(where: { $0.start <= c.at && c.at < $0.end }) {
                // Playing at the command: follow the stretch until it changes or stops.
                let s = played[i]
                var f = max(s.frame(at: c.at), s.from + s.frameBytes)
                let level = left(f - s.frameBytes)
                var index = right(f - s.frameBytes)
                var changed: Double?
                while f < s.to {
                    if abs(Int(left(f)) - Int(level)) > 1 {
                        changed = s.time(f)
                        shows[c.action, default: []].insert("the level changed (fade or gain)")
                        break
                    }
                    // The index is exact only at full level (volume 100, no fade).
                    if markers.contains(level), right(f) != index &+ 1 {
                        changed = s.time(f)
                        shows[c.action, default: []].insert("the audio jumped")
                        break
                    }
                    index = right(f)
                    f += s.frameBytes
                }
                // The cut frame: where the level changed (a fade) or the device stopped (a drop).
                let cutFrame = f
                if changed == nil && s.ending != "stop" && s.ending != "close" {
                    unseen.append(String(format: "%@ at %.3f: the device met %@ first", c.action, c.at, s.ending))
                    continue
                }
                let dropped = changed == nil
                if dropped {
                    changed = s.end
                    shows[c.action, default: []].insert(c.action == "volume" ? "the new gain after a drop" : "the sound stopped (drop)")
                }
                if c.action == "pause" {
                    // A fade plays on the frames that follow (index unreadable at low level) up to the stop.
                    lastHeardIndex = (right(cutFrame - s.frameBytes) &+ Int16(truncatingIfNeeded: (s.to - cutFrame) / s.frameBytes), level)
                }
                guard let at = changed, at < until else {
                    unseen.append(String(format: "%@ at %.3f: no change before the next command", c.action, c.at))
                    continue
                }
                // A volume change on a device that drops is heard when the audio comes back at the
                // new gain, not when the sound stops for the cut.
                if c.action == "volume" && dropped {
                    guard let new = firstSound(from: at, until: until, after: i) else {
                        unseen.append(String(format: "volume at %.3f: no sound after the drop before the next command", c.at))
                        continue
                    }
                    changes[c.action, default: []].append(new.at - c.at)
                    continue
                }
                changes[c.action, default: []].append(at - c.at)
                // Seek and next: when the new audio came, and where it started.
                if c.action == "seek" || c.action == "next", let new = firstSound(from: at, until: until, after: i) {
                    news[c.action, default: []].append(new.at - c.at)
                    let stretch = played[new.stretch]
                    if c.action == "seek", let target = c.seekFrame {
                        note("a seek lands on its frame", got: firstIndex(stretch, marker: level), expected: Int16(truncatingIfNeeded: target))
                    }
                    if c.action == "next" {
                        let other = markers.first { $0 != level }!
                        note("next starts the other track at frame 0", got: firstIndex(stretch, marker: other), expected: 0)
                    }
                }
            } else if let new = firstSound(from: c.at, until: until) {
                // Silent at the command (resume): the first sound after it.
                changes[c.action, default: []].append(new.at - c.at)
                shows[c.action, default: []].insert("the first non-silent frame (device reopened)")
                if c.action == "resume", let last = lastHeardIndex {
                    note("resume continues at the frame after the last one heard",
                         got: firstIndex(played[new.stretch], marker: last.marker), expected: last.index &+ 1)
                    lastHeardIndex = nil
                }
            } else {
                unseen.append(String(format: "%@ at %.3f: no sound before the next command", c.action, c.at))
            }
        }
        let order = ["pause", "resume", "seek", "next", "volume"]
        let actions = order.filter { counts[$0] != nil }.map { name in
            CommandLatency.Action(name: name, change: Samples(changes[name] ?? []), newSound: news[name].map(Samples.init),
                                  shows: shows[name] ?? [], sent: counts[name] ?? 0)
        }
        let checks = ["resume continues at the frame after the last one heard", "a seek lands on its frame",
                      "next starts the other track at frame 0"].compactMap { what in exact[what].map { (what, $0.of - $0.misses.count, $0.of, $0.misses) } }
        return CommandLatency(actions: actions, exact: checks, unseen: unseen, device: "", cut: "", rate: rate)
    }
}

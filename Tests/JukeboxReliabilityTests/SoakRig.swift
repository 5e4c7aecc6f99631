// SPDX-License-Identifier: MIT
// openpty comes from pty.h, which Swift 6.0's Glibc module leaves out (CLinux includes it).
import CLinux
import Foundation
import Glibc
import JukeboxFixtures

/// The soak's world: a music folder of mixed formats and rates (and one bad file that is skipped
/// on every pass), a fast test device, a pty as the serial console, and the player's config.
final class SoakRig {
    let home: String, config: String, socket: String, folder: String
    let pcm: TestPCM
    let console: PTY

    init(dir: String, speed: Double) throws {
        home = dir + "/home"
        config = dir + "/config.json"
        socket = dir + "/ctl"
        folder = dir + "/music"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Format and rate changes reopen the device; the lossy ones exercise their decoders' seeks.
        let tracks: [(String, TestAudio.Kind, rate: Int, channels: Int, seconds: Int)] = [
            ("01 a", .wav16, 8000, 1, 120), ("02 b", .flac, 22050, 2, 90), ("03 c", .oggVorbis, 16000, 1, 60),
            ("04 d", .mp3, 22050, 2, 60), ("05 e", .wav16, 44100, 2, 30),
        ]
        for t in tracks {
            try TestAudio.write(path: "\(folder)/\(t.0).\(t.1.fileExtension)", kind: t.1, frames: t.rate * t.seconds,
                                sampleRate: t.rate, channels: t.channels)
        }
        _ = FileManager.default.createFile(atPath: folder + "/06 bad.flac", contents: Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        pcm = try TestPCM(directory: dir + "/device", speed: speed)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // No `record`: hours of audio would fill the disk; the log still counts every frame.
        try """
        pcm_type.jukeboxtest { lib "\(pcm.library)" }
        pcm.jt { type jukeboxtest control "\(pcm.controlPath)" lock "\(pcm.lockPath)" log "\(pcm.logPath)" speed \(speed) }

        """.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        console = try PTY()
        try """
        {"device": "jt", "state": "\(dir)/state.json", "music": ["\(folder)"], "socket": "\(socket)",
         "console": "\(console.slavePath)", "releaseDelay": 1, "logLevel": "info"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// Seconds of audio the device consumed, from its event log: every event carries `heard=`
    /// (bytes consumed in the current stream), `params` the rate and frame size.
    func audioSecondsPlayed() -> Double {
        var seconds = 0.0
        var last: [Int32: Int] = [:]
        var frame: [Int32: (bytes: Int, rate: Int)] = [:]
        for e in pcm.events() {
            if e.name == "open" { last[e.pid] = 0 }
            if e.name == "params", let rate = Int(e.fields["rate"] ?? ""), let channels = Int(e.fields["channels"] ?? "") {
                let sample = e.fields["format"] == "S16_LE" ? 2 : 4
                frame[e.pid] = (sample * channels, rate)
            }
            if let f = frame[e.pid], e.heard > last[e.pid, default: 0] {
                seconds += Double(e.heard - last[e.pid, default: 0]) / Double(f.bytes * f.rate)
                last[e.pid] = e.heard
            }
        }
        return seconds
    }
}

/// A pty pair: the test holds the master side like a terminal program; the player opens the slave
/// by path as its serial console.
final class PTY {
    let master: Int32
    private let slave: Int32
    let slavePath: String
    /// Bytes the console has shown (drained and counted, not kept).
    private(set) var shown = 0

    init() throws {
        var m: Int32 = -1, s: Int32 = -1
        var name = [CChar](repeating: 0, count: 256)
        guard openpty(&m, &s, &name, nil, nil) == 0 else { throw Failure("openpty failed: errno \(errno)") }
        master = m
        // Kept open so the pty never hangs up while the player reopens it.
        slave = s
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(master)
        close(slave)
    }

    /// Types bytes as a terminal sends them (as much as the pty takes now; a terminal that
    /// cannot write just drops keys).
    func type(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Reads and drops what the console has written.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { return }
            shown += n
        }
    }
}

/// Random input as people and scripts produce it.
enum SoakInput {
    /// A control-language line: mostly valid, some nonsense.
    static func command(_ rng: inout SeededRandom, folder: String) -> String {
        let r = Int.random(in: 0..<100, using: &rng)
        switch r {
        // Play dominates, as with a person who wants music: the soak is about hours of playback.
        case 0..<18: return "play"
        case 18..<21: return "pause"
        case 21..<24: return "toggle"
        case 24..<25: return "stop"
        case 25..<37: return "next"
        case 37..<42: return "prev"
        case 42..<52: return "seek " + ["+", "-", ""].randomElement(using: &rng)! + "0:\(String(format: "%02d", Int.random(in: 0...59, using: &rng)))"
        case 52..<58: return "vol " + ["+", "-", ""].randomElement(using: &rng)! + "\(Int.random(in: 0...100, using: &rng))"
        case 58..<62: return "shuffle " + (Bool.random(using: &rng) ? "on" : "off")
        case 62..<65: return "repeat " + ["off", "one", "all", "all"].randomElement(using: &rng)!
        case 65..<68: return Int.random(in: 0..<4, using: &rng) == 0 ? "interrupt begin soak" : "interrupt end"
        case 68..<70: return "load " + folder
        case 70..<72: return "add " + folder + "/0\(Int.random(in: 1...6, using: &rng))" + [" a.wav", " b.flac", " bad.flac"].randomElement(using: &rng)!
        case 72..<73: return "clear"
        case 73..<78: return "status --json"
        case 78..<82: return "queue \(Int.random(in: 1...3, using: &rng))"
        case 82..<85: return "diag"
        case 85..<88: return "log \(Int.random(in: 1...50, using: &rng))"
        case 88..<91: return "save"
        case 91..<94: return ["help", "version", "status"].randomElement(using: &rng)!
        default: return ["frobnicate", "seek", "vol loud", "repeat twice", "queue -1", "", "   "].randomElement(using: &rng)!
        }
    }

    /// Bytes typed at the console: a command line with its Enter, control keys, or line noise
    /// (a wrong baud rate).
    static func consoleBytes(_ rng: inout SeededRandom) -> [UInt8] {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<6:
            let line = ["status", "next", "pause", "play", "play", "vol +5", "vol -5", "seek +0:30", "queue", "diag", "log 5",
                        "events", "help", "shuffle on", "shuffle off"].randomElement(using: &rng)!
            return Array(line.utf8) + [[0x0D], [0x0A], [0x0D, 0x0A]].randomElement(using: &rng)!
        case 6:
            return [[0x03], [0x15], [0x7F], [0x08], [0x1B, 0x5B, 0x41], [0x1B, 0x5B, 0x31, 0x35, 0x7E]].randomElement(using: &rng)!
        case 7:
            return Array(repeating: UInt8(ascii: "x"), count: 1100) + [0x0D]  // over the 1024-byte limit
        default:
            return (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        }
    }
}

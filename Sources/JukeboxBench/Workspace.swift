// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

/// The formats the figures are given for, with the file type the fixtures write for each.
enum BenchFormat: String, CaseIterable {
    case wav, flac, mp3, ogg, opus

    /// The fixture kind: 16-bit WAV and FLAC, Ogg Vorbis, Ogg Opus (48 kHz), MP3 with a LAME info frame.
    var kind: TestAudio.Kind {
        switch self {
        case .wav: .wav16
        case .flac: .flac
        case .mp3: .mp3
        case .ogg: .oggVorbis
        case .opus: .opus
        }
    }

    /// 44.1 kHz, except Opus, which only takes 48 kHz.
    var sampleRate: Int { kind.requiredSampleRate ?? 44100 }

    /// The name in the table.
    var label: String {
        switch self {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .mp3: "MP3"
        case .ogg: "Ogg Vorbis"
        case .opus: "Opus"
        }
    }
}

/// A temporary folder holding everything one benchmark run makes (test audio, a HOME with an
/// `.asoundrc`, state files, recordings); `remove()` deletes it.
final class Workspace {
    /// The folder.
    let root: String
    /// The `jukebox` binary under test.
    let binary: String
    /// HOME for the binary: its `.asoundrc` defines `bench_rt`, the test device at real time.
    let home: String
    /// The ALSA PCM that consumes in real time like a sound card (the fault-injecting test device, no faults).
    let realTimeDevice = "bench_rt"
    /// The same device at real time, also recording every byte written (`recordingPath`) and logging
    /// each start and stop with its CLOCK_MONOTONIC time (`recordingLogPath`): the command latency section.
    let recordingDevice = "bench_rec"
    /// `plug` over `recordingDevice`: the player sees a PCM it rewinds (as on hw, plughw, dmix),
    /// and the test device takes the frames back (see jukeboxtest.c, "Rewinds").
    let rewindingDevice = "bench_rec_plug"
    /// `plug` over `realTimeDevice`, without a recording: the path a box's `plughw` takes (a plug
    /// that rewinds in front of the device), for the faces section's memory.
    let realTimePlugDevice = "bench_rt_plug"
    /// The test device at `DayBench.speed` times real time, with no lock, log or recording: the
    /// day section (the device is a plugin inside the player, and any file it wrote would count
    /// in the player's own disk writes).
    let fastDevice = "bench_fast"
    var recordingPath: String { path("rec.raw") }
    var recordingLogPath: String { path("rec.log") }
    private var audioFiles: [String: String] = [:]

    /// Makes the folder under `$TMPDIR` and the asoundrc; `testPCMLibrary` is libJukeboxTestPCM.so.
    init(binary: String, testPCMLibrary: String) throws {
        let base = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/jukebox-bench-XXXXXX"
        var template = Array(base.utf8CString)
        // Read back from the array: mkdtemp's result points into storage lent only for the call.
        guard mkdtemp(&template) != nil else { throw BenchError("mkdtemp \(base) failed") }
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.binary = binary
        home = root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // No `record`: the device drops the bytes, so the recording costs the player nothing.
        let asoundrc = """
        pcm_type.jukeboxtest { lib "\(testPCMLibrary)" }
        pcm.\(realTimeDevice) {
            type jukeboxtest
            lock "\(root)/rt.lock"
            log "\(root)/rt.log"
            speed 1
        }
        pcm.\(recordingDevice) {
            type jukeboxtest
            record "\(root)/rec.raw"
            lock "\(root)/rec.lock"
            log "\(root)/rec.log"
            speed 1
        }
        pcm.\(realTimePlugDevice) {
            type plug
            slave.pcm "\(realTimeDevice)"
        }
        pcm.\(rewindingDevice) {
            type plug
            slave.pcm "\(recordingDevice)"
        }
        pcm.\(fastDevice) {
            type jukeboxtest
            speed \(Int(DayBench.speed))
        }

        """
        try asoundrc.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
    }

    /// The source tree this bench was built from (two folders above this file's): the web app's
    /// assets and the browser script are read from it (a release build elsewhere would look in
    /// /usr/share).
    static let sourceTree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// A path inside the workspace.
    func path(_ name: String) -> String { root + "/" + name }

    /// An ALSA PCM that writes the raw samples to `file` without pacing (libasound's `file` plugin
    /// on the `null` PCM): the player runs as fast as it can decode.
    func unpacedDevice(recordingTo file: String = "/dev/null") -> String { "file:FILE=\(file),FORMAT=raw" }

    /// A stereo file of `seconds` of the fixture signal in `format` (written once, then reused).
    func audio(_ format: BenchFormat, seconds: Double) throws -> String {
        let key = "\(format.rawValue)-\(seconds)"
        if let path = audioFiles[key] { return path }
        let path = self.path("\(key)s.\(format.kind.fileExtension)")
        try TestAudio.write(path: path, kind: format.kind, frames: Int(seconds * Double(format.sampleRate)),
                            sampleRate: format.sampleRate,
                            tags: TestAudio.Tags(title: "Bench \(format.label)", artist: "jukebox-bench", album: "Figures", track: 1))
        audioFiles[key] = path
        return path
    }

    /// Starts the binary with HOME pointing at the workspace's home (so libasound reads its asoundrc).
    func start(_ args: [String]) throws -> Child {
        try Child(binary: binary, args: args, environment: ["HOME": home],
                  outputBase: path("child-\(UUID().uuidString)"))
    }

    /// Deletes the folder and everything in it.
    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

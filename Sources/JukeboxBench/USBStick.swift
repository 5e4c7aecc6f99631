// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// How soon a big USB stick plays: the player's own two steps after the watcher reports it
/// (`Runtime.loadUSB`, as `Command.loadUSB` asks): listing the stick and reading its first folder's tags (then the first
/// track can start), and reading the rest (appended meanwhile). The watcher's own delay (an
/// inotify event, one loop pass) and the engine's start are left out.
struct USBStickStart {
    /// Files on the stick.
    var files: Int
    /// Seconds from the first look at the stick to its first folder's tracks (median).
    var firstTracks: Samples
    /// Seconds to read the rest after that (median).
    var rest: Samples
}

enum USBStickBench {
    static let fileDescription = "WAV, 16-bit stereo 44.1 kHz, 0.01 s, untagged, 100 per folder, 200 folders"
    /// The target of issue 16 item 5: a 20,000-file stick playable in under 2 s.
    static let target = "first tracks of a 20,000-file stick within 2 s"

    static func measure(files count: Int, repeats: Int, in ws: Workspace) throws -> USBStickStart {
        let stick = ws.path("stick-\(count)")
        let perFolder = 100
        for index in 0..<count {
            let folder = stick + String(format: "/Folder %03d", index / perFolder)
            if index % perFolder == 0 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try TestAudio.write(path: folder + String(format: "/%03d Track.wav", index % perFolder + 1), kind: .wav16, frames: 441)
        }
        let loader = LibraryLoader(readInfo: AudioWiring.trackInfo(path:))
        var first: [Double] = [], rest: [Double] = []
        for _ in 0..<repeats {
            let start = monotonicNow()
            let (head, tail) = USBScan.split(USBScan.folders(stick), through: nil)
            let tracks = loader.load(head).tracks
            let firstDone = monotonicNow()
            let more = loader.load(tail).tracks
            rest.append(monotonicNow() - firstDone)
            first.append(firstDone - start)
            guard tracks.count + more.count == count, tracks.count == perFolder else {
                throw BenchError("usb: \(tracks.count) + \(more.count) of \(count) tracks read")
            }
        }
        try? FileManager.default.removeItem(atPath: stick)
        return USBStickStart(files: count, firstTracks: Samples(first), rest: Samples(rest))
    }
}

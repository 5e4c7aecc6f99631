// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// How fast the library loader turns a folder into a queue: the service's `LibraryLoader` with the
/// player's own tag reader (`AudioWiring.trackInfo`: TagLib tags, libsndfile length), as `play DIR`
/// and `run` with `music` use it.
struct LibraryRate {
    /// Tracks in the folder.
    var tracks: Int
    /// Seconds for one load (the median of the repeats).
    var seconds: Samples
    /// Tracks per second at the median.
    var tracksPerSecond: Double { Double(tracks) / seconds.median }
}

enum LibraryBench {
    /// Describes the generated files, for the report.
    static let fileDescription = "FLAC, 16-bit stereo 44.1 kHz, 0.1 s, with title/artist/album/track tags, 10 per album folder"

    /// Generates `count` tracks in albums of 10 under a new folder and loads it `repeats` times (the
    /// first load warms the page cache, as the files were just written anyway; all loads count).
    static func measure(tracks count: Int, repeats: Int, in ws: Workspace) throws -> LibraryRate {
        let root = ws.path("library-\(count)")
        for index in 0..<count {
            let album = index / 10, number = index % 10 + 1
            let folder = root + "/Artist \(album % 17)/Album \(album)"
            if number == 1 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try TestAudio.write(path: folder + "/\(number) Song \(index).flac", kind: .flac, frames: 4410,
                                tags: TestAudio.Tags(title: "Song \(index)", artist: "Artist \(album % 17)",
                                                     album: "Album \(album)", track: number))
        }
        let loader = LibraryLoader(readInfo: AudioWiring.trackInfo(path:))
        var times: [Double] = []
        for _ in 0..<repeats {
            let start = monotonicNow()
            let result = loader.load([root])
            times.append(monotonicNow() - start)
            guard result.tracks.count == count else {
                throw BenchError("library: \(result.tracks.count) of \(count) tracks loaded: \(result.messages.prefix(3))")
            }
        }
        try? FileManager.default.removeItem(atPath: root)
        return LibraryRate(tracks: count, seconds: Samples(times))
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import XCTest

/// The loader with names that are not UTF-8, FIFOs and link loops: every name keeps its bytes
/// (from the listing, a Latin-1 playlist line, a `file://` entry's `%E9`), a FIFO is named and
/// never opened, a link back to an ancestor is not walked again.
final class ForeignNamesLoaderTests: XCTestCase {
    let loader = LibraryLoader { TrackInfo(path: $0) }

    func testNamesThatAreNotUTF8FIFOsAndLoopsThroughFoldersAndPlaylists() throws {
        let dir = TempDir()
        dir.write("album/plain.wav", "")
        let latin1 = FileSystemPath.string([0xE9, 0x74, 0xE9, 0x2E, 0x77, 0x61, 0x76])  // "été.wav" in Latin-1
        let fd = open(cPath(dir.file("album/" + latin1)), O_WRONLY | O_CREAT | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        XCTAssertEqual(mkfifo(dir.file("album/x.flac"), 0o644), 0)
        XCTAssertEqual(symlink(dir.file("album"), dir.file("album/loop")), 0)

        let (tracks, messages) = loader.load([dir.file("album")])
        XCTAssertEqual(Set(tracks.map(\.path)), [dir.file("album/plain.wav"), dir.file("album/" + latin1)])
        XCTAssertEqual(messages, ["not a regular file: " + dir.file("album/x.flac")])
        XCTAssertTrue(fileExists(dir.file("album/" + latin1)))

        // A Latin-1 playlist: a plain line and a file:// URL with the byte percent-encoded.
        let lines: [UInt8] = Array("album/".utf8) + [0xE9, 0x74, 0xE9] + Array(".wav\nfile://".utf8)
            + Array(dir.file("album/%E9t%E9.wav").utf8) + Array("\nalbum/x.flac\n".utf8)
        let list = open(cPath(dir.file("list.m3u")), O_WRONLY | O_CREAT | O_EXCL, 0o644)
        _ = lines.withUnsafeBytes { write(list, $0.baseAddress, $0.count) }
        close(list)
        let (listed, listMessages) = loader.load([dir.file("list.m3u")])
        XCTAssertEqual(listed.map(\.path), [dir.file("album/" + latin1), dir.file("album/" + latin1)])
        XCTAssertEqual(listMessages, ["playlist list.m3u: not a regular file: " + dir.file("album/x.flac")])

        let direct = loader.load([dir.file("album/x.flac")])
        XCTAssertEqual(direct.tracks.count, 0)
        XCTAssertEqual(direct.messages, ["not a regular file: " + dir.file("album/x.flac")])
    }

    /// The core's copy of the escape (for `file://` entries) agrees with JukeboxSystem's, byte
    /// string by byte string (seed printed; `JUKEBOX_PATH_SEED` replays a run).
    func testTheCoresEscapeAgreesWithTheSystems() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_PATH_SEED"].flatMap { UInt64($0) }
            ?? UInt64(UInt32.random(in: 0...UInt32.max))
        print("core path escape: seed \(seed) (JUKEBOX_PATH_SEED=\(seed) replays it)")
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        let pieces: [[UInt8]] = [[0xEE, 0xBE, 0x80], [0xEE, 0xBF, 0xBF], [0xC3, 0xA9], [0xF0, 0x9F, 0x8E, 0xB5], [0xED, 0xA0, 0x80]]
        for round in 0..<5000 {
            var bytes: [UInt8] = []
            for _ in 0..<(Int(next()) % 10) {
                // No "/" or ".": the path is resolved after decoding (`//`, `/./` fold).
                let byte = max(1, next())
                if next() & 1 == 0 { bytes += pieces[Int(next()) % pieces.count] } else if byte != 0x2F && byte != 0x2E { bytes.append(byte) }
            }
            let percent = bytes.map { "%" + String($0, radix: 16, uppercase: true).leftPadded }.joined()
            // "a" first: a combining mark right after "/" would join it into one Character, which
            // the core's Character-based path splitting does not see as "/" (a separate matter).
            let core = Library.parseM3U("file:///a" + percent + ".wav", playlistPath: "/p.m3u").first ?? ""
            let system = "/a" + FileSystemPath.string(bytes) + ".wav"
            guard core == system else {
                return XCTFail("seed \(seed), round \(round): \(bytes): core \(Array(core.unicodeScalars)) system \(Array(system.unicodeScalars))")
            }
        }
    }
}

private extension String {
    var leftPadded: String { count == 1 ? "0" + self : self }
}

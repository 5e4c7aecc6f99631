// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The binary playing internet radio from a local server (`RadioServer`, 127.0.0.1 only): station and
/// title in `status --json`, `--:--` for the length, a refused seek, a URL added by `ctl add` and
/// skipped with its reason, a dropped connection reconnected without leaving the entry. Plays
/// silently (`audio: null`, paced in real time). Skipped without python3.
final class RadioBinaryTests: RadioDaemonTestCase {

    func testAStationShowsItsNameAndTitleRefusesSeeksAndANonAudioURLIsSkipped() throws {
        let start = Date()
        let daemon = try startDaemon([server.url("/icy?metaint=8192")], extra: ["radio": ["bufferSeconds": 1]])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String)?.hasPrefix("Song ") == true }, "\(json())")
        print("radio binary: station and title shown " + String(format: "%.2f s", Date().timeIntervalSince(start))
              + " after the daemon was started")
        let status = json()
        XCTAssertEqual(status["artist"] as? String, "Test FM")
        XCTAssertEqual(status["stream"] as? Bool, true)
        XCTAssertEqual(status["phase"] as? String, "playing")
        XCTAssertTrue(status["duration"] is NSNull, "\(status)")
        XCTAssertTrue(try ctl("status").stdout.contains("/ --:--"))
        XCTAssertTrue(try ctl("seek", "+0:10").stdout.contains("cannot seek in a live stream"))

        let page = server.url("/page.html")
        XCTAssertTrue(try ctl("add", page).stdout.contains("1 track added"))
        _ = try ctl("next")
        XCTAssertTrue(waitFor(10) {
            (try? self.ctl("log", "50").stdout)?.contains("skipped \(page): not audio (the server sent text/html)") == true
        }, (try? ctl("log", "50").stdout) ?? "")
    }

    func testAnHTTPSStationPlaysWithTheConfigsCAFile() throws {
        // The config's radio.caFile reaches libcurl: the local server's self-signed certificate is
        // trusted, so the station plays (without it the URL is refused: RadioStreamTests).
        let tls: RadioServer
        do { tls = try RadioServer(mp3: dir + "/tone.mp3", folder: dir, tls: true) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let radio: [String: Any] = ["bufferSeconds": 1, "caFile": try XCTUnwrap(tls.certificatePath)]
        let daemon = try startDaemon([tls.url("/icy?metaint=8192")], extra: ["radio": radio])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String)?.hasPrefix("Song ") == true },
                      "\(json()) \((try? ctl("log", "20").stdout) ?? "")")
        XCTAssertEqual(json()["artist"] as? String, "Test FM")
        XCTAssertEqual(json()["phase"] as? String, "playing")
        XCTAssertFalse(try ctl("log", "50").stdout.contains("skipped"))
    }

    func testAnOggVorbisStationPlaysWithItsNameAndTitles() throws {
        // Icecast's Ogg: the same ICY framing around an Ogg Vorbis body, played by the Ogg codec.
        let vorbis = dir + "/tone.ogg"
        try TestAudio.write(path: vorbis, kind: .oggVorbis, frames: 132_300, sampleRate: 44100, channels: 2)
        let ogg: RadioServer
        do { ogg = try RadioServer(mp3: dir + "/tone.mp3", folder: dir, files: ["vorbis": (vorbis, "audio/ogg")]) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let daemon = try startDaemon([ogg.url("/icy?metaint=8192&file=vorbis")], extra: ["radio": ["bufferSeconds": 1]])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String)?.hasPrefix("Song ") == true }, "\(json())")
        let status = json()
        XCTAssertEqual(status["artist"] as? String, "Test FM")
        XCTAssertEqual(status["phase"] as? String, "playing")
        // The stream goes on past the end of the 3 s file (served again from its start: a new link
        // of the chain, new serial and headers), heard in real time on the silent output.
        XCTAssertTrue(waitFor(10) { ((self.json()["position"] as? Double) ?? 0) > 4.5 }, "\(json())")
        XCTAssertEqual(json()["phase"] as? String, "playing")
        let log: String = (try? ctl("log", "50").stdout) ?? ""
        XCTAssertFalse(log.contains("skipped"), log)
    }

    func testAnOggStationWithoutICYMetadataShowsEachLinksCommentTitle() throws {
        // Icecast's Ogg mounts carry no ICY blocks: the title is each chain link's comment header.
        // Served as a plain HTTP response (`/file/chain`: no icy-metaint), two 3 s links.
        let first = dir + "/first.ogg"
        try TestAudio.write(path: first, kind: .oggVorbis, frames: 132_300, tags: TestAudio.Tags(title: "First Song", artist: "Band A"))
        let second = dir + "/second.ogg"
        try TestAudio.write(path: second, kind: .oggVorbis, frames: 132_300, startFrame: 132_300,
                            tags: TestAudio.Tags(title: "Second Song"))
        var chain = Data(try Data(contentsOf: URL(fileURLWithPath: first)))
        chain.append(try Data(contentsOf: URL(fileURLWithPath: second)))
        let path = dir + "/chain.ogg"
        try chain.write(to: URL(fileURLWithPath: path))
        let ogg: RadioServer
        do { ogg = try RadioServer(mp3: dir + "/tone.mp3", folder: dir, files: ["chain": (path, "audio/ogg")]) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
        let daemon = try startDaemon([ogg.url("/file/chain")], extra: ["radio": ["bufferSeconds": 1]])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String) == "Band A - First Song" }, "\(json())")
        XCTAssertEqual(json()["stream"] as? Bool, true)
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String) == "Second Song" }, "\(json())")
        let log: String = (try? ctl("log", "50").stdout) ?? ""
        XCTAssertFalse(log.contains("skipped"), log)
    }

    func testADroppedConnectionIsReconnectedWithoutLeavingTheEntry() throws {
        // Every connection ends after 30000 bytes (about 2 s at 128 kbit/s).
        let daemon = try startDaemon([server.url("/icy?metaint=8192&drop=30000")], extra: ["radio": ["bufferSeconds": 1]])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        // The log counts reconnections as the ticks see them (one look may pass over a count).
        func reconnections() -> Int {
            let log = (try? ctl("log", "50").stdout) ?? ""
            return log.split(separator: "\n").compactMap { line -> Int? in
                guard let range = line.range(of: "stream reconnected (") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }.max() ?? 0
        }
        let seen = waitFor(15) { reconnections() >= 2 }
        let log: String = (try? ctl("log", "50").stdout) ?? ""
        let stderr: String = (try? String(contentsOfFile: daemon.errPath, encoding: .utf8)) ?? ""
        XCTAssertTrue(seen, "\(log)\n\(json())\n\(stderr)")
        let status = json()
        XCTAssertEqual(status["index"] as? Int, 1)
        XCTAssertEqual(status["phase"] as? String, "playing")
        XCTAssertFalse(try ctl("log", "50").stdout.contains("skipped"))
    }
}

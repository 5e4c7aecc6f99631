// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// libcurl (and libcrypto, which it and AES-128 HLS segments use), libmosquitto and libmicrohttpd
/// are loaded on first use (CLibraryLoader), not linked:
/// a player playing a file maps none of them (issue 33: their closure was most of the RSS over
/// the target), the first station loads libcurl, and without libcurl a station fails with the
/// reason while the player plays on. Reads the spawned binary's /proc/PID/maps.
final class LazyLibrariesTests: RadioDaemonTestCase {
    static let lazy = ["libcurl.so", "libcrypto.so", "libmosquitto.so", "libmicrohttpd.so"]

    /// The file names of the shared objects `pid` maps (empty once it is gone).
    func mappedLibraries(_ pid: Int32) -> Set<String> {
        // Read to the end: /proc files say size 0, and String(contentsOfFile:) stopped at a page of it.
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps"), let data = try? file.readToEnd() else { return [] }
        try? file.close()
        let maps = String(decoding: data, as: UTF8.self)
        let paths = maps.split(separator: "\n").compactMap { line in line.split(separator: " ", omittingEmptySubsequences: true).last }
        return Set(paths.filter { $0.contains(".so") }.map { String($0.split(separator: "/").last ?? $0) })
    }

    func loaded(_ prefix: String, in libraries: Set<String>) -> Bool { libraries.contains { $0.hasPrefix(prefix) } }

    func testAFileMapsNoNetworkLibraryAndTheFirstStationLoadsLibcurl() throws {
        let wav = dir + "/tone.wav"
        try TestAudio.write(path: wav, kind: .wav16, frames: 441_000, sampleRate: 44100, channels: 2)
        let daemon = try startDaemon([wav, server.url("/icy?metaint=8192")], extra: ["radio": ["bufferSeconds": 1]])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        let pid = daemon.process.processIdentifier
        let playing = mappedLibraries(pid)
        XCTAssertTrue(loaded("libasound.so", in: playing), "not the player's maps? \(playing.sorted())")
        for library in Self.lazy { XCTAssertFalse(loaded(library, in: playing), "\(library) mapped while playing a file: \(playing.sorted())") }

        _ = try ctl("next")
        XCTAssertTrue(waitFor(10) { (self.json()["title"] as? String)?.hasPrefix("Song ") == true }, "\(json())")
        let streaming = mappedLibraries(pid)
        XCTAssertTrue(loaded("libcurl.so.4", in: streaming), "no libcurl after a station played: \(streaming.sorted())")
        XCTAssertFalse(loaded("libmosquitto.so", in: streaming), "\(streaming.sorted())")
        XCTAssertFalse(loaded("libmicrohttpd.so", in: streaming), "\(streaming.sorted())")
    }

    func testWithoutLibcurlAStationFailsWithTheReasonAndThePlayerPlaysOn() throws {
        let wav = dir + "/tone.wav"
        try TestAudio.write(path: wav, kind: .wav16, frames: 441_000, sampleRate: 44100, channels: 2)
        let station = server.url("/icy?metaint=8192")
        let daemon = try startDaemon([wav, station, wav], extra: ["radio": ["bufferSeconds": 1]],
                                     environment: ["JUKEBOX_TEST_MISSING_LIBRARY": "libcurl.so.4"])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        _ = try ctl("next")
        let reason = "skipped \(station): libcurl.so.4 could not be loaded: "
        XCTAssertTrue(waitFor(10) { (try? self.ctl("log", "50").stdout)?.contains(reason) == true },
                      (try? ctl("log", "50").stdout) ?? "")
        XCTAssertTrue(waitFor(10) { (self.json()["index"] as? Int) == 3 && (self.json()["phase"] as? String) == "playing" }, "\(json())")
        XCTAssertTrue(daemon.process.isRunning, "the player ended")
        let libraries = mappedLibraries(daemon.process.processIdentifier)
        XCTAssertTrue(loaded("libasound.so", in: libraries), "not the player's maps? \(libraries.sorted())")
        XCTAssertFalse(loaded("libcurl.so", in: libraries), "\(libraries.sorted())")
    }

    func testMQTTLoadsLibmosquittoAndWithoutItThePlayerSaysSoAndPlaysOn() throws {
        let wav = dir + "/tone.wav"
        try TestAudio.write(path: wav, kind: .wav16, frames: 441_000, sampleRate: 44100, channels: 2)
        // No broker on port 1: the bridge only needs to start (it retries the connection).
        let mqtt: [String: Any] = ["host": "127.0.0.1", "port": 1, "topic": "jukebox/lazy"]
        var daemon = try startDaemon([wav], extra: ["mqtt": mqtt])
        let bridged = mappedLibraries(daemon.process.processIdentifier)
        daemon.process.terminate()
        _ = daemon.wait(timeout: 20)
        XCTAssertTrue(loaded("libmosquitto.so", in: bridged), "no libmosquitto with MQTT on: \(bridged.sorted())")
        XCTAssertFalse(loaded("libcurl.so", in: bridged), "\(bridged.sorted())")

        daemon = try startDaemon([wav], extra: ["mqtt": mqtt], environment: ["JUKEBOX_TEST_MISSING_LIBRARY": "libmosquitto.so.1"])
        defer { _ = daemon.wait(timeout: 0); daemon.process.terminate() }
        let reason = "mqtt: libmosquitto.so.1 could not be loaded: "
        XCTAssertTrue(waitFor(10) { (try? self.ctl("log", "50").stdout)?.contains(reason) == true }, (try? ctl("log", "50").stdout) ?? "")
        XCTAssertEqual(json()["phase"] as? String, "playing")
        XCTAssertTrue(daemon.process.isRunning, "the player ended")
    }
}

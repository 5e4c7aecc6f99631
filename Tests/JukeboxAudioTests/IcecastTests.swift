// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The engine playing a mount of a real Icecast server (`IcecastServer`: Debian's icecast2 run by
/// the test on 127.0.0.1, fed by a paced source client): the audio reaches the test device, the
/// station's name comes from Icecast's `icy-name`, and a title set through Icecast's admin API
/// becomes the stream's title. Skipped without icecast2 or python3. Every wait is bounded.
final class IcecastTests: ScratchCase {
    /// Icecast run by the test, or a skip where it cannot run (no icecast2 or python3).
    private func startIcecast() throws -> IcecastServer {
        do { return try IcecastServer() } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
    }

    /// What the engine's stream has found, for a failure message.
    private static func facts(_ engine: AudioEngine) -> String {
        engine.streamFacts().map { "stream: \($0.facts)" } ?? "no stream open"
    }

    /// An engine playing into a real-time test device, with a 1 s stream buffer and a quick back-off.
    private func realTimeEngine(_ log: ReportLog) throws -> (TestPCM, AudioEngine) {
        let pcm = try TestPCM(directory: scratch.path("device"), speed: 1)
        let engine = makeEngine(log) { AlsaOutput(device: pcm.name, configText: pcm.configText) }
        var settings = StreamSettings()
        settings.bufferSeconds = 1
        settings.backoff = 0.1...0.4
        engine.setStreamSettings(settings)
        return (pcm, engine)
    }

    func testAnIcecastMountPlaysWithItsStationNameAndAnAdminTitleUpdate() throws {
        // 3 s of test audio looped by the source at the file's own byte rate (a live encoder's pace).
        let mp3 = try scratch.audio(.mp3, frames: 132_300)
        let bytesPerSecond = max(1, scratch.bytes(mp3).count / 3)
        let icecast = try startIcecast()
        // Installed and started: from here on a problem is a failure, not a skip.
        try icecast.startSource(mount: "/m", mp3: mp3, name: "Jukebox Test FM", bytesPerSecond: bytesPerSecond)
        let log = ReportLog()
        let (pcm, engine) = try realTimeEngine(log)
        defer { engine.shutdown() }
        let start = Date()
        engine.play(id: 1, path: icecast.url("/m"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 1) }, "\(log.all) \(Self.facts(engine)) \(icecast.diagnosis())")
        let firstSound = Date().timeIntervalSince(start)
        XCTAssertTrue(TestPCM.wait(timeout: 10) { (engine.position()?.seconds ?? 0) >= 1.5 }, "\(log.all)")
        let facts = try XCTUnwrap(engine.streamFacts()).facts
        XCTAssertEqual(facts.station, "Jukebox Test FM")
        XCTAssertEqual(facts.contentType, "audio/mpeg")
        XCTAssertNotEqual(facts.title, "Title Two")

        let asked = Date()
        XCTAssertEqual(try icecast.updateTitle(mount: "/m", song: "Title Two"), "200")
        XCTAssertTrue(TestPCM.wait(timeout: 15) { engine.streamFacts()?.facts.title == "Title Two" },
                      "title: \(String(describing: engine.streamFacts()?.facts.title)) \(icecast.errorLog().suffix(600))")
        let titleLatency = Date().timeIntervalSince(asked)
        let heard = engine.position()?.seconds ?? 0
        engine.shutdown()
        // The audio reached the device: at least a second of it, and not silence.
        let recording = pcm.recording()
        XCTAssertGreaterThan(recording.count, 44100 * 8)
        XCTAssertTrue(recording.contains { $0 != 0 }, "only silence reached the device")
        XCTAssertFalse(log.all.contains { if case .failed = $0 { true } else { false } }, "\(log.all)")
        let sound = String(format: "%.2f s", firstSound), title = String(format: "%.2f s", titleLatency)
        let heardText = String(format: "%.1f s", heard)
        print("icecast first sound: \(sound) from play to the first frame out (1 s buffer, \(bytesPerSecond) B/s source, "
              + "16 KiB burst); admin title update shown after \(title) (\(heardText) heard)")
    }

    func testAnIcecastOggMountShowsTheTitlesOfItsLinksComments() throws {
        // Icecast puts no ICY metadata into an Ogg mount: the titles travel in each link's Vorbis
        // comment header. Two tagged 3 s links, looped by the source at their own byte rate.
        let first = try scratch.audio(.oggVorbis, frames: 132_300, name: "one", tags: TestAudio.Tags(title: "Icecast One", artist: "Ogg Band"))
        let second = try scratch.audio(.oggVorbis, frames: 132_300, name: "two", tags: TestAudio.Tags(title: "Icecast Two"))
        var chain: [UInt8] = scratch.bytes(first)
        chain += scratch.bytes(second)
        let path = scratch.path("chain.ogg")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(chain)))
        let bytesPerSecond = max(1, chain.count / 6)
        let icecast = try startIcecast()
        try icecast.startSource(mount: "/ogg", mp3: path, name: "Jukebox Ogg FM", bytesPerSecond: bytesPerSecond,
                                contentType: "audio/ogg")
        let log = ReportLog()
        let (pcm, engine) = try realTimeEngine(log)
        defer { engine.shutdown(); withExtendedLifetime(pcm) {} }  // the device lives as long as the engine plays
        engine.play(id: 1, path: icecast.url("/ogg"), from: 0, paused: false)
        XCTAssertTrue(log.wait(timeout: 10) { $0 == .started(id: 1) }, "\(log.all) \(Self.facts(engine)) \(icecast.diagnosis())")
        XCTAssertEqual(engine.streamFacts()?.facts.contentType, "audio/ogg", Self.facts(engine))
        // Joined mid-link: that link's headers come first (Icecast sends them), then the next link's.
        var seen: Set<String> = []
        let both = TestPCM.wait(timeout: 20) {
            if let title = engine.streamFacts()?.facts.title { seen.insert(title) }
            return seen.isSuperset(of: ["Ogg Band - Icecast One", "Icecast Two"])
        }
        XCTAssertTrue(both, "titles seen: \(seen) \(log.all) \(Self.facts(engine)) \(icecast.diagnosis())")
        XCTAssertFalse(log.all.contains { if case .failed = $0 { true } else { false } }, "\(log.all)")
    }
}

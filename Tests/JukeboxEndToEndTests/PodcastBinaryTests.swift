// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Podcasts in the binary, against a feed and two MP3 episodes served by the local `RadioServer`
/// (python3's http.server on 127.0.0.1, the test's own, gone with it): the feed fetched at start,
/// both episodes downloaded within the budget, `podcast NAME` playing the oldest not yet played
/// from its file; the server gone and the player killed, the next start keeps what was known and
/// `podcast NAME` resumes the episode mid-way, from its file. Skipped without python3.
final class PodcastBinaryTests: DaemonTestCase {
    private var server: RadioServer!

    override func tearDown() {
        server = nil
        super.tearDown()
    }

    static let feed = """
        <?xml version="1.0"?><rss version="2.0"><channel><title>Local Show</title>
        <item><title>Episode Two</title><guid>e2</guid><pubDate>Tue, 05 Mar 2024 06:00:00 GMT</pubDate><enclosure url="ep2.mp3" type="audio/mpeg"/></item>
        <item><title>Episode One</title><guid>e1</guid><pubDate>Mon, 04 Mar 2024 06:00:00 GMT</pubDate><enclosure url="ep1.mp3" type="audio/mpeg"/></item>
        </channel></rss>
        """

    private func start(_ config: String) throws -> Jukebox.Running {
        try Jukebox.start(["run", "--config", config])
    }

    /// The podcasts file's text ("" when there is none).
    private func podcastsFile() -> String { (try? String(contentsOfFile: dir + "/state.json.podcasts", encoding: .utf8)) ?? "" }

    /// The seconds into the track `status` shows (`▶ Episode One  0:07 / 0:10 …`), or nil.
    private func elapsed() -> Int? {
        guard let line = try? ctl("status").stdout, let time = line.split(separator: " ").first(where: { $0.contains(":") }) else { return nil }
        let parts = time.split(separator: ":").compactMap { Int($0) }
        return parts.count == 2 ? parts[0] * 60 + parts[1] : nil
    }

    /// Serves the feed and its two MP3 episodes of `episodeFrames` frames from `RadioServer`.
    private func serve(episodeFrames: Int) throws {
        let served = dir + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        for name in ["ep1", "ep2"] {
            try TestAudio.write(path: served + "/\(name).mp3", kind: .mp3, frames: episodeFrames, sampleRate: 44100, channels: 2)
        }
        try Self.feed.write(toFile: served + "/feed.xml", atomically: true, encoding: .utf8)
        let tone = dir + "/tone.mp3"
        try TestAudio.write(path: tone, kind: .mp3, frames: 4410, sampleRate: 44100, channels: 2)
        do { server = try RadioServer(mp3: tone, folder: dir, servedFolder: served) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
    }

    func testAFeedIsFetchedDownloadedPlayedAndResumedWhenTheServerIsGone() throws {
        try serve(episodeFrames: 441_000)
        let config = dir + "/c.json"
        // In typed parts: Swift 6.0.3 infers no nested literal of mixed types.
        let feed: [String: Any] = ["name": "Local Show", "url": server.url("/dir/feed.xml"), "order": "oldest", "download": 2]
        let podcasts: [String: Any] = ["feeds": [feed], "budgetMiB": 10]
        let object: [String: Any] = ["audio": "null", "state": dir + "/state.json", "socket": socket as Any, "podcasts": podcasts]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))

        var daemon = try start(config)
        // Fetched at start, then both episodes downloaded, one at a time.
        XCTAssertTrue(waitFor(60) { podcastsFile().components(separatedBy: "\"bytes\"").count == 3 }, podcastsFile())
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: dir + "/state.json.episodes")) ?? []
        XCTAssertEqual(files.filter { $0.hasSuffix(".mp3") }.count, 2, "\(files)")
        XCTAssertFalse(files.contains { $0.hasSuffix(".tmp") }, "no temporary file left")
        // The oldest not yet played, from its file.
        XCTAssertEqual(try ctl("podcast", "Local", "Show").status, 0)
        XCTAssertTrue(waitFor(30) { (try? ctl("status"))?.stdout.hasPrefix("▶ Episode One") == true })
        XCTAssertTrue(waitFor(30) { (elapsed() ?? 0) >= 3 }, "plays on")
        _ = try ctl("pause")
        XCTAssertTrue(waitFor(10) { podcastsFile().contains("\"e1\":{\"played\":false,\"position\":") }, podcastsFile())
        let heard = elapsed() ?? 0

        // The server gone, the player killed and started again: the fetch fails, what was known stays.
        server = nil
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.wait(timeout: 10)
        daemon = try start(config)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 10) }
        XCTAssertTrue(waitFor(30) { (try? ctl("status"))?.status == 0 })
        XCTAssertEqual(try ctl("podcast", "Local", "Show").status, 0)
        XCTAssertTrue(waitFor(30) { (try? ctl("status"))?.stdout.hasPrefix("▶ Episode One") == true })
        let resumed = elapsed() ?? 0
        XCTAssertGreaterThanOrEqual(resumed, max(heard - 1, 2), "resumed mid-episode, from its file")
        // The fetch at start fails on its own thread and is saved when it has: not before the play.
        XCTAssertTrue(waitFor(30) { podcastsFile().contains("\"lastError\"") }, "the failed fetch is said and the episodes kept: \(podcastsFile())")
        XCTAssertEqual(podcastsFile().components(separatedBy: "\"bytes\"").count, 3)
    }

    /// The episodes streamed (not downloaded), driven by `jukebox ctl` and python-mpd2 (Home
    /// Assistant's MPD library): an episode paused mid-way and asked for again resumes at its
    /// place from its URL (a range request); MPD lists `podcast://` in `urlhandlers`, the
    /// podcasts as directories, a podcast's episodes as songs, and `load`s and `addid`s them.
    static let mpdScript = #"""
    import sys, mpd
    c = mpd.MPDClient()
    c.timeout = 5
    c.connect("127.0.0.1", int(sys.argv[1]))
    print(c.urlhandlers())
    print([d["directory"] for d in c.lsinfo("podcast://")])
    episodes = c.lsinfo("podcast://Local Show")
    print([(e["title"], e["file"].startswith("podcast://Local Show/"), e.get("played"), "place" in e) for e in episodes])
    c.clear()
    c.load("podcast://Local Show")
    print([s["title"] for s in c.playlistinfo()])
    c.clear()
    print(c.addid(episodes[1]["file"]).isdigit(), [s["title"] for s in c.playlistinfo()])
    for uri in ["podcast://Nope", "podcast://Local Show/0000"]:
        try:
            c.lsinfo(uri) if uri.count("/") == 2 else c.addid(uri)
        except mpd.CommandError as e:
            print("refused:", e)
    """#

    func testStreamedEpisodesResumeAtTheirPlaceAndMPDListsThem() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
              (try? Process.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", "import mpd"]).waitAndExit()) == 0 else {
            throw missingPeer("python3-mpd is not installed; board/setup.sh installs it")
        }
        try serve(episodeFrames: 44100 * 30)
        let port = try MPCTests.freePort()
        let config = dir + "/c.json"
        let feed: [String: Any] = ["name": "Local Show", "url": server.url("/dir/feed.xml"), "order": "oldest"]
        let podcasts: [String: Any] = ["feeds": [feed]]
        let object: [String: Any] = ["audio": "null", "state": dir + "/state.json", "socket": socket as Any, "podcasts": podcasts,
                                     "mpd": ["port": port]]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try start(config)
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 10) }
        XCTAssertTrue(waitFor(60) { podcastsFile().contains("Episode Two") }, podcastsFile())

        // Streamed from its URL; paused at a place, then asked for again: it resumes there.
        XCTAssertEqual(try ctl("podcast", "Local", "Show").status, 0)
        XCTAssertTrue(waitFor(30) { (try? ctl("status"))?.stdout.hasPrefix("▶ Episode One") == true })
        XCTAssertTrue(waitFor(30) { (elapsed() ?? 0) >= 5 }, "plays on")
        _ = try ctl("pause")
        XCTAssertTrue(waitFor(10) { podcastsFile().contains("\"e1\":{\"played\":false,\"position\":") }, podcastsFile())
        let heard = elapsed() ?? 0
        _ = try ctl("stop")
        _ = try ctl("clear")
        XCTAssertEqual(try ctl("podcast", "Local", "Show").status, 0)
        XCTAssertTrue(waitFor(30) { (try? ctl("status"))?.stdout.hasPrefix("▶ Episode One") == true })
        XCTAssertTrue(waitFor(30) { (elapsed() ?? 0) > heard }, "plays on from the place")
        let resumed = elapsed() ?? 0
        XCTAssertGreaterThanOrEqual(resumed, heard, "resumed mid-episode, from its URL")
        XCTAssertLessThan(resumed, heard + 10, "resumed mid-episode, from its URL")
        _ = try ctl("pause")

        try Self.mpdScript.write(toFile: dir + "/script.py", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [dir + "/script.py", String(port)]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, errors)
        XCTAssertEqual(text, """
        ['podcast://']
        ['podcast://Local Show']
        [('Episode One', True, None, True), ('Episode Two', True, None, False)]
        ['Episode One', 'Episode Two']
        True ['Episode Two']
        refused: [50@0] {lsinfo} No such directory
        refused: [50@0] {addid} No such song

        """)
    }
}

extension Process {
    /// Waits for the end and gives the exit status.
    fileprivate func waitAndExit() -> Int32 {
        waitUntilExit()
        return terminationStatus
    }
}

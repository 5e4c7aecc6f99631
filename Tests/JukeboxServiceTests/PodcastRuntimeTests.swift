// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// Podcasts through a running loop: the core's fetches reach the port at start, a fetch's
/// outcome comes back through the mailbox, `podcast NAME` on the control socket and MPD's `add
/// podcast://NAME` queue the episodes, an unknown podcast is refused with the reason.
final class PodcastRuntimeTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    /// The port, recording what it was asked (from the loop's thread).
    final class RecordingPodcasts: PodcastPort, @unchecked Sendable {
        private let lock = NSLock()
        private var asked: [String] = []
        func fetch(name: String, url: String) { lock.withLock { asked.append("fetch \(name) \(url)") } }
        func download(name: String, id: String, url: String, file: String, maxBytes: Int64) { lock.withLock { asked.append("download \(id)") } }
        func delete(path: String) { lock.withLock { asked.append("delete \(path)") } }
        func finish() {}
        var all: [String] { lock.withLock { asked } }
    }

    func reply(_ c: ControlClient) -> [String]? {
        var lines: [String] = []
        while let line = c.readLine(timeout: 10) {
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK") { return lines }
        }
        return nil
    }

    func testFetchedEpisodesArePlayedAndQueuedFromEveryFace() throws {
        let dir = TempDir()
        var settings = Settings()
        settings.podcasts.feeds = [PodcastSource(name: "Bedtime Stories", url: "https://stories.example/feed.xml")]
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("ctl"))
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        let port = RecordingPodcasts()
        runtime.podcasts = port
        var mpd = MPDSettings()
        mpd.binds = [dir.file("mpd")]
        XCTAssertEqual(runtime.openMPD(mpd, musicFolders: [dir.path]), [])
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        XCTAssertTrue(waitFor(10) { port.all == ["fetch Bedtime Stories https://stories.example/feed.xml"] }, "\(port.all)")
        let ctl = try ControlClient(path: dir.file("ctl"))
        let none = ctl.request("podcast Bedtime Stories", timeout: 10)
        XCTAssertEqual(none, "ok ■ queue empty  vol 100  (Bedtime Stories: no episodes yet)")
        let episodes = (1...2).map { PodcastEpisode(id: "e\($0)", title: "Story \($0)", url: "https://cdn.example/\($0).mp3", published: Int64($0)) }
        mailbox.post(.podcastFetched(name: "Bedtime Stories", title: "Stories", episodes: episodes))
        XCTAssertTrue(waitFor(10) { ctl.request("podcast Bedtime Stories", timeout: 10)?.contains("Story 2") == true }, "newest first")
        XCTAssertEqual(ctl.request("podcasts --json", timeout: 10),
                       #"ok {"podcasts":[{"name":"Bedtime Stories","title":"Stories","episodes":2,"unplayed":2,"downloaded":0,"next":"Story 2"}]}"#)
        let c = try ControlClient(path: dir.file("mpd"))
        XCTAssertEqual(c.readLine(timeout: 5)?.hasPrefix("OK MPD"), true)
        XCTAssertTrue(c.send("add \"podcast://Bedtime Stories\""))
        XCTAssertEqual(reply(c), ["OK"])
        XCTAssertTrue(c.send("status"))
        XCTAssertEqual(reply(c)?.contains("playlistlength: 4"), true, "two episodes queued after the two playing")
        XCTAssertTrue(c.send("add podcast://Nope"))
        XCTAssertEqual(reply(c), ["ACK [50@0] {add} no podcast \"Nope\""])
    }

    /// The podcasts file is read off the loop: while the read is held the loop answers, a
    /// `podcast NAME` waits for it, and once it is read the episode plays at the place it holds.
    func testThePodcastsFileIsReadOffTheLoop() throws {
        let dir = TempDir()
        var settings = Settings()
        settings.podcasts.feeds = [PodcastSource(name: "Bedtime Stories", url: "https://stories.example/feed.xml")]
        let episodes = (1...2).map { PodcastEpisode(id: "e\($0)", title: "Story \($0)", url: "https://cdn.example/\($0).mp3", published: Int64($0)) }
        let saved = PodcastFeed(name: "Bedtime Stories", title: "Stories", episodes: episodes, places: ["e2": EpisodePlace(position: 42)])
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("ctl"))
        let runtime = Runtime(state: State(settings: settings), audio: audio, store: StateStore(path: dir.file("state.json")),
                              status: RecordingStatus(), log: Log(level: .error), mailbox: mailbox, control: control)
        runtime.podcasts = RecordingPodcasts()
        let held = DispatchSemaphore(value: 0)
        runtime.readPodcasts = { _ in
            held.wait()
            return PodcastFile.Loaded(podcasts: [saved], messages: [])
        }
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            box.runtime.mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        let ctl = try ControlClient(path: dir.file("ctl"))
        XCTAssertEqual(ctl.request("podcast Bedtime Stories", timeout: 10), "ok ■ queue empty  vol 100", "answered while the file is read; waiting")
        held.signal()
        XCTAssertTrue(waitFor(10) { ctl.request("status", timeout: 10)?.contains("Story 2") == true }, "played once read")
        let play = audio.calls.compactMap { call -> (String, Double)? in
            if case .play(_, let file, let at, _, _, _) = call { return (file, at) } else { return nil }
        }.first
        XCTAssertEqual(play?.0, "2.mp3", "the newest episode")
        XCTAssertEqual(play?.1, 42, "at the place the file holds")
    }
}

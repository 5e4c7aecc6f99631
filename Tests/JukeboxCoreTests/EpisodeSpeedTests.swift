// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// A podcast episode played from its URL is a file on a server: it plays at the queue's speed
/// (a card's, `speed X`) as a downloaded one does, in place when the speed changes; a live
/// stream stays at 1 whatever the queue's speed.
extension PodcastReduceTests {
    static let live = "http://radio.example/live"

    /// A stopped queue of `paths` (episode 3's URL and a live stream, in that order or the other)
    /// at the queue's speed 1.5 (a card's), News's episodes known: `play` starts the first.
    private func stoppedAt15(_ paths: [String]) -> (CoreHarness, [TrackInfo]) {
        var s = State(settings: Self.settings)
        s.bookmarksReady = true
        s.podcastsReady = true
        s.podcasts = [PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes)]
        let tracks = paths.map { TrackInfo(path: $0, title: $0 == Self.live ? "Radio" : "Episode 3") }
        s.queue = tracks.enumerated().map { Track(id: UInt64($0.offset + 1), info: $0.element) }
        s.order = [1, 2]
        s.nextTrackID = 3
        s.queueRevision = 1
        s.queueSpeed = 1.5
        s.savedMark = mark(revision: 1, current: nil, phase: .stopped, speed: 1.5)
        s.shown = status("stopped", of: 2)
        return (CoreHarness(s), tracks)
    }

    func testAStreamedEpisodePlaysAtTheQueuesSpeedAndALiveStreamAt1() {
        let episode = "https://cdn.example/3.mp3"
        // The episode first: started at 1.5, the live stream handed at 1.
        let (h, tracks) = stoppedAt15([episode, Self.live])
        // The episode's place (its start) is noted as it starts.
        let noted = [PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                 places: ["ep3": EpisodePlace(position: 0)])]
        plays(h, tracks, shown: status("playing", title: "Episode 3", elapsed: "0:00", index: 1, of: 2, speed: "1.5"),
              start: .startTrack(playID: 1, path: episode, at: 0, paused: false,
                                 next: NextPlay(playID: 2, path: Self.live), speed: 1.5),
              noted: noted)
        // The live stream first: started at 1, the episode handed at 1.5.
        let (l, liveFirst) = stoppedAt15([Self.live, episode])
        plays(l, liveFirst, shown: status("playing", title: "Radio", elapsed: "0:00", index: 1, of: 2),
              start: .startTrack(playID: 1, path: Self.live, at: 0, paused: false,
                                 next: NextPlay(playID: 2, path: episode, speed: 1.5)))
    }

    /// `play` on `stoppedAt15`: the first entry starts as play 1 (`start`), the second handed as
    /// play 2, the place saved with the queue's speed; an episode started notes its place.
    private func plays(_ h: CoreHarness, _ tracks: [TrackInfo], shown: StatusView, start: Command, noted: [PodcastFeed]? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        let persist: [Command] = noted.map { [.persistPodcasts($0)] } ?? []
        h.send(.play, file: file, line: line, {
            $0.cursor = 0
            $0.phase = .playing
            $0.nextPlayID = 3
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.handedNext = PlayRef(playID: 2, trackID: 2)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, speed: 1.5)
            if let noted { $0.podcasts = noted }
            $0.shown = shown
        }, commands: [start, .persistPlace(Snapshot(tracks: tracks, current: 0, phase: .playing, speed: 1.5))]
            + persist + [.render(shown)])
    }

    /// `speed 1.5` while episode 3 streams from its place: the play changes speed in place (no
    /// new range request), episode 2 is handed again at 1.5, the queue file keeps the speed.
    func testSpeedWhileAnEpisodeStreamsChangesItInPlace() {
        let (h, tracks, _) = Self.streamsEpisode3At125()
        h.send(.trackStarted(playID: 1), { $0.streamStarted = true }, commands: [])
        let faster = status("playing", title: "Episode 3", elapsed: "2:05", duration: "10:00", index: 1, of: 3, speed: "1.5")
        h.send(.setSpeed(1.5), {
            $0.queueSpeed = 1.5
            $0.nextPlayID = 4
            $0.handedNext = PlayRef(playID: 3, trackID: 2)
            $0.handedBefore = HandedBefore(ref: PlayRef(playID: 2, trackID: 2), after: 1)
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, speed: 1.5)
            $0.shown = faster
        }, commands: [
            .setSpeed(playID: 1, speed: 1.5),
            .setNext(playID: 3, path: "https://cdn.example/2.mp3", speed: 1.5),
            .persist(Snapshot(tracks: tracks, current: 0, position: 125, phase: .playing, speed: 1.5)),
            .render(faster),
        ])
    }

    /// `podcast News` on a stopped player whose podcasts file holds episode 3's place, 2:05:
    /// episode 3 streams from there (episode 2 handed). Returns the harness, the queue's entries
    /// and News as saved.
    static func streamsEpisode3At125() -> (CoreHarness, [TrackInfo], PodcastFeed) {
        var s = State(settings: Self.settings)
        s.shown = status("stopped")
        s.bookmarksReady = true
        s.podcastsReady = true
        let saved = PodcastFeed(name: "News", order: .newest, title: "The News", episodes: Self.episodes,
                                places: ["ep3": EpisodePlace(position: 125)])
        s.podcasts = [saved, PodcastFeed(name: "Serial", order: .oldest)]
        let h = CoreHarness(s)
        let tracks = [3, 2, 1].map {
            TrackInfo(path: "https://cdn.example/\($0).mp3", title: "Episode \($0)", album: "The News", duration: 600)
        }
        let playing = status("playing", title: "Episode 3", elapsed: "2:05", duration: "10:00", index: 1, of: 3)
        h.send(.playPodcast(name: "News"), {
            Self.playsEpisode3(&$0, at: 125, tracks: tracks, shown: playing)
        }, commands: Self.episode3Commands(at: 125, tracks: tracks, shown: playing))
        return (h, tracks, saved)
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Card swipes: the map, unknown cards, the same card read again, the second swipe, stale reads.
/// Times are the reader's (kernel) timestamps carried by `cardRead`.
final class CardTests: XCTestCase {
    private let album = CardAction.play(["/music/album"])
    private let other = CardAction.play(["/music/other", "/music/extra.flac"])

    private func map() -> CardMap {
        CardMap(["A1": album, "B2": other, "C3": .command(.volumeDown), "D4": .command(.power), "E5": .command(.togglePlay)])
    }

    private func settings(_ second: SecondSwipe = .toggle) -> Settings {
        var s = Settings()
        s.cards.secondSwipe = second
        // Bookmarks of cards are BookmarkTests'; here every swipe starts its folder from the top.
        s.bookmarks = .never
        return s
    }

    /// An empty stopped player with the test map loaded.
    private func empty(_ second: SecondSwipe = .toggle) -> CoreHarness {
        var s = State(settings: settings(second))
        s.shown = status("stopped")
        s.cards.map = map()
        return CoreHarness(s)
    }

    /// Card A1 swiped at `at` on an empty player: its folder is read, then its two tracks play
    /// (what `playing(2)` holds, with A1 active over queue entries 1 and 2).
    private func swipeAlbum(_ h: CoreHarness, at: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
        h.cardA1Plays(readAs: "a1", at: at, messages: ["/music/album/cover.jpg: not audio"], file: file, line: line)
    }

    func testACardOnTheMapReadsItsFolderOffTheLoopThenPlaysIt() {
        let h = empty()
        swipeAlbum(h)
        var expected = playing(2, settings: settings())
        expected.cards.map = map()
        expected.cards.lastReadID = "A1"
        expected.cards.lastReadAt = 10
        expected.cards.active = ActiveCard(id: "A1", tracks: 1..<3)
        XCTAssertEqual(h.state, expected, "the card's tracks play as a queue loaded by hand would")
    }

    func testAnUnknownCardIsNamedOnTheStatusAndRememberedForAssigning() {
        let h = empty()
        h.send(.cardRead(id: "0012345678", at: 5), {
            $0.cards.lastReadID = "0012345678"
            $0.cards.lastReadAt = 5
            $0.cards.lastUnknown = "0012345678"
            $0.message = "new card 0012345678"
            $0.shown = status("stopped", message: "new card 0012345678")
        }, commands: [
            .report("new card 0012345678: assign it with jukebox ctl card assign PATH|COMMAND"),
            .render(status("stopped", message: "new card 0012345678")),
        ])
        // A second unknown card replaces the first as the one to assign.
        h.send(.cardRead(id: "77", at: 5.5), {
            $0.cards.lastReadID = "77"
            $0.cards.lastReadAt = 5.5
            $0.cards.lastUnknown = "77"
            $0.message = "new card 77"
            $0.shown = status("stopped", message: "new card 77")
        }, commands: [
            .report("new card 77: assign it with jukebox ctl card assign PATH|COMMAND"),
            .render(status("stopped", message: "new card 77")),
        ])
        // A map without it leaves it to assign; a map with it clears it.
        h.send(.cardsLoaded(CardMap(["A1": album])), { $0.cards.map = CardMap(["A1": album]) }, commands: [])
        h.send(.cardsLoaded(CardMap(["77": album])), {
            $0.cards.map = CardMap(["77": album])
            $0.cards.lastUnknown = nil
        }, commands: [])
        // Now it plays.
        h.cardLoads("77", at: 9, paths: ["/music/album"])
    }

    func testTheSameIdWithinTheDelayIsOneSwipeHoweverLongTheCardLies() {
        let h = empty()
        swipeAlbum(h, at: 10)
        // A reader that repeats every 0.6 s while the card lies on it: one swipe, the delay
        // counting from the latest read.
        for at in [10.6, 11.2, 11.8, 12.4] {
            h.send(.cardRead(id: "A1", at: at), { $0.cards.lastReadAt = at }, commands: [])
        }
        // Lifted and laid again 1 s after the last read: a second swipe (toggle: pause).
        h.pauseTrack1(of: 2, by: .cardRead(id: "A1", at: 13.4), also: { $0.cards.lastReadAt = 13.4 })
        // And again: play.
        h.resumeTrack1(of: 2, by: .cardRead(id: "A1", at: 20), also: { $0.cards.lastReadAt = 20 })
    }

    func testAnotherCardBetweenTwoReadsMakesTheSecondASwipe() {
        let h = empty()
        swipeAlbum(h, at: 10)
        // C3 (volume down) at 10.2, A1 again at 10.4: not the same swipe as the one at 10.
        h.setVolume(95, playingTrack1Of: 2, by: .cardRead(id: "C3", at: 10.2), also: {
            $0.cards.lastReadID = "C3"
            $0.cards.lastReadAt = 10.2
        })
        h.send(.cardRead(id: "A1", at: 10.4), {
            $0.cards.lastReadID = "A1"
            $0.cards.lastReadAt = 10.4
            $0.phase = .paused
            $0.savedMark = mark(revision: 1, current: 1, phase: .paused, volume: 95)
            $0.shown = status("paused", song: 1, index: 1, of: 2, volume: 95)
        }, commands: [
            .pauseOutput,
            .startTimer(.releaseDevice, after: 3),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .paused, volume: 95)),
            .render(status("paused", song: 1, index: 1, of: 2, volume: 95)),
        ])
    }

    func testAReaderClockGoingBackIsANewSwipe() {
        // A replugged reader may start its own count again: an earlier time is not "within the delay".
        let h = empty(.next)
        swipeAlbum(h, at: 10)
        h.nextToTrack2(of: 2, by: .cardRead(id: "A1", at: 9.9), also: { $0.cards.lastReadAt = 9.9 })
    }

    func testSecondSwipeNextSkipsAndRestartGoesBackToTheCardsFirstTrack() {
        let h = empty(.restart)
        swipeAlbum(h, at: 10)
        h.nextToTrack2(of: 2)
        h.heard(3, at: 30, shows: status("playing", song: 2, index: 2, of: 2, elapsed: "0:30"))
        h.send(.cardRead(id: "A1", at: 40), {
            $0.cards.lastReadAt = 40
            $0.cursor = 0
            $0.position = 0
            $0.loaded = PlayRef(playID: 4, trackID: 1)
            $0.handedNext = PlayRef(playID: 5, trackID: 2)
            $0.nextPlayID = 6
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 4, path: "/music/1.flac", at: 0, paused: false, next: NextPlay(playID: 5, path: "/music/2.flac")),
            .persistPlace(Snapshot(tracks: [info(1), info(2)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 2)),
        ])
    }

    func testSecondSwipeNoneDoesNothing() {
        let h = empty(.none)
        swipeAlbum(h, at: 10)
        h.send(.cardRead(id: "A1", at: 12), { $0.cards.lastReadAt = 12 }, commands: [])
    }

    func testACardPlayedToItsEndOrStoppedStartsAfreshWhenSwipedAgain() {
        let h = empty()
        swipeAlbum(h, at: 10)
        h.stopTrack1(of: 2)
        h.cardLoads("A1", at: 15, paths: ["/music/album"])
    }

    func testAnotherCardsTracksReplaceTheQueueAndThePreviousCardIsNoLongerPlaying() {
        let h = empty()
        swipeAlbum(h, at: 10)
        h.cardLoads("B2", at: 11, paths: ["/music/other", "/music/extra.flac"])
        h.send(.cardTracks(card: "B2", tracks: [info(5)], messages: []), {
            $0.cards.loading = nil
            $0.cards.active = ActiveCard(id: "B2", tracks: 3..<4)
            $0.queue = [Track(id: 3, info: info(5))]
            $0.order = [3]
            $0.nextTrackID = 4
            $0.queueRevision = 2
            $0.loaded = PlayRef(playID: 3, trackID: 3)
            $0.handedNext = nil
            $0.nextPlayID = 4
            $0.savedMark = mark(revision: 2, current: 3, phase: .playing)
            $0.shown = status("playing", song: 5, index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .startTrack(playID: 3, path: "/music/5.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(5)], current: 0, phase: .playing)),
            .render(status("playing", song: 5, index: 1, of: 1)),
        ])
        // A1 again is a first swipe: its folder is read again.
        h.cardLoads("A1", at: 13, paths: ["/music/album"])
    }

    func testAQueueReplacedByHandEndsTheCardsTurn() {
        let h = empty()
        swipeAlbum(h, at: 10)
        h.send(.replaceQueue([info(9)]), {
            $0.queue = [Track(id: 3, info: info(9))]
            $0.order = [3]
            $0.nextTrackID = 4
            $0.queueRevision = 2
            $0.loaded = PlayRef(playID: 3, trackID: 3)
            $0.handedNext = nil
            $0.nextPlayID = 4
            $0.savedMark = mark(revision: 2, current: 3, phase: .playing)
            $0.shown = status("playing", song: 9, index: 1, of: 1)
        }, commands: [
            .stopOutput,
            .startTrack(playID: 3, path: "/music/9.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(9)], current: 0, phase: .playing)),
            .render(status("playing", song: 9, index: 1, of: 1)),
        ])
        // The record stays, but none of its entries is queued: a swipe loads the card again.
        h.cardLoads("A1", at: 20, paths: ["/music/album"])
    }

    func testOnlyTheCardSwipedLastIsLoaded() {
        let h = empty()
        h.cardLoads("A1", at: 1, paths: ["/music/album"])
        h.cardLoads("B2", at: 1.5, paths: ["/music/other", "/music/extra.flac"])
        // A1's folder, read late, is dropped.
        h.send(.cardTracks(card: "A1", tracks: [info(1)], messages: []), commands: [])
        h.send(.cardTracks(card: "B2", tracks: [], messages: ["/music/other: no such file or directory"]), {
            $0.cards.loading = nil
            $0.message = "card B2: nothing to play"
            $0.shown = status("stopped", message: "card B2: nothing to play")
        }, commands: [
            .report("card B2: /music/other: no such file or directory"),
            .report("card B2: nothing to play"),
            .render(status("stopped", message: "card B2: nothing to play")),
        ])
        // A result nobody waits for any more is dropped too.
        h.send(.cardTracks(card: "B2", tracks: [info(2)], messages: []), commands: [])
    }

    func testCommandCardsActLikeTheButtonsTheyName() {
        let h = empty()
        swipeAlbum(h, at: 10)
        // E5 is toggle: its second read 2 s later is a new swipe, not a "second swipe" of a card
        // playing (a command card plays nothing).
        h.pauseTrack1(of: 2, by: .cardRead(id: "E5", at: 11), also: { $0.cards.lastReadID = "E5"; $0.cards.lastReadAt = 11 })
        h.send(.cardRead(id: "E5", at: 11.5), { $0.cards.lastReadAt = 11.5 }, commands: [])
        h.resumeTrack1(of: 2, by: .cardRead(id: "E5", at: 13), also: { $0.cards.lastReadAt = 13 })
        h.send(.cardRead(id: "D4", at: 14), {
            $0.cards.lastReadID = "D4"
            $0.cards.lastReadAt = 14
        }, commands: [
            .report("power button: running systemctl poweroff"),
            .runProgram(["systemctl", "poweroff"]),
        ])
    }

    func testWithNoDelayEveryReadIsASwipe() {
        let h = empty(.next)
        var settings = h.state.settings
        settings.cards.sameCardDelay = 0
        h.send(.reconfigured(settings), { $0.settings = settings }, commands: [])
        swipeAlbum(h, at: 10)
        h.nextToTrack2(of: 2, by: .cardRead(id: "A1", at: 10))
    }

    func testRestartGoesToTheCardsFirstEntryStillQueuedAndAddedTracksKeepTheCardPlaying() {
        let h = empty(.restart)
        swipeAlbum(h, at: 10)
        h.send(.add([info(3)]), {
            $0.queue = [Track(id: 1, info: info(1)), Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [1, 2, 3]
            $0.nextTrackID = 4
            $0.queueRevision = 2
            $0.savedMark = mark(revision: 2, current: 1, phase: .playing)
            $0.shown = status("playing", song: 1, index: 1, of: 3)
        }, commands: [
            .persist(Snapshot(tracks: [info(1), info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 1, index: 1, of: 3)),
        ])
        h.nextToTrack2(of: 3, revision: 2)
        // The card's first track is taken off the queue: its second is now its first.
        h.send(.remove(at: 0), {
            $0.queue = [Track(id: 2, info: info(2)), Track(id: 3, info: info(3))]
            $0.order = [2, 3]
            $0.cursor = 0
            $0.queueRevision = 3
            $0.savedMark = mark(revision: 3, current: 2, phase: .playing)
            $0.shown = status("playing", song: 2, index: 1, of: 2)
        }, commands: [
            .persist(Snapshot(tracks: [info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 2, index: 1, of: 2)),
        ])
        h.heard(3, at: 20, shows: status("playing", song: 2, index: 1, of: 2, elapsed: "0:20"))
        h.send(.cardRead(id: "A1", at: 30), {
            $0.cards.lastReadAt = 30
            $0.position = 0
            $0.loaded = PlayRef(playID: 5, trackID: 2)
            $0.handedNext = PlayRef(playID: 6, trackID: 3)
            $0.nextPlayID = 7
            $0.savedPosition = 0
            $0.shown = status("playing", song: 2, index: 1, of: 2)
        }, commands: [
            .startTrack(playID: 5, path: "/music/2.flac", at: 0, paused: false, next: NextPlay(playID: 6, path: "/music/3.flac")),
            .persistPlace(Snapshot(tracks: [info(2), info(3)], current: 0, phase: .playing)),
            .render(status("playing", song: 2, index: 1, of: 2)),
        ])
    }

    func testACardTakenOffTheMapIsNewAgain() {
        let h = empty()
        swipeAlbum(h, at: 10)
        h.send(.cardsLoaded(CardMap(["B2": other])), { $0.cards.map = CardMap(["B2": other]) }, commands: [])
        h.send(.cardRead(id: "A1", at: 20), {
            $0.cards.lastReadAt = 20
            $0.cards.lastUnknown = "A1"
            $0.message = "new card A1"
            $0.shown = status("playing", song: 1, index: 1, of: 2, message: "new card A1")
        }, commands: [
            .report("new card A1: assign it with jukebox ctl card assign PATH|COMMAND"),
            .render(status("playing", song: 1, index: 1, of: 2, message: "new card A1")),
        ])
    }

    func testACommandCardOrAnUnknownCardWhileAFolderIsReadLeavesThatReadStanding() {
        let h = empty()
        h.cardLoads("A1", at: 1, paths: ["/music/album"])
        h.send(.cardRead(id: "C3", at: 1.2), {
            $0.cards.lastReadID = "C3"
            $0.cards.lastReadAt = 1.2
            $0.volume = 95
            $0.savedMark = mark(revision: 0, current: nil, phase: .stopped, volume: 95)
            $0.shown = status("stopped", volume: 95)
        }, commands: [
            .setVolume(95),
            .persistPlace(Snapshot(tracks: [], phase: .stopped, volume: 95)),
            .render(status("stopped", volume: 95)),
        ])
        h.send(.cardRead(id: "FF", at: 1.3), {
            $0.cards.lastReadID = "FF"
            $0.cards.lastReadAt = 1.3
            $0.cards.lastUnknown = "FF"
            $0.message = "new card FF"
            $0.shown = status("stopped", volume: 95, message: "new card FF")
        }, commands: [
            .report("new card FF: assign it with jukebox ctl card assign PATH|COMMAND"),
            .render(status("stopped", volume: 95, message: "new card FF")),
        ])
        h.send(.cardTracks(card: "A1", tracks: [info(1)], messages: []), {
            $0.message = nil
            $0.cards.loading = nil
            $0.cards.active = ActiveCard(id: "A1", tracks: 1..<2)
            $0.queue = [Track(id: 1, info: info(1))]
            $0.order = [1]
            $0.nextTrackID = 2
            $0.queueRevision = 1
            $0.cursor = 0
            $0.phase = .playing
            $0.loaded = PlayRef(playID: 1, trackID: 1)
            $0.nextPlayID = 2
            $0.savedMark = mark(revision: 1, current: 1, phase: .playing, volume: 95)
            $0.shown = status("playing", song: 1, index: 1, of: 1, volume: 95)
        }, commands: [
            .startTrack(playID: 1, path: "/music/1.flac", at: 0, paused: false),
            .persist(Snapshot(tracks: [info(1)], current: 0, phase: .playing, volume: 95)),
            .render(status("playing", song: 1, index: 1, of: 1, volume: 95)),
        ])
    }

    func testIdsAreNormalisedAndBadOnesRefused() {
        XCTAssertEqual(Cards.normalisedID("00ab-12 ef"), "00AB12EF")
        XCTAssertEqual(Cards.normalisedID(String(repeating: "9", count: 32)), String(repeating: "9", count: 32))
        XCTAssertNil(Cards.normalisedID(String(repeating: "9", count: 33)))
        XCTAssertNil(Cards.normalisedID(" -\u{1b}[;"))
        XCTAssertEqual(Cards.normalisedID("\u{1b}[2J"), "2J", "what is left of an escape sequence is letters and digits, inert")
        XCTAssertEqual(Cards.normalisedID("é1\u{1b}2"), "12")
        let h = empty()
        h.send(.cardRead(id: "--", at: 1), commands: [
            .report("card reader: ignored an id that is not 1-32 letters and digits"),
        ])
        h.send(.cardRead(id: String(repeating: "1", count: 40), at: 1), commands: [
            .report("card reader: ignored an id that is not 1-32 letters and digits"),
        ])
    }

    func testMapEntries() {
        XCTAssertEqual(Cards.parseAction(" /music/Peppa "), .success(.play(["/music/Peppa"])))
        XCTAssertEqual(Cards.parseAction("TOGGLE"), .success(.command(.togglePlay)))
        XCTAssertEqual(Cards.parseAction("vol+"), .success(.command(.volumeUp)))
        XCTAssertEqual(Cards.parseAction("vol-"), .success(.command(.volumeDown)))
        XCTAssertEqual(Cards.parseAction("shuffle"), .success(.command(.shuffle)))
        XCTAssertEqual(Cards.parseAction("poweroff"), .success(.command(.power)))
        XCTAssertEqual(Cards.parseAction("sleep 30"), .success(.sleep(1800)))
        XCTAssertEqual(Cards.parseAction("Sleep off"), .success(.sleep(nil)))
        XCTAssertEqual(Cards.parseAction("sleep soon"), .failure(CardMapError("usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off")))
        XCTAssertEqual(Cards.parseAction("music/Peppa"), .failure(CardMapError(
            "\"music/Peppa\" is neither an absolute path, a stream URL nor a command (next, pause, play, poweroff, prev, previous, "
            + "repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)")))
        XCTAssertEqual(Cards.parseAction(paths: ["/a.flac", " /b "]), .success(.play(["/a.flac", "/b"])))
        XCTAssertEqual(Cards.parseAction(paths: []), .failure(CardMapError("an empty list of paths")))
        XCTAssertEqual(Cards.parseAction(paths: ["/a", "b"]), .failure(CardMapError("\"b\" is not an absolute path")))
    }
}

/// The control language's `card assign`.
final class CardAssignCommandTests: XCTestCase {
    private func parse(_ line: String) -> Result<ControlCommand, ControlError> { ControlCommand.parse(line, seed: 1) }

    func testAnIdIsAFirstWordOfLettersAndDigitsThatIsNotACommand() {
        XCTAssertEqual(parse("card assign /music/My Album"), .success(.cardAssign(id: nil, value: "/music/My Album")))
        XCTAssertEqual(parse("card assign toggle"), .success(.cardAssign(id: nil, value: "toggle")))
        XCTAssertEqual(parse("card  ASSIGN\t0012345678   /music/My Album "), .success(.cardAssign(id: "0012345678", value: "/music/My Album")))
        XCTAssertEqual(parse("card assign 04a3 vol+"), .success(.cardAssign(id: "04a3", value: "vol+")))
        XCTAssertEqual(parse("card assign sleep 30"), .success(.cardAssign(id: "sleep", value: "30")),
                       "the runtime refuses the value: 30 is neither a path nor a command")
        XCTAssertEqual(parse("card assign next pause"), .success(.cardAssign(id: nil, value: "next pause")))
        XCTAssertEqual(parse("card assign"), .failure(ControlError("usage: card assign [ID|--next] PATH|URL|COMMAND | card assign --cancel | card delete ID")))
        XCTAssertEqual(parse("card list"), .failure(ControlError("usage: card assign [ID|--next] PATH|URL|COMMAND | card assign --cancel | card delete ID")))
        XCTAssertEqual(parse("card"), .failure(ControlError("usage: card assign [ID|--next] PATH|URL|COMMAND | card assign --cancel | card delete ID")))
    }
}

extension DisplayTests {
    func testANewCardIsNamedOnThePanel() {
        let h = panel(.lcd16x2, showing: ["Song 1          ", "■ --:--/--:--   "])
        h.send(.tick(now: 50), { $0.now = 50 }, commands: [])
        h.send(.cardRead(id: "0012345678", at: 50), {
            $0.message = "new card 0012345678"
            $0.cards.lastReadID = "0012345678"
            $0.cards.lastReadAt = 50
            $0.cards.lastUnknown = "0012345678"
            $0.shownFrame = DisplayFrame(rows: ["Song 1          ", "new card 0012345"])
            $0.messageUntil = 56
            $0.messageSince = 50
            $0.messageShown = "new card 0012345678"
            $0.shown = status("stopped", of: 2, message: "new card 0012345678")
        }, commands: [
            .report("new card 0012345678: assign it with jukebox ctl card assign PATH|COMMAND"),
            .render(status("stopped", of: 2, message: "new card 0012345678")),
            .show(DisplayFrame(rows: ["Song 1          ", "new card 0012345"])),
        ])
        // The row scrolls, so the whole id can be read off the panel.
        var state = h.state
        var rows: [String] = []
        for tick in 1...20 {
            _ = reduce(&state, .tick(now: 50 + Double(tick) * 0.25))
            if let row = state.shownFrame?.rows[1], rows.last != row { rows.append(row) }
        }
        XCTAssertTrue(rows.contains { $0.contains("0012345678") }, "\(rows)")
    }
}

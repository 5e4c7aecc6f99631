// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// `card assign --next`: the next card swiped gets the value instead of playing; the shell
/// writes the map and reports back; a wait ends by `--cancel` or after `State.cardAssignWait`.
/// And `bookmark reset`.
final class CardAssignNextTests: XCTestCase {
    /// A stopped empty player whose map knows card A1.
    private func empty() -> CoreHarness {
        var s = State()
        s.shown = status("stopped")
        s.cards.map = CardMap(["A1": .play(["/music/album"])])
        return CoreHarness(s)
    }

    private func arm(_ h: CoreHarness, _ value: String) {
        h.send(.cardAssignNext(value), {
            $0.cards.assignNext = NextCardAssignment(value: value)
            $0.message = "swipe a card now"
            $0.shown = status("stopped", message: "swipe a card now")
        }, commands: [.startTimer(.cardAssign, after: 120), .render(status("stopped", message: "swipe a card now"))])
    }

    /// A card swiped while `value` waits for one (a stopped player): the card (`read` as the reader
    /// gave it, `card` as the map writes it) is not played; the shell is told to map it.
    private func swipeWhileWaiting(_ h: CoreHarness, read: String, card: String, at time: Double, value: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        h.send(.cardRead(id: read, at: time), file: file, line: line, {
            $0.cards.lastReadID = card
            $0.cards.lastReadAt = time
            $0.cards.assignNext = NextCardAssignment(value: value, card: card, stage: .writing)
            $0.message = nil
            $0.shown = status("stopped")
        }, commands: [.cancelTimer(.cardAssign), .assignCard(card: card, value: value), .render(status("stopped"))])
    }

    func testTheNextSwipeOfAKnownCardIsMappedNotPlayedAndTheOutcomeIsKept() {
        let h = empty()
        arm(h, "/music/other")
        swipeWhileWaiting(h, read: "a1", card: "A1", at: 10, value: "/music/other")
        // A result for another card or value is not this assignment's.
        h.send(.cardAssigned(card: "B2", value: "/music/other", error: nil), commands: [])
        h.send(.cardAssigned(card: "A1", value: "/music/other", error: nil), {
            $0.cards.assignNext = NextCardAssignment(value: "/music/other", card: "A1", stage: .done)
            $0.message = "card A1 assigned"
            $0.shown = status("stopped", message: "card A1 assigned")
        }, commands: [.report("card A1 is /music/other"), .render(status("stopped", message: "card A1 assigned"))])
        // The map the shell then loads is in force; the next swipe plays (a plain swipe again).
        h.send(.cardsLoaded(CardMap(["A1": .play(["/music/other"])])), { $0.cards.map = CardMap(["A1": .play(["/music/other"])]) }, commands: [])
        h.cardLoads("A1", at: 20, paths: ["/music/other"])
    }

    func testAnUnknownCardGetsItAndAFailedWriteSaysWhy() {
        let h = empty()
        arm(h, "toggle")
        swipeWhileWaiting(h, read: "0099", card: "0099", at: 3, value: "toggle")
        h.send(.cardAssigned(card: "0099", value: "toggle", error: "/etc/cards.json: permission denied\nmore"), {
            $0.cards.assignNext = NextCardAssignment(value: "toggle", card: "0099", stage: .failed, error: "/etc/cards.json: permission denied\nmore")
            $0.message = "card 0099 not assigned: /etc/cards.json: permission denied"
            $0.shown = status("stopped", message: "card 0099 not assigned: /etc/cards.json: permission denied")
        }, commands: [.report("card 0099 not assigned: /etc/cards.json: permission denied; more"),
                      .render(status("stopped", message: "card 0099 not assigned: /etc/cards.json: permission denied"))])
        // Failed is not waiting: the next swipe of the unknown card names it, as before.
        h.send(.cardRead(id: "0099", at: 9), {
            $0.cards.lastReadAt = 9
            $0.cards.lastUnknown = "0099"
            $0.message = "new card 0099"
            $0.shown = status("stopped", message: "new card 0099")
        }, commands: [.report("new card 0099: assign it with jukebox ctl card assign PATH|COMMAND"), .render(status("stopped", message: "new card 0099"))])
    }

    func testCancelAndTheWaitRunningOutDropTheAssignment() {
        let h = empty()
        arm(h, "toggle")
        h.send(.cardAssignNext(nil), {
            $0.cards.assignNext = nil
            $0.message = nil
            $0.shown = status("stopped")
        }, commands: [.cancelTimer(.cardAssign), .render(status("stopped"))])
        arm(h, "toggle")
        h.send(.timerFired(.cardAssign, at: 200), {
            $0.cards.assignNext = nil
            $0.message = nil
            $0.shown = status("stopped")
        }, commands: [.report("no card swiped within 120 s: the assignment is dropped"), .render(status("stopped"))])
        // A card now plays as mapped.
        h.cardLoads("A1", at: 300, paths: ["/music/album"])
        // A timer left over from an earlier wait does nothing.
        h.send(.timerFired(.cardAssign, at: 400), commands: [])
    }

    func testABookmarkResetByItsFirstPathOrAll() {
        var s = State()
        s.shown = status("stopped")
        s.bookmarksReady = true
        s.bookmarks = [Bookmark(paths: ["/music/a"], track: "/music/a/1.flac", position: 5),
                       Bookmark(paths: ["/music/b", "/music/c.flac"], track: "/music/c.flac", position: 7),
                       Bookmark(paths: ["/music/d"], track: "/music/d/2.flac", position: 9)]
        let h = CoreHarness(s)
        h.send(.resetBookmarks(path: "/music/b"), {
            $0.bookmarks.remove(at: 1)
        }, commands: [.persistBookmarks([s.bookmarks[0], s.bookmarks[2]])])
        h.send(.resetBookmarks(path: "/music/nothing"), commands: [])
        h.send(.resetBookmarks(path: nil), { $0.bookmarks = [] }, commands: [.persistBookmarks([])])
    }
}

/// The control lines of the Cards and Bookmarks pages.
final class CardLinesParseTests: XCTestCase {
    private func parse(_ line: String) -> Result<ControlCommand, ControlError> { ControlCommand.parse(line, seed: 1) }

    func testTable() {
        let usage = ControlError("usage: card assign [ID|--next] PATH|URL|COMMAND | card assign --cancel | card delete ID")
        let table: [(String, Result<ControlCommand, ControlError>)] = [
            ("card assign --next /music/My Album ", .success(.cardAssignNext(value: "/music/My Album"))),
            ("card assign --NEXT sleep 30", .success(.cardAssignNext(value: "sleep 30"))),
            ("card assign --next http://radio.example:8000/live.mp3", .success(.cardAssignNext(value: "http://radio.example:8000/live.mp3"))),
            ("card assign --next next", .success(.cardAssignNext(value: "next"))),
            ("card assign --next", .failure(usage)),
            ("card assign --next dance", .failure(ControlError("\"dance\" is neither an absolute path, a stream URL nor a command (next, pause, play, "
                + "poweroff, prev, previous, repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)"))),
            ("card assign --next sleep soon", .failure(ControlError("usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off"))),
            ("card assign --cancel", .success(.cardAssignNext(value: nil))),
            ("card assign --cancel now", .failure(usage)),
            ("card assign 04a3 http://radio.example/x", .success(.cardAssign(id: "04a3", value: "http://radio.example/x"))),
            ("card delete 04a3", .success(.cardDelete(id: "04A3"))),
            ("card delete", .failure(ControlError("usage: card delete ID (1-32 letters and digits)"))),
            ("card delete 04-a3", .failure(ControlError("usage: card delete ID (1-32 letters and digits)"))),
            ("card delete 04a3 05", .failure(ControlError("usage: card delete ID (1-32 letters and digits)"))),
            ("card delete " + String(repeating: "1", count: 33), .failure(ControlError("usage: card delete ID (1-32 letters and digits)"))),
            ("card remove 04a3", .failure(usage)),
            ("cards --json", .success(.cardsJSON)),
            ("cards", .failure(ControlError("usage: cards --json"))),
            ("bookmarks --json", .success(.bookmarksJSON)),
            ("bookmarks", .failure(ControlError("usage: bookmarks --json"))),
            ("bookmark reset /music/My  Book ", .success(.bookmarkReset(path: "/music/My  Book"))),
            ("bookmark RESET --all", .success(.bookmarkReset(path: nil))),
            ("bookmark reset", .failure(ControlError("usage: bookmark reset PATH|--all"))),
            ("bookmark /music", .failure(ControlError("usage: bookmark reset PATH|--all"))),
        ]
        for (line, expected) in table { XCTAssertEqual(parse(line), expected, line) }
    }

    func testAStreamURLIsACardsValue() {
        XCTAssertEqual(Cards.parseAction(" https://radio.example/live "), .success(.play(["https://radio.example/live"])))
        XCTAssertEqual(Cards.parseAction("http:///nohost").map { _ in true }, .failure(CardMapError(
            "\"http:///nohost\" is neither an absolute path, a stream URL nor a command (next, pause, play, poweroff, prev, previous, "
            + "repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)")))
    }
}

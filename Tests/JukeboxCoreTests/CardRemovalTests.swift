// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Place, not swipe (readers that see removal: RC522, PN532): `onRemove: pause` pauses the
/// playing card's tracks when it is taken away and putting it back resumes them; `none` leaves
/// removal without effect. Times are the reader's, carried by the events.
final class CardRemovalTests: XCTestCase {
    private let album = CardAction.play(["/music/album"])
    private let other = CardAction.play(["/music/other"])

    private func empty(_ onRemove: OnRemove) -> CoreHarness {
        var settings = Settings()
        settings.cards.onRemove = onRemove
        // Bookmarks of cards are BookmarkTests'; here every swipe starts its folder from the top.
        settings.bookmarks = .never
        var s = State(settings: settings)
        s.shown = status("stopped")
        s.cards.map = CardMap(["A1": album, "B2": other])
        return CoreHarness(s)
    }

    /// Card A1 placed at `at` on an empty player: its two tracks play.
    private func place(_ h: CoreHarness, at: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
        h.cardA1Plays(at: at, file: file, line: line)
    }

    /// Card A1 (read as `id`) taken away at `at`: the player pauses; put back at `back`: it plays on.
    private func takenAwayAndBack(_ h: CoreHarness, _ id: String, at: Double, back: Double,
                                  file: StaticString = #filePath, line: UInt = #line) {
        h.pauseTrack1(of: 2, by: .cardRemoved(id: id, at: at), also: { $0.cards.pausedByRemoval = "A1" },
                      file: file, line: line)
        h.resumeTrack1(of: 2, by: .cardRead(id: "A1", at: back), also: {
            $0.cards.pausedByRemoval = nil
            $0.cards.lastReadAt = back
        }, file: file, line: line)
    }

    func testTakingThePlayingCardAwayPausesAndPuttingItBackResumesEvenWithinTheSameCardDelay() {
        let h = empty(.pause)
        place(h, at: 10)
        // Taken away, and back 0.3 s after it was placed: inside sameCardDelay (1 s), still a
        // resume, not a swipe.
        takenAwayAndBack(h, "a1", at: 10.2, back: 10.3)
        // And again, much later: the same.
        takenAwayAndBack(h, "A1", at: 50, back: 400)
    }

    func testWithOnRemoveNoneRemovalDoesNothingAndPuttingTheCardBackIsASecondSwipe() {
        let h = empty(.none)
        place(h, at: 10)
        h.send(.cardRemoved(id: "A1", at: 10.5), commands: [])
        h.pauseTrack1(of: 2, by: .cardRead(id: "A1", at: 12), also: { $0.cards.lastReadAt = 12 })
    }

    func testRemovingAnotherCardOrTheCardWhilePausedByHandOrStoppedChangesNothing() {
        let h = empty(.pause)
        place(h, at: 10)
        h.send(.cardRemoved(id: "B2", at: 11), commands: [])
        h.send(.cardRemoved(id: "??", at: 11), commands: [])
        h.pauseTrack1(of: 2)
        h.send(.cardRemoved(id: "A1", at: 12), commands: [])
        // Put back: nothing remembered a removal, so it is a second swipe (toggle: play).
        h.resumeTrack1(of: 2, by: .cardRead(id: "A1", at: 13), also: { $0.cards.lastReadAt = 13 })
        h.stopTrack1(of: 2)
        h.send(.cardRemoved(id: "A1", at: 14), commands: [])
    }

    func testACardTakenAwayBeforeItsFolderWasReadIsNotPlayed() {
        let h = empty(.pause)
        h.cardLoads("A1", at: 10, paths: ["/music/album"])
        h.send(.cardRemoved(id: "A1", at: 10.1), { $0.cards.loading = nil }, commands: [])
        h.send(.cardTracks(card: "A1", tracks: [info(1)], messages: []), commands: [])
    }

    func testPlayedByHandAfterTheRemovalPuttingTheCardBackKeepsItPlaying() {
        let h = empty(.pause)
        place(h, at: 10)
        h.pauseTrack1(of: 2, by: .cardRemoved(id: "A1", at: 11), also: { $0.cards.pausedByRemoval = "A1" })
        h.resumeTrack1(of: 2)
        h.send(.cardRead(id: "A1", at: 12.5), {
            $0.cards.pausedByRemoval = nil
            $0.cards.lastReadAt = 12.5
        }, commands: [])
    }

    func testAnotherCardAfterARemovalIsAnOrdinarySwipeAndTheFirstCardThenIsToo() {
        let h = empty(.pause)
        place(h, at: 10)
        h.pauseTrack1(of: 2, by: .cardRemoved(id: "A1", at: 11), also: { $0.cards.pausedByRemoval = "A1" })
        h.cardLoads("B2", at: 12, paths: ["/music/other"], also: { $0.cards.pausedByRemoval = nil })
        // A1 again before B2's folder is read: an ordinary swipe of A1 (its tracks still queued
        // and paused: the second-swipe toggle plays them); B2's read still stands, as in CardTests.
        h.resumeTrack1(of: 2, by: .cardRead(id: "A1", at: 13), also: { $0.cards.lastReadID = "A1"; $0.cards.lastReadAt = 13 })
    }
}

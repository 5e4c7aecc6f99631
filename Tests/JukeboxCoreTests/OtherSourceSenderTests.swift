// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// A sender's name learnt apart from the source's begin (`Event.sourceSender`: AirPlay's metadata
/// pipe, written by another thread of shairport-sync than the one that runs the begin hook): shown
/// whichever comes first, and forgotten when the interruption ends.
final class OtherSourceSenderTests: XCTestCase {
    private let named = Interruption(id: "source-airplay", reason: "AirPlay: Anna's iPhone", source: "airplay")

    func testANameBeforeTheBeginIsShownByItAndForgottenAtItsEnd() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 31.4, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        // Nothing shows yet: no source plays.
        h.send(.sourceSender(name: "airplay", sender: "  Anna's iPhone "), {
            $0.sourceSenders = ["airplay": "Anna's iPhone"]
        }, commands: [])
        h.sourceTakesTrack1(by: .sourceBegan(name: "airplay", sender: ""), named)
        h.interruptionEndsPlayingTrack1(of: 2, id: "source-airplay", at: 31.6, elapsed: "0:31", also: {
            $0.sourceSenders = [:]
        })
        // The next session names nobody: the last one's sender is not shown for it.
        let plain = Interruption(id: "source-airplay", reason: "AirPlay", source: "airplay")
        let shown = status("interrupted", song: 1, index: 1, of: 2, elapsed: "0:31", message: "AirPlay")
        h.send(.sourceBegan(name: "airplay", sender: ""), {
            $0.phase = .interrupted(reason: "AirPlay")
            $0.interruptions = [plain]
            $0.pendingGrants = ["source-airplay"]
            $0.releaseToken = 2
            $0.releasedPlay = 3
            $0.nextReleaseToken = 3
            $0.loaded = nil
            $0.handedNext = nil
            $0.shown = shown
        }, commands: [.releaseDevice(token: 2), .render(shown)])
    }

    func testANameAfterTheBeginIsShownAtOnce() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 31.4, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        h.sourceTakesTrack1(by: .sourceBegan(name: "airplay", sender: ""),
                            Interruption(id: "source-airplay", reason: "AirPlay", source: "airplay"))
        let shown = status("interrupted", song: 1, index: 1, of: 2, elapsed: "0:31", message: "AirPlay: Anna's iPhone")
        h.send(.sourceSender(name: "airplay", sender: "Anna's iPhone"), {
            $0.sourceSenders = ["airplay": "Anna's iPhone"]
            $0.interruptions = [self.named]
            $0.phase = .interrupted(reason: "AirPlay: Anna's iPhone")
            $0.shown = shown
        }, commands: [.render(shown)])
        h.interruptionEndsPlayingTrack1(of: 2, id: "source-airplay", at: 31.6, elapsed: "0:31", also: {
            $0.sourceSenders = [:]
        })
    }

    /// A begin that names its sender (`jukebox source begin airplay --sender`) shows that one.
    func testABeginsOwnSenderComesFirst() {
        var s = playing(2)
        _ = reduce(&s, .sourceSender(name: "airplay", sender: "Anna's iPhone"))
        _ = reduce(&s, .sourceBegan(name: "airplay", sender: "Dad's Mac"))
        XCTAssertEqual(s.phase, .interrupted(reason: "AirPlay: Dad's Mac"))
    }

    /// Under another interruption (a chime) the source's reason changes, the phase keeps the chime's.
    func testANameForASourceUnderAnotherInterruptionChangesOnlyItsOwnReason() {
        var s = playing(2)
        _ = reduce(&s, .sourceBegan(name: "airplay", sender: ""))
        _ = reduce(&s, .interruptBegan(id: "chime", reason: "chime"))
        _ = reduce(&s, .sourceSender(name: "airplay", sender: "Anna's iPhone"))
        XCTAssertEqual(s.phase, .interrupted(reason: "chime"))
        XCTAssertEqual(s.interruptions.map(\.reason), ["AirPlay: Anna's iPhone", "chime"])
        _ = reduce(&s, .interruptEnded(id: "chime"))
        XCTAssertEqual(s.phase, .interrupted(reason: "AirPlay: Anna's iPhone"))
    }

    func testAHostileNameIsKeptInertAndBoundedAndABadSourceNameChangesNothing() {
        let h = CoreHarness(playing(2))
        let hostile = "Evil\u{1B}[2J\nok" + String(repeating: "é", count: 200)
        var s = h.state
        _ = reduce(&s, .sourceSender(name: "airplay", sender: hostile))
        let kept = s.sourceSenders["airplay"] ?? ""
        XCTAssertTrue(kept.hasPrefix("Evil\u{FFFD}[2J\u{FFFD}ok"), kept.debugDescription)
        XCTAssertLessThanOrEqual(kept.utf8.count, OtherSource.maxSenderBytes)
        XCTAssertFalse(kept.unicodeScalars.contains { DisplayText.isControl($0) })
        h.send(.sourceSender(name: "Air\nPlay", sender: "x"), commands: [])
        // An empty name forgets the one kept.
        _ = reduce(&s, .sourceSender(name: "airplay", sender: " "))
        XCTAssertEqual(s.sourceSenders, [:])
    }
}

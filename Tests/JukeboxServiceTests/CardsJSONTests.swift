// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
@testable import JukeboxService
import XCTest

/// `cards --json` and `bookmarks --json`: every kind of entry, text escaped, and a reply that stays
/// one line the control socket sends (a line over 64 KiB would be replaced by an error).
final class CardsJSONTests: XCTestCase {
    func testEveryKindOfEntryTheSettingsAndAWaitingAssignment() {
        var state = State()
        state.settings.cards.secondSwipe = .restart
        state.settings.cards.onRemove = .pause
        state.settings.cards.sameCardDelay = 1.5
        state.cards.map = CardMap(["B2": .play(["/m/a\n\u{1B}[2J", "http://radio/x"]), "A1": .command(.previous), "C3": .sleep(1800), "D4": .sleep(nil)])
        state.cards.lastUnknown = "77"
        state.cards.assignNext = NextCardAssignment(value: "/m/<b>", card: "E5", stage: .failed, error: "denied\n")
        XCTAssertEqual(CardsJSON.text(state), "{\"cards\":["
            + "{\"id\":\"A1\",\"command\":\"previous\"},"
            + "{\"id\":\"B2\",\"paths\":[\"/m/a\\u000a\\u001b[2J\",\"http://radio/x\"]},"
            + "{\"id\":\"C3\",\"command\":\"sleep 30\"},{\"id\":\"D4\",\"command\":\"sleep off\"}],"
            + "\"secondSwipe\":\"restart\",\"onRemove\":\"pause\",\"sameCardDelay\":1.5,\"newCard\":\"77\","
            + "\"assignNext\":{\"stage\":\"failed\",\"value\":\"/m/<b>\",\"card\":\"E5\",\"error\":\"denied\\u000a\"}}")
        XCTAssertTrue(PlayerStatusJSON(state).text.contains(
            ",\"cardAssign\":{\"stage\":\"failed\",\"value\":\"/m/<b>\",\"card\":\"E5\",\"error\":\"denied\\u000a\"},"))
        XCTAssertEqual(PlayerStatusJSON(text: PlayerStatusJSON(state).text)?.cardAssign?.error, "denied\n")
    }

    private struct Truncated: Decodable { var truncated: Bool }

    func testAHugeMapOrManyBookmarksStayUnderOneReplyLine() throws {
        var state = State()
        let long = "/" + String(repeating: "x", count: 300)
        state.cards.map = CardMap(Dictionary(uniqueKeysWithValues: (0..<2000).map { (String(String(100_000 + $0).dropFirst()), CardAction.play([long])) }))
        state.cards.assignNext = NextCardAssignment(value: "/" + String(repeating: "v", count: ControlCommand.maxLineLength))
        state.bookmarks = (0..<500).map { Bookmark(paths: [long + "\($0)"], track: long + "/t.flac", position: 1) }
        for text in [CardsJSON.text(state), CardsJSON.bookmarks(state)] {
            XCTAssertLessThan(("ok " + text).utf8.count, ControlSocket.maxOutput)
            XCTAssertTrue(text.contains("\"truncated\":true"), String(text.suffix(200)))
            XCTAssertEqual(try JSONDecoder().decode(Truncated.self, from: Data(text.utf8)).truncated, true, "one valid object")
        }
        XCTAssertTrue(CardsJSON.text(state).hasPrefix("{\"cards\":[{\"id\":\"00000\","))
        XCTAssertTrue(CardsJSON.bookmarks(state).hasPrefix("{\"bookmarks\":[{\"paths\":[\"\(long)499\"]"), "the one played last first")
    }
}

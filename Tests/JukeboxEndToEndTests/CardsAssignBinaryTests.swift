// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// `card assign --next`, `card delete`, `cards --json`, `bookmarks --json` and `bookmark reset`
/// through the real binary, with the simulated card reader (`JUKEBOX_TEST_CARD_PIPE`: each line
/// written to the FIFO is a card read, as a keyboard reader's id and Enter).
final class CardsAssignBinaryTests: DaemonTestCase {
    func testTheNextCardSwipedGetsTheValueThenPlaysIt() throws {
        for folder in ["A", "B"] {
            try FileManager.default.createDirectory(atPath: dir + "/" + folder, withIntermediateDirectories: true)
            try TestAudio.write(path: dir + "/\(folder)/1.wav", kind: .wav16, frames: 44_100 * 60)
        }
        let cards = dir + "/cards.json", pipe = dir + "/reader"
        XCTAssertEqual(mkfifo(pipe, 0o600), 0)
        let config = dir + "/c.json"
        let object: [String: Any] = [
            "audio": "null", "state": dir + "/state.json", "music": [dir + "/A"], "socket": socket!,
            "rfid": ["reader": "keyboard", "name": "no such reader here", "cards": cards, "sameCardDelay": 0],
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config], environment: ["JUKEBOX_TEST_CARD_PIPE": pipe])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertTrue(waitFor(10) { (try? ctl("status"))?.stdout.hasPrefix("▶") == true }, "the daemon never played")
        let reader = try XCTUnwrap(FileHandle(forWritingAtPath: pipe))
        func swipe(_ id: String) { reader.write(Data((id + "\n").utf8)) }
        func status() -> String { (try? ctl("status", "--json"))?.stdout ?? "" }

        // A value the map would refuse is refused before anyone swipes.
        let bad = try ctl("card", "assign", "--next", "dance")
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("\"dance\" is neither an absolute path, a stream URL nor a command"), bad.stderr)

        let armed = try ctl("card", "assign", "--next", dir + "/B")
        XCTAssertEqual(armed.status, 0, armed.stderr)
        XCTAssertEqual(armed.stdout, "swipe a card now (within 120 s)\n")
        XCTAssertTrue(status().contains(#""cardAssign":{"stage":"waiting","value":"\#(dir!)/B","card":null,"error":null}"#), status())
        XCTAssertTrue(status().contains(#""message":"swipe a card now""#), status())

        // The swipe maps the card and plays nothing: A goes on.
        swipe("00ab12")
        XCTAssertTrue(waitFor(10) { status().contains(#""cardAssign":{"stage":"done","value":"\#(dir!)/B","card":"00AB12","error":null}"#) }, status())
        XCTAssertTrue(status().contains(#""path":"\#(dir!)/A/1.wav""#), status())
        XCTAssertEqual(try String(contentsOfFile: cards, encoding: .utf8), "{\n  \"00AB12\" : \"\(dir!)/B\"\n}\n")
        XCTAssertTrue(try ctl("cards", "--json").stdout.hasPrefix(#"{"cards":[{"id":"00AB12","paths":["\#(dir!)/B"]}],"secondSwipe":"toggle","onRemove":"none","sameCardDelay":0,"newCard":null,"assignNext":{"stage":"done""#))

        // The next swipe plays it.
        swipe("00AB12")
        XCTAssertTrue(waitFor(10) { status().contains(#""path":"\#(dir!)/B/1.wav""#) }, status())

        // Its place is a bookmark (a pause saves it), reset by its folder.
        XCTAssertEqual(try ctl("pause").status, 0)
        XCTAssertTrue(waitFor(10) { (try? ctl("bookmarks", "--json"))?.stdout.contains(#"{"bookmarks":[{"paths":["\#(dir!)/B"],"track":"\#(dir!)/B/1.wav","position":"#) == true },
                      (try? ctl("bookmarks", "--json").stdout) ?? "")
        let reset = try ctl("bookmark", "reset", dir + "/B")
        XCTAssertEqual(reset.stdout, "1 bookmark reset\n", reset.stderr)
        XCTAssertEqual(try ctl("bookmarks", "--json").stdout, "{\"bookmarks\":[],\"mode\":\"always\"}\n")
        let again = try ctl("bookmark", "reset", dir + "/B")
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("no bookmark for \(dir!)/B"), again.stderr)

        // Cancelled: the next swipe is a swipe again (an unknown card, named).
        XCTAssertEqual(try ctl("card", "assign", "--next", "toggle").status, 0)
        XCTAssertEqual(try ctl("card", "assign", "--cancel").stdout, "cancelled\n")
        XCTAssertTrue(status().contains(#""cardAssign":null"#), status())
        XCTAssertNotEqual(try ctl("card", "assign", "--cancel").status, 0)
        swipe("77")
        XCTAssertTrue(waitFor(10) { status().contains(#""newCard":"77""#) }, status())

        // Deleted: off the map on disk and in the player.
        let deleted = try ctl("card", "delete", "00ab12")
        XCTAssertEqual(deleted.stdout, "card 00AB12 deleted\n", deleted.stderr)
        XCTAssertFalse(try String(contentsOfFile: cards, encoding: .utf8).contains("00AB12"))
        XCTAssertTrue(waitFor(10) { (try? ctl("cards", "--json"))?.stdout.hasPrefix(#"{"cards":[],"#) == true })
        let missing = try ctl("card", "delete", "00ab12")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("card 00AB12 is not on the map"), missing.stderr)
    }
}

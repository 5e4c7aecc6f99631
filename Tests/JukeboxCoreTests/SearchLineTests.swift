// SPDX-License-Identifier: MIT
import XCTest
import JukeboxCore

/// `search --json TEXT`: the rest of the line is the text, spaces and all.
final class SearchLineTests: XCTestCase {
    func testTheSearchLineTakesTheRestOfTheLine() {
        let table: [(String, Result<ControlCommand, ControlError>)] = [
            ("search --json abba", .success(.searchJSON(text: "abba"))),
            ("SEARCH --json  Dancing  Queen ", .success(.searchJSON(text: "Dancing  Queen"))),
            ("search\t--json\t<img src=x>", .success(.searchJSON(text: "<img src=x>"))),
            ("search --json --json", .success(.searchJSON(text: "--json"))),
            ("search --json", .failure(ControlError("usage: search --json TEXT"))),
            ("search --json   ", .failure(ControlError("usage: search --json TEXT"))),
            ("search abba", .failure(ControlError("usage: search --json TEXT"))),
            ("search", .failure(ControlError("usage: search --json TEXT"))),
        ]
        assertParses(table)
    }
}

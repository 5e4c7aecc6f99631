// SPDX-License-Identifier: MIT
@testable import JukeboxService
import XCTest

/// `JSONPage.cut`: whole entries only, as many as fit, the first of a page always (shortened when
/// it is too long alone), and where the next page starts.
final class JSONPageTests: XCTestCase {
    func testTheCutTakesWholeEntriesThatFitAndSaysWhereTheNextPageStarts() {
        // Entries "a", "bb", "ccc", …: entry i is i+1 letters; "S" stands for a shortened one.
        let letters = Array("abcdefghij")
        func entry(_ i: Int) -> String { String(repeating: letters[i], count: i + 1) }
        let table: [(count: Int, from: Int, room: Int, after: Bool, entries: [String], next: Int?, line: UInt)] = [
            (0, 0, 100, false, [], nil, #line),
            (3, 0, 100, false, ["a", "bb", "ccc"], nil, #line),
            (3, 0, 8, false, ["a", "bb", "ccc"], nil, #line),      // 1 + 1 + 2 + 1 + 3 = 8: fits exactly
            (3, 0, 7, false, ["a", "bb"], 2, #line),               // a comma and "ccc" would be 8
            (3, 2, 7, false, ["ccc"], nil, #line),
            (5, 1, 6, false, ["bb", "ccc"], 3, #line),
            (5, 3, 3, false, ["S"], 4, #line),                     // "dddd" alone is over: shortened
            (5, 4, 100, false, ["eeeee"], nil, #line),
            (5, 5, 100, false, [], nil, #line),                    // past the end
            (5, 9, 100, false, [], nil, #line),
            (5, -3, 1, false, ["a"], 1, #line),
            (5, 3, 3, true, [], 3, #line),                         // after other entries: not forced in
            (5, 0, 3, true, ["a"], 1, #line),
        ]
        for row in table {
            let cut = JSONPage.cut(count: row.count, from: row.from, room: row.room, after: row.after, entry: entry, shortened: { _ in "S" })
            XCTAssertEqual(cut.entries, row.entries, line: row.line)
            XCTAssertEqual(cut.next, row.next, line: row.line)
        }
    }

    func testTheBudgetIsUnderTheSocketsLineBound() {
        XCTAssertLessThan(JSONPage.budget + "ok \n".utf8.count, ControlSocket.maxOutput)
        XCTAssertEqual(JSONPage.clipped("abcdef", 4), "abc…")
        XCTAssertEqual(JSONPage.clipped("abcd", 4), "abcd")
        XCTAssertNil(JSONPage.clipped(nil, 4))
    }
}

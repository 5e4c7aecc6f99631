// SPDX-License-Identifier: MIT
import JukeboxWeb
import XCTest

/// The `from` query argument of /api/queue and /api/library: a page's first entry, or refused.
final class PageQueryTests: XCTestCase {
    func testFromIsAnEntryNumberFromOne() {
        let table: [(String?, Int?)] = [
            (nil, 1), ("", 1), ("1", 1), ("7", 7), ("0301", 301), ("999999999", 999_999_999),
            ("0", nil), ("-1", nil), ("+2", nil), (" 2", nil), ("2 ", nil), ("x", nil), ("1e3", nil),
            ("1000000000", nil), ("99999999999999999999", nil), ("２", nil), ("1\n", nil),
        ]
        for (text, expected) in table {
            XCTAssertEqual(PageQuery.from(text), expected, String(describing: text))
        }
    }
}

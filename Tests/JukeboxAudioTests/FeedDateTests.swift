// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// The feeds' dates (`FeedDate`) by table: RFC 822 as servers write it, RFC 3339, and what is refused.
final class FeedDateTests: XCTestCase {
    func testRFC822AsServersWriteIt() {
        // 2002-10-02 13:00:00 UTC is 1033563600.
        let table: [(String, Int64?)] = [
            ("Wed, 02 Oct 2002 13:00:00 GMT", 1_033_563_600),
            ("Wed, 02 Oct 2002 13:00:00 +0000", 1_033_563_600),
            ("Wed, 02 Oct 2002 15:00:00 +0200", 1_033_563_600),
            ("Wed, 02 Oct 2002 08:00:00 EST", 1_033_563_600),
            ("Wed, 02 Oct 2002 09:00:00 EDT", 1_033_563_600),
            ("02 Oct 2002 13:00:00 GMT", 1_033_563_600),       // no weekday
            ("Wed, 2 Oct 2002 13:00 GMT", 1_033_563_600),       // one-digit day, no seconds
            ("Wed, 02 Oct 02 13:00:00 GMT", 1_033_563_600),     // two-digit year
            ("Wed, 02 October 2002 13:00:00 GMT", 1_033_563_600),
            ("Wed,02 Oct 2002 13:00:00 Z", 1_033_563_600),
            ("Wed, 02 Oct 2002 13:00:00", 1_033_563_600),       // no zone: UTC
            ("  Wed, 02 Oct 2002 13:00:00 GMT \n", 1_033_563_600),
            ("Thu, 29 Feb 2024 00:00:00 GMT", 1_709_164_800),   // a leap day
            ("Fri, 01 Jan 1970 00:00:00 GMT", 0),
            ("Sat, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
            // Refused: no guess.
            ("Thu, 29 Feb 2023 00:00:00 GMT", nil), ("Wed, 32 Oct 2002 13:00:00 GMT", nil),
            ("Wed, 02 Foo 2002 13:00:00 GMT", nil), ("Wed, 02 Oct 2002 25:00:00 GMT", nil),
            ("Wed, 02 Oct 2002 13:00:00 +02", nil), ("Wed, 02 Oct 1969 13:00:00 GMT", nil),
            ("yesterday", nil), ("", nil), ("2002", nil),
            ("Wed, 02 Oct 99999999999999999999 13:00:00 GMT", nil),
        ]
        for (text, expected) in table {
            XCTAssertEqual(FeedDate.parse(text), expected, text.debugDescription)
        }
    }

    func testRFC3339() {
        let table: [(String, Int64?)] = [
            ("2003-12-13T18:30:02Z", 1_071_340_202),
            ("2003-12-13t18:30:02z", 1_071_340_202),
            ("2003-12-13T18:30:02.25Z", 1_071_340_202),
            ("2003-12-13T19:30:02+01:00", 1_071_340_202),
            ("2003-12-13T13:30:02-05:00", 1_071_340_202),
            ("2003-12-13 18:30:02Z", 1_071_340_202),
            ("2003-12-13T18:30:02", 1_071_340_202),             // no zone: UTC
            ("2003-12-13", 1_071_273_600),
            ("2003-12-13T18:30Z", nil), ("2003-13-13T18:30:02Z", nil), ("2003-02-30T00:00:00Z", nil),
            ("2003-12-13T18:30:02+0100", nil), ("2003-12-13T18:30:02.Z", nil), ("2003-12-13T18:30:02Zjunk", nil),
            ("20031213T183002Z", nil), ("-2003-12-13", nil),
        ]
        for (text, expected) in table {
            XCTAssertEqual(FeedDate.parse(text), expected, text.debugDescription)
        }
    }

    /// days_from_civil against a day-by-day count from 1970, across leap years and centuries.
    func testDaysCountFromTheEpoch() {
        var expected: Int64 = 0
        for year in 1970...2410 {
            for month in 1...12 {
                for day in 1...FeedDate.daysIn(month, of: year) {
                    XCTAssertEqual(FeedDate.days(year: year, month: month, day: day), expected, "\(year)-\(month)-\(day)")
                    expected += 1
                    if FeedDate.days(year: year, month: month, day: day) != expected - 1 { return }
                }
            }
        }
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

/// `queue --json [FROM]`: every entry with its 1-based position, escaped text, in pages.
final class QueueJSONTests: XCTestCase {
    func testEntriesPositionsAndTheCurrentOne() {
        var state = State()
        XCTAssertEqual(QueueJSON.text(state), "{\"entries\":[],\"current\":null,\"total\":0}")
        _ = reduce(&state, .add([
            TrackInfo(path: "/m/a.flac", title: "A \"quoted\"\nline", artist: "X", album: "Y", duration: 212.5),
            TrackInfo(path: "/m/b.ogg"),
        ]))
        _ = reduce(&state, .playEntry(at: 1))
        XCTAssertEqual(QueueJSON.text(state), "{\"entries\":["
            + "{\"position\":1,\"path\":\"/m/a.flac\",\"title\":\"A \\\"quoted\\\"\\u000aline\",\"artist\":\"X\",\"album\":\"Y\",\"seconds\":212.5},"
            + "{\"position\":2,\"path\":\"/m/b.ogg\",\"title\":\"b\",\"artist\":null,\"album\":null,\"seconds\":null}"
            + "],\"current\":2,\"total\":2}")
        // From the second: the same entry, the same fields; past the end: no entries, no next.
        XCTAssertEqual(QueueJSON.text(state, from: 2), "{\"entries\":["
            + "{\"position\":2,\"path\":\"/m/b.ogg\",\"title\":\"b\",\"artist\":null,\"album\":null,\"seconds\":null}"
            + "],\"current\":2,\"total\":2}")
        XCTAssertEqual(QueueJSON.text(state, from: 3), "{\"entries\":[],\"current\":2,\"total\":2}")
    }

    /// Pages of a queue (names of every length, escapes, several scripts) at budgets from tight to
    /// the real one: each page valid JSON within the budget, whole entries only, and following
    /// `next` reaches every entry once, in order. Randomized: the seed is printed.
    func testFollowingNextReachesEveryEntryOnceAndEachPageStaysWithinTheBudget() throws {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_QUEUE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("QueueJSONTests seed: \(seed) (JUKEBOX_QUEUE_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        let pieces = ["a", "é", "日本", "🎵", "\"", "\\", "\n", "\u{202E}", " ", "x"]
        var state = State()
        let count = 300
        _ = reduce(&state, .add((0..<count).map { i in
            let name = (0..<Int.random(in: 0...60, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            return TrackInfo(path: "/m/\(i) \(name).flac", title: i % 3 == 0 ? nil : name, artist: "A\(i)", album: nil, duration: Double(i))
        }))
        for budget in [2_000, 10_000, JSONPage.budget] {
            var from = 1
            var positions: [Int] = []
            var pages = 0
            while true {
                let text = QueueJSON.text(state, from: from, budget: budget)
                XCTAssertLessThanOrEqual(text.utf8.count, budget, "from \(from)")
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
                let entries = try XCTUnwrap(object["entries"] as? [[String: Any]])
                XCTAssertFalse(entries.isEmpty, "from \(from): an empty page")
                XCTAssertEqual(object["total"] as? Int, count)
                for e in entries { XCTAssertNil(e["shortened"], "an entry that fits is not cut") }
                positions += entries.compactMap { $0["position"] as? Int }
                pages += 1
                guard let next = object["next"] as? Int else { break }
                XCTAssertEqual(next, positions.last.map { $0 + 1 })
                from = next
            }
            XCTAssertEqual(positions, Array(1...count), "budget \(budget)")
            if budget < JSONPage.budget { XCTAssertGreaterThan(pages, 1) }
        }
    }

    /// An entry longer than a page alone still comes, first on its page, with its text cut and a reason.
    func testAnEntryLongerThanAPageComesAloneShortened() throws {
        var state = State()
        let long = String(repeating: "ü", count: 3_000)
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/" + long + ".flac", title: long), TrackInfo(path: "/m/c.flac")]))
        let first = QueueJSON.text(state, from: 1, budget: 2_000)
        XCTAssertTrue(first.hasSuffix(",\"next\":2}"), first)
        let second = QueueJSON.text(state, from: 2, budget: 2_000)
        XCTAssertLessThanOrEqual(second.utf8.count, 2_000)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(second.utf8)) as? [String: Any], second)
        let entries = try XCTUnwrap(object["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["position"] as? Int }, [2, 3])
        XCTAssertNil(entries[1]["shortened"])
        XCTAssertEqual(entries[0]["shortened"] as? String, "the entry is longer than one reply")
        XCTAssertTrue((entries[0]["title"] as? String)?.hasSuffix("…") == true)
        XCTAssertNil(object["next"])
    }
}

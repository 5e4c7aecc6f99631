// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

/// `ls --json --from N`: a folder of folders and files in pages (folders first), at budgets from
/// tight to the real one; every entry reached once, in order, each page valid JSON within its budget.
final class LibraryPageTests: XCTestCase {
    func testFollowingNextReachesEveryFolderAndFileOnce() throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("jukebox-librarypage-" + UUID().uuidString).resolvingSymlinksInPath().path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let names = (1...40).map { String(format: "%02d ", $0) + String(repeating: "name ", count: $0 % 7) }
        for name in names.prefix(17) { try FileManager.default.createDirectory(atPath: root + "/" + name + "dir", withIntermediateDirectories: true) }
        for name in names.dropFirst(17) { XCTAssertTrue(FileManager.default.createFile(atPath: root + "/" + name + ".wav", contents: Data())) }
        var loads = 0
        let load = { (paths: [String]) -> (tracks: [TrackInfo], messages: [String]) in
            loads += 1
            return (paths.map { TrackInfo(path: $0, title: "T " + $0.suffix(12), duration: 1) }, [])
        }
        for budget in [500, 900, 1_700, JSONPage.budget] {
            var from = 1
            var seen: [String] = []
            var pages = 0
            loads = 0
            while true {
                let text = try LibraryListing.json(path: root, from: from, budget: budget, roots: [root], load: load).get()
                XCTAssertLessThanOrEqual(text.utf8.count, budget, "from \(from)")
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
                let entries = ((object["folders"] as? [[String: Any]]) ?? []) + ((object["files"] as? [[String: Any]]) ?? [])
                XCTAssertFalse(entries.isEmpty, "budget \(budget), from \(from): an empty page")
                for e in entries { XCTAssertNil(e["shortened"]) }
                seen += entries.compactMap { ($0["name"] as? String).map { String($0.prefix(2)) } }
                pages += 1
                guard let next = object["next"] as? Int else { break }
                XCTAssertEqual(next, seen.count + 1, "budget \(budget)")
                from = next
            }
            XCTAssertEqual(seen, (1...40).map { String(format: "%02d", $0) }, "budget \(budget)")
            if budget < 1_000 { XCTAssertGreaterThan(pages, 3) }
            XCTAssertLessThanOrEqual(loads, pages, "the tags are read only for pages that reach the files")
        }
        // Several music folders without a path: they are the folders, paged alike.
        let roots = [root + "/" + names[0] + "dir", root + "/" + names[1] + "dir"]
        let first = try LibraryListing.json(path: nil, from: 1, budget: 200, roots: roots, load: load).get()
        XCTAssertEqual(first, "{\"path\":null,\"parent\":null,\"folders\":[{\"name\":\"\(roots[0])\",\"path\":\"\(roots[0])\"}],\"files\":[],\"next\":2}")
        let second = try LibraryListing.json(path: nil, from: 2, budget: 200, roots: roots, load: load).get()
        XCTAssertEqual(second, "{\"path\":null,\"parent\":null,\"folders\":[{\"name\":\"\(roots[1])\",\"path\":\"\(roots[1])\"}],\"files\":[]}")
        // Past the end: nothing, no next.
        let past = try LibraryListing.json(path: root, from: 41, roots: [root], load: load).get()
        XCTAssertTrue(past.hasSuffix("\"folders\":[],\"files\":[]}"), past)
    }
}

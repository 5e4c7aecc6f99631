// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

/// `search --json`: the words, the matching, the walk's rules and bounds (a loader of made-up tags).
final class LibrarySearchTests: XCTestCase {
    func testEveryWordMustBeInSomeFieldWhateverItsCase() {
        let fields: [String?] = ["01 Dancing Queen.flac", "Dancing Queen", "ABBA", nil]
        let table: [(String, Bool)] = [
            ("abba", true), ("ABBA queen", true), ("queen abba", true), ("danc", true), (".flac", true),
            ("abba king", false), ("", false), ("   ", false), ("dancing-queen", false),
        ]
        for (text, expected) in table {
            XCTAssertEqual(LibrarySearch.matches(LibrarySearch.words(text), fields), expected, text)
        }
        XCTAssertEqual(LibrarySearch.words(" A  b\tC "), ["a", "b", "c"])
        XCTAssertEqual(LibrarySearch.words("1 2 3 4 5 6 7 8 9 10").count, 8)
    }

    private func load(_ paths: [String]) -> (tracks: [TrackInfo], messages: [String]) {
        (paths.map { path in
            let name = (path as NSString).lastPathComponent
            return name.hasPrefix("abba") ? TrackInfo(path: path, title: "Waterloo", artist: "ABBA", album: "Gold", duration: 160)
                : TrackInfo(path: path, title: "Other", artist: "Someone", album: nil, duration: 60)
        }, [])
    }

    private func object(_ result: Result<String, LibraryListingError>) throws -> [String: Any] {
        let text = try result.get()
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func testItFindsFilesByTagsAndNameAndFoldersByNameInsideTheMusicFolderOnly() throws {
        let dir = TempDir()
        dir.write("music/Waterloo Album/abba1.flac", "x")
        dir.write("music/Waterloo Album/other.flac", "x")
        dir.write("music/Pop/deep/abba2.mp3", "x")
        dir.write("music/Pop/notes.txt", "waterloo")
        dir.write("music/.hidden/abba3.flac", "x")
        dir.write("outside/abba4.flac", "x")
        try FileManager.default.createSymbolicLink(atPath: dir.file("music/out"), withDestinationPath: dir.file("outside"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("music/Pop/loop"), withDestinationPath: dir.file("music"))
        let root = dir.file("music")
        let o = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: load))
        let files = try XCTUnwrap(o["files"] as? [[String: Any]]).map { $0["path"] as? String }
        let folders = try XCTUnwrap(o["folders"] as? [[String: Any]]).map { $0["path"] as? String }
        let real = (root as NSString).resolvingSymlinksInPath
        XCTAssertEqual(Set(files.compactMap { $0 }.map { ($0 as NSString).lastPathComponent }), ["abba1.flac", "abba2.mp3"])
        XCTAssertEqual(folders.compactMap { $0 }.map { ($0 as NSString).lastPathComponent }, ["Waterloo Album"])
        XCTAssertTrue(files.allSatisfy { $0?.hasPrefix(real + "/") == true }, "\(files)")
        XCTAssertNil(o["truncated"])
        XCTAssertNil(o["incomplete"])
        // By file name: the loader's titles do not say "other.flac".
        let byName = try object(LibrarySearch.json(text: "OTHER.FLAC", roots: [root], load: load))
        XCTAssertEqual((byName["files"] as? [[String: Any]])?.count, 1)
        XCTAssertThrowsError(try LibrarySearch.json(text: "  ", roots: [root], load: load).get())
        XCTAssertThrowsError(try LibrarySearch.json(text: "x", roots: [dir.file("none")], load: load).get())
    }

    func testItStopsAtItsResultLimitAndAtItsTimeBudgetSayingSo() throws {
        let dir = TempDir()
        for i in 0..<150 { dir.write("music/f\(i)/abba\(i).flac", "x") }
        let root = dir.file("music")
        let many = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: load))
        XCTAssertEqual((many["files"] as? [[String: Any]])?.count, LibrarySearch.maxResults)
        XCTAssertEqual(many["truncated"] as? Bool, true)
        // A clock that moves a second at every look: the budget of 3 s ends the walk early.
        var now = 0.0
        let slow = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: load, budget: 3, clock: { now += 1; return now }))
        XCTAssertEqual(slow["incomplete"] as? Bool, true)
        XCTAssertLessThan((slow["files"] as? [[String: Any]])?.count ?? 99, 10)
        let capped = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: load, maxFiles: 20))
        XCTAssertEqual(capped["incomplete"] as? Bool, true)
        XCTAssertEqual(capped["scanned"] as? Int, 20)
    }

    /// `ls --json`'s pages through the cache (`SearchTagCache.tracks`, as the control port lists): a
    /// folder's files are read once across its pages, a changed or new file at the next page, and
    /// the listing is the same as without the cache.
    func testAFolderPagedReadsEachFileOnceAndAChangedOneAgain() throws {
        let dir = TempDir()
        for i in 0..<30 { dir.write(String(format: "music/%02d.flac", i), "x") }
        let root = dir.file("music")
        let cache = SearchTagCache()
        var read: [String] = []
        let counting: ([String]) -> (tracks: [TrackInfo], messages: [String]) = { paths in
            read += paths
            return self.load(paths)
        }
        func pages(_ cached: Bool) throws -> [String] {
            var from: Int? = 1
            var names: [String] = []
            while let at = from {
                let text = try LibraryListing.json(path: root, from: at, budget: 1_500, roots: [root],
                                                   load: cached ? { cache.tracks($0, load: counting) } : self.load).get()
                let page = try object(.success(text))
                names += ((page["files"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
                from = page["next"] as? Int
            }
            return names
        }
        let plain = try pages(false)
        XCTAssertEqual(plain.count, 30)
        XCTAssertEqual(try pages(true), plain)
        XCTAssertEqual(read.count, 30, "each file read once across the pages")
        read = []
        dir.write("music/07.flac", "changed")
        dir.write("music/30.flac", "new")
        XCTAssertEqual(try pages(true).count, 31)
        XCTAssertEqual(Set(read.map { ($0 as NSString).lastPathComponent }), ["07.flac", "30.flac"])
    }

    func testTagsReadOnceAreKeptWhileTheFileIsUnchanged() throws {
        let dir = TempDir()
        for i in 0..<10 { dir.write("music/abba\(i).flac", "x") }
        let root = dir.file("music")
        let cache = SearchTagCache()
        var read: [String] = []
        let counting: ([String]) -> (tracks: [TrackInfo], messages: [String]) = { paths in
            read += paths
            return self.load(paths)
        }
        let first = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: counting, cache: cache))
        XCTAssertEqual(read.count, 10)
        XCTAssertEqual((first["files"] as? [[String: Any]])?.count, 10)
        read = []
        let second = try object(LibrarySearch.json(text: "waterloo", roots: [root], load: counting, cache: cache))
        XCTAssertEqual(read, [], "the tags were read again")
        XCTAssertEqual((second["files"] as? [[String: Any]])?.count, 10)
        XCTAssertEqual(second["scanned"] as? Int, 10)
        // A file that changed (its size) is read again; a new search sees its new tags.
        dir.write("music/abba3.flac", "longer now")
        _ = try LibrarySearch.json(text: "waterloo", roots: [root], load: counting, cache: cache).get()
        XCTAssertEqual(read.map { ($0 as NSString).lastPathComponent }, ["abba3.flac"])
    }
}

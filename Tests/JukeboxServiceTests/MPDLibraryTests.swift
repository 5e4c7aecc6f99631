// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import XCTest

/// The MPD library index and its filters, pure: the replies of `lsinfo`, `listall`, `find`,
/// `search`, `list` and `count` from a made-up set of tracks.
final class MPDLibraryTests: XCTestCase {
    static let root = "/srv/music"
    static let tracks = [
        TrackInfo(path: root + "/Abba/Gold/01 Dancing.flac", title: "Dancing Queen", artist: "ABBA", album: "Gold", trackNumber: 1, duration: 231.5),
        TrackInfo(path: root + "/Abba/Gold/02 Knowing.flac", title: "Knowing Me", artist: "ABBA", album: "Gold", trackNumber: 2, duration: 240),
        TrackInfo(path: root + "/Bach/Suites/Cello 1.flac", title: "Prelude", artist: "Bach", album: "Suites", trackNumber: 1, duration: 150),
        TrackInfo(path: root + "/loose.wav", title: "loose"),
        TrackInfo(path: "/elsewhere/x.wav", title: "x"),
    ]

    func library() -> MPDLibrary {
        var lib = MPDLibrary(roots: [Self.root])
        lib.replace(under: "", with: Self.tracks)
        return lib
    }

    func filter(_ args: String..., fold: Bool = false) throws -> MPDFilter {
        try MPDFilter.parse(args, fold: fold).get()
    }

    func uris(_ lib: MPDLibrary, _ f: MPDFilter) -> [String] { lib.find(f).map(\.uri) }

    func testTheIndexKeepsOnlySongsInsideTheFoldersSortedByURI() {
        XCTAssertEqual(library().songs.map(\.uri), ["Abba/Gold/01 Dancing.flac", "Abba/Gold/02 Knowing.flac", "Bach/Suites/Cello 1.flac", "loose.wav"])
    }

    func testLsinfoListsSubdirectoriesThenSongsAndASongItself() throws {
        let lib = library()
        XCTAssertEqual(try lib.lsinfo("").get(), ["directory: Abba", "directory: Bach", "file: loose.wav", "Title: loose"])
        XCTAssertEqual(try lib.lsinfo("/Abba/").get(), ["directory: Abba/Gold"])
        XCTAssertEqual(try lib.lsinfo("Bach/Suites/Cello 1.flac").get(),
                       ["file: Bach/Suites/Cello 1.flac", "Artist: Bach", "Album: Suites", "Title: Prelude", "Track: 1",
                        "Time: 150", "duration: 150.000"])
        XCTAssertEqual(lib.lsinfo("Ab"), .failure(MPDError(.noExist, "No such directory")))
    }

    func testListallGivesEachDirectoryOnceBeforeItsSongs() throws {
        let lib = library()
        XCTAssertEqual(try lib.listall("", info: false).get(),
                       ["directory: Abba", "directory: Abba/Gold", "file: Abba/Gold/01 Dancing.flac", "file: Abba/Gold/02 Knowing.flac",
                        "directory: Bach", "directory: Bach/Suites", "file: Bach/Suites/Cello 1.flac", "file: loose.wav"])
        XCTAssertEqual(try lib.listall("Abba", info: false).get(),
                       ["directory: Abba/Gold", "file: Abba/Gold/01 Dancing.flac", "file: Abba/Gold/02 Knowing.flac"])
        XCTAssertEqual(try lib.listall("Bach", info: true).get(),
                       ["directory: Bach/Suites", "file: Bach/Suites/Cello 1.flac", "Artist: Bach", "Album: Suites", "Title: Prelude",
                        "Track: 1", "Time: 150", "duration: 150.000"])
    }

    func testAnUpdateOfAFolderReplacesOnlyWhatIsUnderIt() {
        var lib = library()
        lib.replace(under: "Abba", with: [TrackInfo(path: Self.root + "/Abba/New/1.wav", title: "New")])
        XCTAssertEqual(lib.songs.map(\.uri), ["Abba/New/1.wav", "Bach/Suites/Cello 1.flac", "loose.wav"])
        lib.replace(under: "Abb", with: [])
        XCTAssertEqual(lib.songs.count, 3, "a name that is a prefix of a folder's is not that folder")
    }

    func testTheOldFormFindsExactValuesAndSearchFindsSubstringsIgnoringCase() throws {
        let lib = library()
        XCTAssertEqual(uris(lib, try filter("artist", "ABBA", "album", "Gold")).count, 2)
        XCTAssertEqual(uris(lib, try filter("artist", "abba")), [], "find is exact")
        XCTAssertEqual(uris(lib, try filter("Artist", "abb", fold: true)).count, 2, "search ignores case")
        XCTAssertEqual(uris(lib, try filter("any", "prel", fold: true)), ["Bach/Suites/Cello 1.flac"])
        XCTAssertEqual(uris(lib, try filter("file", "loose.wav")), ["loose.wav"])
        XCTAssertEqual(uris(lib, try filter("base", "Abba/Gold", "track", "2")), ["Abba/Gold/02 Knowing.flac"])
        XCTAssertEqual(uris(lib, try filter("genre", "Pop")), [], "a tag jukebox does not read matches nothing")
        XCTAssertEqual(MPDFilter.parse(["artist"], fold: false), .failure(MPDError(.arg, "'(' expected")))
        XCTAssertEqual(MPDFilter.parse(["artist", "a", "album"], fold: false), .failure(MPDError(.arg, "Incorrect number of filter arguments")))
        XCTAssertEqual(MPDFilter.parse(["colour", "red"], fold: false), .failure(MPDError(.arg, "Unknown filter type: colour")))
    }

    func testExpressionsCompareNegateAndCombine() throws {
        let lib = library()
        XCTAssertEqual(uris(lib, try filter("(Artist == \"Bach\")")), ["Bach/Suites/Cello 1.flac"])
        XCTAssertEqual(uris(lib, try filter("(artist contains 'bb')")), [], "find's contains keeps case")
        XCTAssertEqual(uris(lib, try filter("(artist contains 'bb')", fold: true)).count, 2)
        XCTAssertEqual(uris(lib, try filter("((artist == \"ABBA\") AND (!(track == \"1\")))")), ["Abba/Gold/02 Knowing.flac"])
        XCTAssertEqual(uris(lib, try filter("(title starts_with \"Know\")")), ["Abba/Gold/02 Knowing.flac"])
        XCTAssertEqual(uris(lib, try filter("(album != \"Gold\")")), ["Bach/Suites/Cello 1.flac", "loose.wav"])
        XCTAssertEqual(uris(lib, try filter("(base \"Bach\")", "(title == \"Prelude\")")), ["Bach/Suites/Cello 1.flac"])
        XCTAssertEqual(uris(lib, try filter("(file == \"loose.wav\")")), ["loose.wav"])
        XCTAssertEqual(uris(lib, try filter("(title == \"Say \\\"hi\\\"\")")), [])
    }

    func testWhatIsNotSupportedIsRefusedWithItsName() {
        func error(_ text: String) -> String? {
            if case .failure(let e) = MPDFilter.parse([text], fold: false) { return e.message }
            return nil
        }
        XCTAssertEqual(error("(artist =~ \"A.*\")"), "jukebox does not support regular expressions (=~)")
        XCTAssertEqual(error("(modified-since \"2024\")"), "jukebox does not support filtering on modified-since")
        XCTAssertEqual(error("((artist == \"a\") OR (artist == \"b\"))"), "jukebox supports only AND between expressions, not OR")
        XCTAssertEqual(error("(artist == \"a\""), "')' expected")
        XCTAssertEqual(error("(artist == a)"), "Quoted string expected")
        XCTAssertEqual(error("(artist == \"a\") x"), "Unparsed garbage after expression")
        XCTAssertEqual(error("(colour == \"red\")"), "Unknown filter type: colour")
    }

    func testListGivesDistinctSortedValuesGroupedWhenAsked() throws {
        let lib = library()
        XCTAssertEqual(try lib.list("album", filter: .and([]), groups: []).get(), ["Album: Gold", "Album: Suites"])
        XCTAssertEqual(try lib.list("Title", filter: try filter("artist", "ABBA"), groups: []).get(), ["Title: Dancing Queen", "Title: Knowing Me"])
        XCTAssertEqual(try lib.list("album", filter: .and([]), groups: ["albumartist"]).get(),
                       ["AlbumArtist: ABBA", "Album: Gold", "AlbumArtist: Bach", "Album: Suites"])
        XCTAssertEqual(try lib.list("title", filter: .and([]), groups: ["album", "artist"]).get(),
                       ["Artist: ", "Album: ", "Title: loose", // untagged: MPD's empty group
                        "Artist: ABBA", "Album: Gold", "Title: Dancing Queen", "Title: Knowing Me",
                        "Artist: Bach", "Album: Suites", "Title: Prelude"])
        XCTAssertEqual(try lib.list("genre", filter: .and([]), groups: []).get(), [])
        XCTAssertEqual(lib.list("colour", filter: .and([]), groups: []), .failure(MPDError(.arg, "Unknown tag type: colour")))
    }

    func testCountAddsSongsAndSecondsPerGroup() throws {
        let lib = library()
        XCTAssertEqual(try lib.count(try filter("artist", "ABBA"), group: nil).get(), ["songs: 2", "playtime: 472"])
        XCTAssertEqual(try lib.count(.and([]), group: "artist").get(),
                       ["Artist: ", "songs: 1", "playtime: 0", "Artist: ABBA", "songs: 2", "playtime: 472",
                        "Artist: Bach", "songs: 1", "playtime: 150"])
    }

    func testFindaddGivesTheQueueTheTagsAlreadyRead() {
        let lib = library()
        XCTAssertEqual(lib.find(.file("Abba/Gold/01 Dancing.flac")).map(lib.trackInfo), [Self.tracks[0]])
    }
}

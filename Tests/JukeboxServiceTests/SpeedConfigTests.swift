// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
@testable import JukeboxService
import XCTest

/// Playback speed from the files: the config's `speeds` (folder → speed) and a card map entry's
/// `{"play": …, "speed": N}`, each checked with a clear error.
final class SpeedConfigTests: XCTestCase {
    private func parse(_ text: String) throws(Config.Problem) -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testTheConfigsSpeedsAreReadAndChecked() throws {
        XCTAssertEqual(try parse("{}").config.settings.speeds, [:])
        let (c, w) = try parse(#"{"speeds": {"/srv/music/Audiobooks": 1.25, "/srv/music/Podcasts": 2, "/srv/music/Slow": 0.75}}"#)
        XCTAssertEqual(c.settings.speeds, ["/srv/music/Audiobooks": 1.25, "/srv/music/Podcasts": 2, "/srv/music/Slow": 0.75])
        XCTAssertEqual(w, [])
        let expectation = #"c.json: speeds: must be an object of absolute folder path → speed from 0.75 to 2, like {"/srv/music/Audiobooks": 1.25}"#
        let bad: [String] = [#"{"speeds": {"/a": 2.5}}"#, #"{"speeds": {"/a": 0.5}}"#, #"{"speeds": {"a": 1.25}}"#,
                             #"{"speeds": {"/a": "1.25"}}"#, #"{"speeds": [1.25]}"#, #"{"speeds": 1.25}"#]
        for text in bad {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", expectation, text) }
        }
    }

    func testACardEntryMayCarryASpeed() {
        let text = #"{"01": {"play": "/music/Book", "speed": 1.25}, "02": {"play": ["/m/a.flac", "/m/b.flac"]}, "03": "/music/x"}"#
        XCTAssertEqual(CardMapFile.parse(Array(text.utf8), source: "cards.json"), .success(CardMap([
            "01": .play(["/music/Book"]), "02": .play(["/m/a.flac", "/m/b.flac"]), "03": .play(["/music/x"]),
        ], speeds: ["01": 1.25])))
        let badText = #"{"01": {"play": "/music/Book", "speed": 3}, "02": {"play": "toggle", "speed": 1.25}, "03": {"play": "rel"}}"#
        XCTAssertEqual(CardMapFile.parse(Array(badText.utf8), source: "c.json"), .failure(CardMapError([
            "c.json: card 01: a speed must be from 0.75 to 2",
            "c.json: card 02: only an entry that plays takes options",
            "c.json: card 03: \"rel\" is neither an absolute path, a stream URL nor a command (next, pause, play, poweroff, prev, previous, repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)",
        ].joined(separator: "\n"))))
    }

    func testAssignKeepsAnEntryWithOptionsAsWritten() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("speed-cards-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cards.json").path
        try Data(#"{"01": {"play": "/music/Book", "speed": 1.25}}"#.utf8).write(to: URL(fileURLWithPath: path))
        try CardMapFile.assign(id: "02", value: "toggle", path: path)
        XCTAssertEqual(CardMapFile.load(path), .success(CardMap(["01": .play(["/music/Book"]), "02": .command(.togglePlay)],
                                                               speeds: ["01": 1.25])))
    }
}

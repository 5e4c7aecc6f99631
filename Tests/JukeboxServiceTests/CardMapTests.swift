// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
@testable import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The cards map file (parse, atomic assign) and its worker in a runtime: the map read off the
/// loop, reloaded on change (inotify) and on request, a bad map refused with the previous kept,
/// a swipe reading the card's folder through the tag reader.
final class CardMapTests: XCTestCase {
    func testAGoodMapParsesWithIdsNormalised() {
        let text = #"{"00ab-12": "/music/Peppa", "0099": "toggle", "7": ["/m/a.flac", "/m/b.flac"], "8": "vol+"}"#
        XCTAssertEqual(CardMapFile.parse(Array(text.utf8), source: "cards.json"), .success(CardMap([
            "00AB12": .play(["/music/Peppa"]), "0099": .command(.togglePlay), "7": .play(["/m/a.flac", "/m/b.flac"]),
            "8": .command(.volumeUp),
        ])))
        XCTAssertEqual(CardMapFile.parse(Array(" \n".utf8), source: "cards.json"), .success(CardMap()), "an empty file: no cards yet")
    }

    func testABadMapListsEveryProblem() {
        let text = #"{"--": "/a", "01": "sleep soon", "1a": "/x", "1A": "/y", "02": "music/x", "03": [], "04": ["/a", "b"]}"#
        XCTAssertEqual(CardMapFile.parse(Array(text.utf8), source: "c.json"), .failure(CardMapError([
            "c.json: \"--\": an id must be 1-32 letters and digits",
            "c.json: card 01: usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off",
            "c.json: card 02: \"music/x\" is neither an absolute path, a stream URL nor a command (next, pause, play, poweroff, prev, previous, repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)",
            "c.json: card 03: an empty list of paths",
            "c.json: card 04: \"b\" is not an absolute path",
            "c.json: \"1a\": card 1A is listed twice",
        ].joined(separator: "\n"))))
        XCTAssertEqual(CardMapFile.parse(Array("[1, 2]".utf8), source: "c.json"), .failure(CardMapError(
            "c.json: must be an object of card id → path, list of paths, command or {\"play\": path, \"speed\": N}, like {\"0012345678\": \"/music/Peppa\", \"0099\": \"toggle\"}")))
        guard case .failure(let e) = CardMapFile.parse(Array("{\"1\": ".utf8), source: "c.json") else { return XCTFail("torn JSON parsed") }
        XCTAssertTrue(e.message.hasPrefix("c.json: not valid JSON"), e.message)
    }

    func testAssignWritesAtomicallyAndKeepsTheOtherEntries() throws {
        let dir = TempDir()
        let path = dir.file("cards.json")
        try CardMapFile.assign(id: "0012", value: "/music/A", path: path)
        XCTAssertEqual(CardMapFile.load(path), .success(CardMap(["0012": .play(["/music/A"])])))
        dir.write("cards.json", #"{"00ab": ["/m/1.flac", "/m/2.flac"], "5": "next"}"#)
        try CardMapFile.assign(id: "00AB", value: " toggle ", path: path)
        try CardMapFile.assign(id: "6", value: "/music/My Album", path: path)
        XCTAssertEqual(CardMapFile.load(path), .success(CardMap(["00AB": .command(.togglePlay), "5": .command(.next),
                                                                 "6": .play(["/music/My Album"])])))
        XCTAssertEqual(dir.read("cards.json"), """
        {
          "00AB" : "toggle",
          "5" : "next",
          "6" : "/music/My Album"
        }

        """)
        XCTAssertEqual(dir.list(), ["cards.json"], "no temporary file is left")
    }

    func testAssignRefusesBadValuesAndLeavesABadMapAlone() {
        let dir = TempDir()
        let path = dir.write("cards.json", #"{"1": "sleep soon"}"#)
        XCTAssertThrowsError(try CardMapFile.assign(id: "2", value: "/m", path: path)) { error in
            XCTAssertEqual((error as? CardMapError)?.message,
                           "\(path): card 1: usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off\nfix it before assigning")
        }
        XCTAssertEqual(dir.read("cards.json"), #"{"1": "sleep soon"}"#)
        XCTAssertThrowsError(try CardMapFile.assign(id: "--", value: "/m", path: path))
        XCTAssertThrowsError(try CardMapFile.assign(id: "3", value: "dance", path: path))
        XCTAssertEqual(dir.list(), ["cards.json"])
    }

    /// A runtime with a cards map, whose tag reader "reads" a folder as two files in it.
    private func runtime(_ dir: TempDir, audio: RecordingAudio, status: RecordingStatus) -> Runtime {
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: status, log: Log(level: .error))
        runtime.loadTracks = { paths in (paths.flatMap { [TrackInfo(path: $0 + "/1.flac"), TrackInfo(path: $0 + "/2.flac")] }, []) }
        runtime.watchCards(path: dir.file("cards.json"))
        addTeardownBlock { runtime.cards?.finish() }
        return runtime
    }

    /// Lets the runtime take its workers' results until `condition` holds.
    private func settle(_ runtime: Runtime, _ what: String, _ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitFor(10) {
            runtime.waitForSaves()
            return condition()
        }, what, file: file, line: line)
    }

    func testASwipePlaysTheCardsFolderReadOffTheLoop() {
        let dir = TempDir()
        dir.write("cards.json", #"{"0012345678": "/music/Peppa"}"#)
        let audio = RecordingAudio()
        let runtime = runtime(dir, audio: audio, status: RecordingStatus())
        settle(runtime, "the map is read") { runtime.state.cards.map.entries.count == 1 }
        runtime.dispatch(.cardRead(id: "0012345678", at: 5))
        XCTAssertEqual(runtime.state.cards.loading, "0012345678")
        XCTAssertEqual(audio.calls, [], "nothing plays before the folder is read")
        settle(runtime, "the folder is read") { !runtime.state.queue.isEmpty }
        XCTAssertEqual(runtime.state.queue.map(\.info.path), ["/music/Peppa/1.flac", "/music/Peppa/2.flac"])
        XCTAssertEqual(audio.calls, [.play(id: 1, file: "1.flac", at: 0, next: 2, nextFile: "2.flac")])
        XCTAssertEqual(runtime.state.cards.active, ActiveCard(id: "0012345678", tracks: 1..<3))
    }

    func testAnEditedMapIsReloadedAndABadOneKeepsThePrevious() throws {
        let dir = TempDir()
        let status = RecordingStatus()
        let runtime = runtime(dir, audio: RecordingAudio(), status: status)
        // Written as an editor saves: a new file renamed over the old (IN_MOVED_TO).
        let temp = dir.write("cards.json.new", #"{"1": "/m/a", "2": "next"}"#)
        XCTAssertEqual(rename(temp, dir.file("cards.json")), 0)
        settle(runtime, "the new map is in force") { runtime.state.cards.map.entries.count == 2 }
        // Written in place (IN_CLOSE_WRITE), badly.
        dir.write("cards.json", #"{"1": "/m/a", "2": "sleep 5 min"}"#)
        settle(runtime, "the bad map is reported") { !status.reports.isEmpty }
        XCTAssertEqual(status.reports, ["cards map not loaded, keeping the previous one: "
                                        + "\(dir.file("cards.json")): card 2: usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off"])
        XCTAssertEqual(runtime.state.cards.map, CardMap(["1": .play(["/m/a"]), "2": .command(.next)]))
        // Fixed by hand, read again on request (SIGHUP) whatever inotify said.
        dir.write("cards.json", #"{"3": "stop"}"#)
        runtime.cards?.reload()
        settle(runtime, "the fixed map is in force") { runtime.state.cards.map == CardMap(["3": .command(.stop)]) }
    }

    func testCardAssignTakesTheLastUnknownCardAndWritesTheMap() {
        let dir = TempDir()
        let status = RecordingStatus()
        let runtime = runtime(dir, audio: RecordingAudio(), status: status)
        var replies: [[String]] = []
        XCTAssertTrue(runtime.answerLater(.cardAssign(id: nil, value: "/m/x")) { replies.append($0) })
        XCTAssertEqual(replies, [["error: no new card to assign: swipe one, or give its id"]])
        runtime.dispatch(.cardRead(id: "0a0b", at: 1))
        XCTAssertEqual(runtime.state.cards.lastUnknown, "0A0B")
        XCTAssertTrue(runtime.statusJSON().contains(#""newCard":"0A0B""#), runtime.statusJSON())
        XCTAssertTrue(runtime.answerLater(.cardAssign(id: nil, value: "dance")) { replies.append($0) })
        XCTAssertEqual(replies.last, ["error: \"dance\" is neither an absolute path, a stream URL nor a command (next, pause, play, poweroff, "
                                      + "prev, previous, repeat, seek+, seek-, shuffle, stop, toggle, vol+, vol-)"])
        XCTAssertTrue(runtime.answerLater(.cardAssign(id: nil, value: "/m/x")) { replies.append($0) })
        settle(runtime, "the assignment is written") { replies.count == 3 }
        XCTAssertEqual(replies.last, ["ok card 0A0B is /m/x"])
        XCTAssertEqual(runtime.state.cards.map, CardMap(["0A0B": .play(["/m/x"])]), "the new map is in force before the reply")
        XCTAssertNil(runtime.state.cards.lastUnknown)
        XCTAssertEqual(CardMapFile.load(dir.file("cards.json")), .success(CardMap(["0A0B": .play(["/m/x"])])))
        XCTAssertTrue(runtime.answerLater(.cardAssign(id: "77", value: "vol-")) { replies.append($0) })
        settle(runtime, "the second assignment is written") { replies.count == 4 }
        XCTAssertEqual(replies.last, ["ok card 77 is vol-"])
        XCTAssertEqual(runtime.state.cards.map, CardMap(["0A0B": .play(["/m/x"]), "77": .command(.volumeDown)]))
    }

    func testWithoutACardsMapAssignIsRefused() {
        let runtime = Runtime(state: State(), audio: RecordingAudio(), store: nil, status: RecordingStatus(), log: Log(level: .error))
        XCTAssertFalse(runtime.answerLater(.cardAssign(id: "1", value: "next")) { _ in })
        XCTAssertEqual(runtime.answer(.cardAssign(id: "1", value: "next")), ["error: no cards map is configured (config \"rfid\")"])
    }

    func testTheRfidConfig() throws {
        let (c, w) = try Config.parse(Array(#"{"rfid": {"reader": "keyboard", "name": "RFID", "secondSwipe": "restart", "sameCardDelay": 2, "extra": 1}}"#.utf8),
                                      source: "/etc/jukebox/config.json")
        var want = RFIDSettings(cards: "/etc/jukebox/cards.json")
        want.name = "RFID"
        XCTAssertEqual(c.rfid, want)
        XCTAssertEqual(c.settings.cards.secondSwipe, .restart)
        XCTAssertEqual(c.settings.cards.sameCardDelay, 2)
        XCTAssertEqual(w, ["/etc/jukebox/config.json: unknown key \"rfid.extra\" ignored"])
        let d = try Config.parse(Array(#"{"rfid": {"device": "/dev/input/by-id/usb-x-event-kbd", "cards": "maps/cards.json"}}"#.utf8),
                                 source: "/etc/jukebox/config.json").config
        XCTAssertEqual(d.rfid?.device, "/dev/input/by-id/usb-x-event-kbd")
        XCTAssertEqual(d.rfid?.cards, "/etc/jukebox/maps/cards.json")
        XCTAssertEqual(d.settings.cards, CardSettings())
        // The readers that see removal: defaults, and onRemove.
        let rc = try Config.parse(Array(#"{"rfid": {"reader": "rc522", "onRemove": "pause"}}"#.utf8), source: "/etc/jukebox/config.json").config
        XCTAssertEqual(rc.rfid?.reader, .rc522)
        XCTAssertEqual(rc.rfid?.device, "/dev/spidev0.0")
        XCTAssertEqual(rc.settings.cards.onRemove, .pause)
        let pn = try Config.parse(Array(#"{"rfid": {"reader": "pn532", "bus": "/dev/i2c-3", "address": 36}}"#.utf8), source: "/etc/jukebox/config.json").config
        XCTAssertEqual(pn.rfid?.reader, .pn532)
        XCTAssertEqual(pn.rfid?.bus, "/dev/i2c-3")
        XCTAssertEqual(pn.rfid?.address, 0x24)
        XCTAssertEqual(pn.settings.cards.onRemove, .none)
        let pnDefault = try Config.parse(Array(#"{"rfid": {"reader": "pn532"}}"#.utf8), source: "/etc/jukebox/config.json").config
        XCTAssertEqual(pnDefault.rfid?.bus, "/dev/i2c-1")
        func problem(_ text: String) -> String {
            do { _ = try Config.parse(Array(text.utf8), source: "c.json"); return "parsed" } catch { return error.description }
        }
        XCTAssertEqual(problem(#"{"rfid": {}}"#), "c.json: rfid.device: must be the reader's evdev path such as \"/dev/input/by-id/usb-…-event-kbd\" (or give \"name\"); for \"rc522\" its spidev node such as \"/dev/spidev0.0\"")
        XCTAssertEqual(problem(#"{"rfid": {"name": "R", "secondSwipe": "twice"}}"#), "c.json: rfid.secondSwipe: must be \"toggle\", \"restart\", \"next\" or \"none\"")
        XCTAssertEqual(problem(#"{"rfid": {"name": "R", "reader": "rc523"}}"#), "c.json: rfid.reader: must be \"keyboard\" (a USB reader that types the id), \"rc522\" (SPI) or \"pn532\" (I2C)")
        XCTAssertEqual(problem(#"{"rfid": {"reader": "rc522", "onRemove": "stop"}}"#), "c.json: rfid.onRemove: must be \"pause\" or \"none\"")
        XCTAssertEqual(problem(#"{"rfid": {"reader": "pn532", "address": 200}}"#), "c.json: rfid.address: must be the PN532's 7-bit I2C address, 8 to 119 (36 = 0x24 by default)")
        XCTAssertEqual(problem(#"{"rfid": {"reader": "pn532", "bus": "i2c-1"}}"#), "c.json: rfid.bus: must be the PN532's I2C bus such as \"/dev/i2c-1\"")
        XCTAssertEqual(problem(#"{"rfid": {"device": 3}}"#), "c.json: rfid.device: must be the reader's evdev path such as \"/dev/input/by-id/usb-…-event-kbd\" (or give \"name\"); for \"rc522\" its spidev node such as \"/dev/spidev0.0\"")
        XCTAssertEqual(problem(#"{"rfid": "yes"}"#), "c.json: rfid: must be an object such as {\"reader\": \"keyboard\", \"name\": \"RFID\"}")
        XCTAssertEqual(problem(#"{"rfid": {"name": "R", "sameCardDelay": -1}}"#), "c.json: rfid.sameCardDelay: must be seconds from 0 to 60")
    }
}

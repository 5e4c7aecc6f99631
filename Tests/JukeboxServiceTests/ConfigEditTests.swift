// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

/// `ConfigEdit`: a change touches only its key's text; what the config refuses is refused with
/// the config's own message, and then nothing is written.
final class ConfigEditTests: XCTestCase {
    func edit(_ text: String, _ changes: [ConfigEdit.Change]) throws -> String {
        String(decoding: try ConfigEdit.apply(changes, to: Array(text.utf8)), as: UTF8.self)
    }

    /// (before, change, after): the whole text compared, so every untouched byte is checked.
    func testChangesKeepTheRestByteForByte() throws {
        let file = """
        {
          "device": "hw:CARD=DAC",
          "volumeMax": 90,
            "unknownKey": {"x": [1, "}", "\\"]"]},
          "rfid": {"reader": "keyboard", "device": "/dev/input/event0", "onRemove": "none"},
          "music": ["/srv/music"]
        }

        """
        let table: [(String, [ConfigEdit.Change], String)] = [
            // Replace a value: only its bytes change.
            (file, [.init(["volumeMax"], "75")], file.replacingOccurrences(of: "\"volumeMax\": 90", with: "\"volumeMax\": 75")),
            // A new key goes after the last, with the last one's indentation.
            (file, [.init(["bootVolume"], "30")], file.replacingOccurrences(of: "\"music\": [\"/srv/music\"]\n}",
                                                                             with: "\"music\": [\"/srv/music\"],\n  \"bootVolume\": 30\n}")),
            // Removing a key takes its comma with it.
            (file, [.init(["volumeMax"], nil)], file.replacingOccurrences(of: "\n  \"volumeMax\": 90,", with: "")),
            (file, [.init(["music"], nil)], file.replacingOccurrences(of: ",\n  \"music\": [\"/srv/music\"]", with: "")),
            (file, [.init(["device"], nil)], file.replacingOccurrences(of: "\"device\": \"hw:CARD=DAC\",\n  ", with: "")),
            // Absent and removed: nothing changes.
            (file, [.init(["idlePowerOff"], nil)], file),
            // One object deep.
            (file, [.init(["rfid", "onRemove"], "\"pause\"")], file.replacingOccurrences(of: "\"onRemove\": \"none\"", with: "\"onRemove\": \"pause\"")),
            (file, [.init(["rfid", "secondSwipe"], "\"next\"")], file.replacingOccurrences(of: "\"onRemove\": \"none\"}",
                                                                                           with: "\"onRemove\": \"none\", \"secondSwipe\": \"next\"}")),
            // One line, and the empty object.
            ("{\"a\": 1, \"volumeMax\": 90}", [.init(["volumeMin"], "5")], "{\"a\": 1, \"volumeMax\": 90, \"volumeMin\": 5}"),
            ("{}\n", [.init(["volumeMin"], "5")], "{\"volumeMin\": 5}\n"),
            ("{ }", [.init(["rfid", "onRemove"], "\"pause\"")], "{ \"rfid\": {\"onRemove\": \"pause\"}}"),
            ("{\"volumeMin\": 5}", [.init(["volumeMin"], nil)], "{}"),
            // A key written with an escape is the same key.
            ("{\"volume\\u004dax\": 90}", [.init(["volumeMax"], "80")], "{\"volume\\u004dax\": 80}"),
        ]
        for (n, (before, changes, after)) in table.enumerated() {
            let got = try edit(before, changes)
            XCTAssertEqual(got, after, "row \(n)")
            // Each result is still JSON the config reads (rows without a reader or its map aside).
            XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(got.utf8)), "row \(n): \(got)")
        }
    }

    func testTextItCannotEditIsRefused() {
        for (text, change) in [("[1]", ConfigEdit.Change(["volumeMax"], "1")), ("{\"volumeMax\": 1, \"volumeMax\": 2}", .init(["volumeMax"], "3")),
                               ("{\"rfid\": 3}", .init(["rfid", "onRemove"], "\"pause\"")), ("{\"a\": \"open", .init(["a"], "1"))] {
            XCTAssertThrowsError(try edit(text, [change]), text)
        }
    }

    func testWriteValidatesWithTheConfigsOwnMessageAndWritesNothingOnRefusal() throws {
        let dir = TempDir()
        let text = "{\n  \"volumeMin\": 10,\n  \"zzz\": \"kept\"\n}\n"
        let path = dir.write("config.json", text)
        chmod(path, 0o640)
        for (change, words) in [(ConfigEdit.Change(["volumeMax"], "101"), "volumeMax: must be 0 to 100"),
                                (.init(["volumeMax"], "5"), "volumeMin: must be 0 to 100, with volumeMin <= volumeMax"),
                                (.init(["idlePowerOff"], "\"soon\""), "idlePowerOff: must be minutes"),
                                (.init(["rfid", "onRemove"], "\"eject\""), "rfid.")] {
            XCTAssertThrowsError(try ConfigEdit.write(path: path, [change])) { error in
                let message = "\(error)"
                XCTAssertTrue(message.hasPrefix(path + ": "), message)
                XCTAssertTrue(message.contains(words), message)
                do {
                    // The config's own words: what loading the same text says.
                    let edited = try ConfigEdit.apply([change], to: Array(text.utf8))
                    XCTAssertThrowsError(try Config.load(edited, path: path)) { XCTAssertEqual("\($0)", message) }
                } catch { XCTFail("\(error)") }
            }
            XCTAssertEqual(dir.read("config.json"), text, "refused: the file as it was")
            XCTAssertEqual(dir.list(), ["config.json"], "refused: no temporary left")
        }
        let config = try ConfigEdit.write(path: path, [.init(["volumeMax"], "80"), .init(["volumeMin"], "20")])
        XCTAssertEqual([config.settings.volumeMin, config.settings.volumeMax], [20, 80])
        XCTAssertEqual(dir.read("config.json"), "{\n  \"volumeMin\": 20,\n  \"zzz\": \"kept\",\n  \"volumeMax\": 80\n}\n")
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o640, "the file keeps its mode")
        XCTAssertEqual(dir.list(), ["config.json"])
        XCTAssertEqual(try Config.load(path: path).warnings, [path + ": unknown key \"zzz\" ignored"])
        // A file it cannot read is said as the player says it (`PATH: cannot read: …`).
        let unreadable: [(String, (String) -> Void)] = [
            ("gone.json", { _ in }),
            ("folder.json", { _ = mkdir($0, 0o755) }),
            ("big.json", { _ = FileManager.default.createFile(atPath: $0, contents: Data(count: Config.maxFileBytes + 1)) }),
        ]
        for (name, make) in unreadable {
            let other = dir.path + "/" + name
            make(other)
            var loaded = "", edited = ""
            XCTAssertThrowsError(try Config.load(path: other)) { loaded = "\($0)" }
            XCTAssertThrowsError(try ConfigEdit.write(path: other, [.init(["volumeMax"], "80")])) { edited = "\($0)" }
            XCTAssertEqual(edited, loaded)
            XCTAssertTrue(edited.hasPrefix(other + ": cannot read: "), edited)
        }
    }

    func testValueReadsTheFilesText() {
        let file = Array("{\"volumeMax\": 80, \"rfid\": {\"onRemove\": \"pause\"}}".utf8)
        XCTAssertEqual(ConfigEdit.value(at: ["volumeMax"], in: file), "80")
        XCTAssertEqual(ConfigEdit.value(at: ["rfid", "onRemove"], in: file), "\"pause\"")
        XCTAssertNil(ConfigEdit.value(at: ["bootVolume"], in: file))
        XCTAssertNil(ConfigEdit.value(at: ["volumeMax", "x"], in: file))
    }
}

extension ConfigEditTests {
    /// Random edits of the shipped example config (set, add, remove; top level and one deep):
    /// each result is JSON whose object is the old one with exactly that change, and every key
    /// not edited keeps its bytes. The seed is printed; JUKEBOX_SEED repeats a run.
    func testRandomEditsChangeOnlyTheirKey() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var text = Array(try Data(contentsOf: repo.appendingPathComponent("board/config.example.json")))
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("ConfigEditTests.testRandomEditsChangeOnlyTheirKey seed \(seed) (JUKEBOX_SEED=\(seed) repeats it)")
        var rng = seed
        func next(_ n: Int) -> Int {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return Int((rng >> 33) % UInt64(n))
        }
        let values = ["1", "\"x\"", "true", "null", "[1, \"]\"]", "{\"a\": {\"b\": \"}\"}}", "\"\\\"}\"", "-2.5e3"]
        for step in 0..<100 {
            var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text)) as? [String: Any])
            let keys = object.keys.sorted()
            let objects = keys.filter { object[$0] is [String: Any] }
            let deep = !objects.isEmpty && next(3) == 0
            let parent = deep ? objects[next(objects.count)] : nil
            let siblings = parent.map { Array((object[$0] as! [String: Any]).keys).sorted() } ?? keys
            let key = next(4) == 0 || siblings.isEmpty ? "new\(step)" : siblings[next(siblings.count)]
            let value: String? = next(5) == 0 ? nil : values[next(values.count)]
            let path = (parent.map { [$0] } ?? []) + [key]
            let out = try ConfigEdit.apply([.init(path, value)], to: text)
            let got = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out)) as? [String: Any], "seed \(seed) step \(step): \(String(decoding: out, as: UTF8.self))")
            // The expected object: the old one with that change.
            let parsed = try value.map { try JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
            if let parent {
                var inner = object[parent] as! [String: Any]
                inner[key] = parsed
                object[parent] = inner
            } else {
                object[key] = parsed
            }
            XCTAssertEqual(NSDictionary(dictionary: got), NSDictionary(dictionary: object), "seed \(seed) step \(step): \(path) = \(value ?? "removed")")
            // Every other top-level key keeps its text.
            for other in keys where other != path[0] {
                XCTAssertEqual(ConfigEdit.value(at: [other], in: out), ConfigEdit.value(at: [other], in: text), "seed \(seed) step \(step): \(other)")
            }
            text = out
        }
    }
}

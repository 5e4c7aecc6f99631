// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
import JukeboxService
@testable import JukeboxWeb
import XCTest

/// The settings the page may change: an allow-list; the values are the config's to check.
final class WebSettingsTests: XCTestCase {
    func testOnlyTheListedKeysBecomeChanges() {
        typealias V = WebSettings.Value
        let table: [([String: V], Result<[ConfigEdit.Change], WebSettings.Refusal>)] = [
            (["volumeMax": .number(80)], .success([.init(["volumeMax"], "80")])),
            (["volumeMax": .number(80.5)], .success([.init(["volumeMax"], "80.5")])),
            (["idlePowerOff": .null, "bootVolume": .number(20)],
             .success([.init(["bootVolume"], "20"), .init(["idlePowerOff"], nil)])),
            (["rfid.onRemove": .text("pause\"}")], .success([.init(["rfid", "onRemove"], "\"pause\\\"}\"")])),
            (["parental.dailyLimitMinutes": .number(45), "parental.warnMinutes": .null],
             .success([.init(["parental", "dailyLimitMinutes"], "45"), .init(["parental", "warnMinutes"], nil)])),
            (["parental.resetAt": .text("05:30")], .success([.init(["parental", "resetAt"], "\"05:30\"")])),
            (["parental.quietHours": .span(.init(from: "19:30", to: "07:00", folders: ["/srv/music/lullabies", "/a \"b\""], volumeMax: 30))],
             .success([.init(["parental", "quietHours"],
                             #"{"from": "19:30", "to": "07:00", "folders": ["/srv/music/lullabies", "/a \"b\""], "volumeMax": 30}"#)])),
            (["parental.quietHours": .null, "parental.caps": .spans([.init(from: "07:00", to: "19:00", volumeMax: 70),
                                                                     .init(from: "19:00", to: "07:00", volumeMax: 40, output: "headphones")])],
             .success([.init(["parental", "caps"], #"[{"from": "07:00", "to": "19:00", "volumeMax": 70}, {"from": "19:00", "to": "07:00", "volumeMax": 40, "output": "headphones"}]"#),
                       .init(["parental", "quietHours"], nil)])),
            (["parental.caps": .spans([])], .success([.init(["parental", "caps"], "[]")])),
            // The shape is checked here; the times, ranges and counts by the config's code.
            (["parental.caps": .span(.init(from: "07:00", to: "19:00", volumeMax: 70))],
             .failure(.init(message: "parental.caps must be a list of {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"volumeMax\": 0-100, \"output\": \"speaker\" or \"headphones\"}"))),
            (["parental.caps": .spans([.init(from: "07:00", to: "19:00", folders: ["/x"], volumeMax: 70)])],
             .failure(.init(message: "parental.caps must be a list of {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"volumeMax\": 0-100, \"output\": \"speaker\" or \"headphones\"}"))),
            (["parental.quietHours": .number(3)],
             .failure(.init(message: "parental.quietHours must be {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"folders\": [folders], \"volumeMax\": 0-100}"))),
            (["parental.quietHours": .span(.init(from: "19:30", to: "07:00", output: "speaker"))],
             .failure(.init(message: "parental.quietHours must be {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"folders\": [folders], \"volumeMax\": 0-100}"))),
            (["volumeMax": .spans([])], .failure(.init(message: "volumeMax takes a number or a word, not a span of the day"))),
            (["volumeMax": .null], .failure(.init(message: "volumeMax needs a value"))),
            (["powerCommand": .text("rm -rf /")], .failure(.init(message: "powerCommand is not a setting the page changes; edit the config file"))),
            (["state": .text("/etc/passwd")], .failure(.init(message: "state is not a setting the page changes; edit the config file"))),
            (["rfid.cards": .text("/x")], .failure(.init(message: "rfid.cards is not a setting the page changes; edit the config file"))),
            ([:], .failure(.init(message: "no setting to change"))),
        ]
        for (values, expected) in table {
            XCTAssertEqual(WebSettings.changes(values), expected, "\(values)")
        }
    }

    func testThePageSeesEffectiveValuesAndWhatIsShownOnly() throws {
        let text = "{\"volumeMax\": 70, \"idlePowerOff\": 30, \"buttons\": {\"next\": \"GPIO5\"}, \"mpd\": {}}"
        let config = try Config.parse(Array(text.utf8), source: "c.json").config
        let json = WebSettings.json(config, file: Array(text.utf8), path: "/etc/jukebox/config.json")
        XCTAssertTrue(json.contains("{\"key\":\"volumeMax\",\"value\":70,\"applies\":\"now\",\"optional\":false}"), json)
        XCTAssertTrue(json.contains("{\"key\":\"volumeMin\",\"value\":0,"), json)
        XCTAssertTrue(json.contains("{\"key\":\"idlePowerOff\",\"value\":30,\"applies\":\"now\",\"optional\":true}"), json)
        XCTAssertTrue(json.contains("{\"key\":\"bootVolume\",\"value\":null,\"applies\":\"start\",\"optional\":true}"), json)
        XCTAssertFalse(json.contains("rfid.onRemove\",\"value"), "no rfid section: its keys are not offered")
        XCTAssertTrue(json.contains("\"buttons\":{\"next\":\"GPIO5\"}"), json)
        XCTAssertTrue(json.hasSuffix("\"mpd\":true,\"mqtt\":false,\"rfid\":false}"), json)
        XCTAssertFalse(json.contains("{\"key\":\"parental."), "no parental section: its keys are not offered")
        let parental = "{\"parental\": {\"dailyLimitMinutes\": 90}}"
        let withRules = WebSettings.json(try Config.parse(Array(parental.utf8), source: "c.json").config, file: Array(parental.utf8), path: "c.json")
        XCTAssertTrue(withRules.contains("{\"key\":\"parental.dailyLimitMinutes\",\"value\":90,\"applies\":\"now\",\"optional\":true},"
                                         + "{\"key\":\"parental.warnMinutes\",\"value\":5,"), withRules)
        for (text, offered) in [("{\"rfid\": null}", false), ("{\"rfid\": {\"reader\": \"keyboard\", \"device\": \"/dev/x\"}}", true)] {
            let config = try Config.parse(Array(text.utf8), source: "c.json").config
            XCTAssertEqual(WebSettings.json(config, file: Array(text.utf8), path: "c.json").contains("rfid.onRemove\",\"value"), offered, text)
        }
    }

    /// The page's body decodes spans with their keys only: another key refuses the body.
    func testSpansDecodeWithTheirKeysOnly() throws {
        typealias V = WebSettings.Value
        func decode(_ text: String) -> V? { try? JSONDecoder().decode(V.self, from: Data(text.utf8)) }
        XCTAssertEqual(decode(#"{"from":"22:00","to":"06:30","volumeMax":20}"#), .span(.init(from: "22:00", to: "06:30", volumeMax: 20)))
        XCTAssertEqual(decode(#"[{"from":"22:00","to":"06:30","volumeMax":20,"output":"speaker"}]"#),
                       .spans([.init(from: "22:00", to: "06:30", volumeMax: 20, output: "speaker")]))
        XCTAssertEqual(decode("[]"), .spans([]))
        XCTAssertEqual(decode(#""22:00""#), .text("22:00"))
        XCTAssertNil(decode(#"{"from":"22:00","to":"06:30","powerCommand":"rm"}"#), "an unknown key")
        XCTAssertNil(decode(#"{"from":"22:00"}"#), "no end")
        XCTAssertNil(decode(#"[{"from":"22:00","to":"06:30","volumeMax":20.5}]"#), "a volume is whole")
    }

    /// Spans written by the page pass the config's own parser and become the core's rules; ones
    /// it refuses are refused with its words. The rest of the file is kept.
    func testSpansReachTheRulesThroughTheConfigsOwnCheck() throws {
        let file = Array("{\n  \"volumeMax\": 80,\n  \"parental\": {\"dailyLimitMinutes\": 60}\n}\n".utf8)
        let quiet = WebSettings.Value.span(.init(from: "19:30", to: "7:00", folders: ["/srv/music/lullabies"], volumeMax: 30))
        let caps = WebSettings.Value.spans([.init(from: "07:00", to: "19:00", volumeMax: 70, output: "speaker")])
        let changes = try WebSettings.changes(["parental.quietHours": quiet, "parental.caps": caps, "parental.resetAt": .text("05:00")]).get()
        let (bytes, config) = try ConfigEdit.edited(file, changes, source: "c.json")
        XCTAssertEqual(config.settings.parental, ParentalSettings(
            quietHours: QuietHours(window: DayWindow(from: 1170, to: 420), folders: ["/srv/music/lullabies"], volumeMax: 30),
            dailyLimit: 3600, resetAt: 300, caps: [VolumeCap(window: DayWindow(from: 420, to: 1140), volumeMax: 70, output: .speaker)]))
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).hasPrefix("{\n  \"volumeMax\": 80,\n  \"parental\": {\"dailyLimitMinutes\": 60, "),
                      String(decoding: bytes, as: UTF8.self))
        // The page reads back what the file now says.
        let json = WebSettings.json(config, file: bytes, path: "c.json")
        XCTAssertTrue(json.contains(#"{"key":"parental.resetAt","value":"05:00","applies":"now","optional":true}"#), json)
        XCTAssertTrue(json.contains(#"{"key":"parental.quietHours","value":{"from":"19:30","to":"07:00","folders":["/srv/music/lullabies"],"volumeMax":30},"#), json)
        XCTAssertTrue(json.contains(#"{"key":"parental.caps","value":[{"from":"07:00","to":"19:00","volumeMax":70,"output":"speaker"}],"#), json)
        XCTAssertTrue(json.contains(#""parental.caps.output":["speaker","headphones"]"#), json)
        // Refused by the config's code: a time that is none, a relative folder, 25 caps.
        let refusals: [WebSettings.Value] = [
            .span(.init(from: "25:00", to: "07:00")), .span(.init(from: "19:00", to: "07:00", folders: ["music"])),
            .spans(Array(repeating: .init(from: "07:00", to: "08:00", volumeMax: 50), count: 25)),
            .spans([.init(from: "07:00", to: "08:00", volumeMax: 50, output: "both")]),
        ]
        for value in refusals {
            let key = value == refusals[0] || value == refusals[1] ? "parental.quietHours" : "parental.caps"
            let change = try WebSettings.changes([key: value]).get()
            XCTAssertThrowsError(try ConfigEdit.edited(file, change, source: "c.json"), "\(value)") { error in
                XCTAssertTrue("\(error)".contains("parental: must be {\"quietHours\""), "\(error)")
            }
        }
    }
}

extension WebSettingsTests {
    /// Per-folder speeds: an object of folder → speed, written by folder, checked by the config's
    /// own code (a speed out of range, a relative folder: its words), read back by the page.
    func testFolderSpeedsReachTheConfigThroughItsOwnCheck() throws {
        typealias V = WebSettings.Value
        let file = Array("{\n  \"volumeMax\": 80\n}\n".utf8)
        let value = try JSONDecoder().decode(V.self, from: Data(#"{"/srv/music/Books": 1.25, "/srv/music/A \"b\"": 2}"#.utf8))
        let changes = try WebSettings.changes(["speeds": value]).get()
        XCTAssertEqual(changes, [.init(["speeds"], #"{"/srv/music/A \"b\"": 2, "/srv/music/Books": 1.25}"#)])
        let (bytes, config) = try ConfigEdit.edited(file, changes, source: "c.json")
        XCTAssertEqual(config.settings.speeds, ["/srv/music/Books": 1.25, "/srv/music/A \"b\"": 2])
        let json = WebSettings.json(config, file: bytes, path: "c.json")
        XCTAssertTrue(json.contains(#"{"key":"speeds","value":{"/srv/music/A \"b\"":2,"/srv/music/Books":1.25},"applies":"now","optional":true}"#), json)
        // null: the key leaves the file.
        XCTAssertEqual(WebSettings.changes(["speeds": .null]), .success([.init(["speeds"], nil)]))
        // The shape here; the rest by the config's code.
        XCTAssertEqual(WebSettings.changes(["speeds": .number(1.25)]),
                       .failure(.init(message: "speeds must be an object of folder → speed, like {\"/srv/music/Audiobooks\": 1.25}")))
        XCTAssertEqual(WebSettings.changes(["volumeMax": .numbers(["/a": 1])]),
                       .failure(.init(message: "volumeMax takes a number or a word, not a span of the day")))
        for bad: [String: Double] in [["/a": 3], ["music": 1.25]] {
            let change = try WebSettings.changes(["speeds": .numbers(bad)]).get()
            XCTAssertThrowsError(try ConfigEdit.edited(file, change, source: "c.json"), "\(bad)") { error in
                XCTAssertTrue("\(error)".contains("speeds: must be an object of absolute folder path"), "\(error)")
            }
        }
    }
}

extension WebSettingsTests {
    /// The Bluetooth speaker's keys: the address always (it adds the section), the rest with a
    /// `bluetooth` section, not with one written `null`; their effective
    /// values (the address as the config normalises it, the defaults), `whenGone`'s choices; the
    /// address judged by the config's rule (`BluetoothAddress`), its words when refused.
    func testTheBluetoothSpeakerIsOfferedAddedAndCheckedByTheConfig() throws {
        // Without the section only the address is offered: saving one adds the section.
        let without = Array("{\"volumeMax\": 80}".utf8)
        let plain = WebSettings.json(try Config.load(without, path: "c.json").config, file: without, path: "c.json")
        XCTAssertTrue(plain.contains(#"{"key":"bluetooth.speaker","value":null,"applies":"start","optional":false}"#), plain)
        XCTAssertFalse(plain.contains("\"key\":\"bluetooth.whenGone"), plain)
        let added = try WebSettings.changes(["bluetooth.speaker": .text("AA:BB:CC:DD:EE:FF")]).get()
        let (addedBytes, addedConfig) = try ConfigEdit.edited(without, added, source: "c.json")
        XCTAssertEqual(String(decoding: addedBytes, as: UTF8.self), #"{"volumeMax": 80, "bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF"}}"#)
        XCTAssertEqual(addedConfig.bluetooth, BluetoothSpeakerSettings(address: "AA:BB:CC:DD:EE:FF"))
        // A phone's section without a speaker: the address only (the rules need a speaker).
        let phone = Array("{\"bluetooth\": {\"phone\": true}}".utf8)
        let phoneJSON = WebSettings.json(try Config.load(phone, path: "c.json").config, file: phone, path: "c.json")
        XCTAssertTrue(phoneJSON.contains(#"{"key":"bluetooth.speaker","value":null,"#), phoneJSON)
        XCTAssertFalse(phoneJSON.contains("\"key\":\"bluetooth.whenGone"), phoneJSON)
        let (phoneBytes, _) = try ConfigEdit.edited(phone, added, source: "c.json")
        XCTAssertEqual(String(decoding: phoneBytes, as: UTF8.self), #"{"bluetooth": {"phone": true, "speaker": "AA:BB:CC:DD:EE:FF"}}"#)
        // Off (`null`): nothing offered.
        let off = Array("{\"bluetooth\": null}".utf8)
        XCTAssertFalse(WebSettings.json(try Config.load(off, path: "c.json").config, file: off, path: "c.json").contains("\"key\":\"bluetooth."))
        let file = Array("{\"volumeMax\": 80, \"bluetooth\": {\"speaker\": \"aa:bb:cc:dd:ee:0f\"}}".utf8)
        let json = WebSettings.json(try Config.load(file, path: "c.json").config, file: file, path: "c.json")
        XCTAssertTrue(json.contains(#"{"key":"bluetooth.speaker","value":"AA:BB:CC:DD:EE:0F","applies":"start","optional":false}"#), json)
        XCTAssertTrue(json.contains(#"{"key":"bluetooth.whenGone","value":"card","applies":"now","optional":false}"#), json)
        XCTAssertTrue(json.contains(#"{"key":"bluetooth.volumeMax","value":null,"applies":"now","optional":true}"#), json)
        XCTAssertTrue(json.contains(#""bluetooth.whenGone":["card","pause"]"#), json)

        let changes = try WebSettings.changes(["bluetooth.whenGone": .text("pause"), "bluetooth.volumeMax": .number(40)]).get()
        let (_, config) = try ConfigEdit.edited(file, changes, source: "c.json")
        XCTAssertEqual(config.settings.bluetooth, BluetoothSettings(whenGone: .pause, volumeMax: 40))
        XCTAssertEqual(WebSettings.changes(["bluetooth.speaker": .null]), .failure(.init(message: "bluetooth.speaker needs a value")))
        for bad in ["AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FG", "AA-BB-CC-DD-EE-FF", "AA:BB:CC:DD:EE:FF:00", ""] {
            let change = try WebSettings.changes(["bluetooth.speaker": .text(bad)]).get()
            XCTAssertThrowsError(try ConfigEdit.edited(file, change, source: "c.json"), bad) { error in
                XCTAssertTrue("\(error)".contains("bluetooth: \"speaker\" must be an address of six pairs of hex digits"), "\(error)")
            }
        }
        let refused = try WebSettings.changes(["bluetooth.whenGone": .text("stop")]).get()
        XCTAssertThrowsError(try ConfigEdit.edited(file, refused, source: "c.json")) { error in
            XCTAssertTrue("\(error)".contains("\"whenGone\" must be \"card\" or \"pause\""), "\(error)")
        }
    }
}

// SPDX-License-Identifier: MIT
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
            (["parental.resetAt": .text("00:00")], .failure(.init(message: "parental.resetAt is not a setting the page changes; edit the config file"))),
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
        XCTAssertFalse(json.contains("parental."), "no parental section: its keys are not offered")
        let parental = "{\"parental\": {\"dailyLimitMinutes\": 90}}"
        let withRules = WebSettings.json(try Config.parse(Array(parental.utf8), source: "c.json").config, file: Array(parental.utf8), path: "c.json")
        XCTAssertTrue(withRules.contains("{\"key\":\"parental.dailyLimitMinutes\",\"value\":90,\"applies\":\"now\",\"optional\":true},"
                                         + "{\"key\":\"parental.warnMinutes\",\"value\":5,"), withRules)
        for (text, offered) in [("{\"rfid\": null}", false), ("{\"rfid\": {\"reader\": \"keyboard\", \"device\": \"/dev/x\"}}", true)] {
            let config = try Config.parse(Array(text.utf8), source: "c.json").config
            XCTAssertEqual(WebSettings.json(config, file: Array(text.utf8), path: "c.json").contains("rfid.onRemove\",\"value"), offered, text)
        }
    }
}

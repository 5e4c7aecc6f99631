// SPDX-License-Identifier: MIT
import FoundationEssentials
@testable import JukeboxMQTT
import JukeboxService
import XCTest

/// The playback speed over MQTT: the retained `speed` topic and the `state` object's `speed`, from
/// `status --json`'s `speed` (set by publishing `1.25` to `TOPIC/cmd/speed`, as any command).
final class MQTTSpeedTests: XCTestCase {
    func testTheTopicAndTheStateSayTheSpeed() throws {
        XCTAssertTrue(MQTTBridge.stateTopics.contains("speed"))
        let rows: [(String, String, String)] = [
            (#""speed":1.25"#, "1.25", #""speed":1.25}"#),
            (#""speed":1"#, "1", #""speed":1.0}"#),
            (#""speed":null"#, "", #""speed":null}"#),
            ("\"x\":1", "", #""speed":null}"#),
        ]
        for (field, topic, state) in rows {
            let json = #"{"phase":"playing","count":0,"volume":60,"shuffle":false,"repeat":"off","stream":false,"# + field + "}"
            let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
            XCTAssertEqual(MQTTBridge.speed(status.speed), topic, field)
            XCTAssertTrue(MQTTBridge.state(status, published: nil).text.hasSuffix(state), field)
        }
    }
}

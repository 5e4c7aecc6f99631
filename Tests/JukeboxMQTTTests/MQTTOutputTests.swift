// SPDX-License-Identifier: MIT
import FoundationEssentials
@testable import JukeboxMQTT
import JukeboxService
import XCTest

/// Where the sound is heard over MQTT (issue 31): the retained `output` topic from
/// `status --json`'s `output`; a word the bridge does not know publishes nothing.
final class MQTTOutputTests: XCTestCase {
    func testTheTopicSaysTheOutput() throws {
        XCTAssertTrue(MQTTBridge.stateTopics.contains("output"))
        let rows: [(String, String)] = [
            (#""output":"bluetooth""#, "bluetooth"), (#""output":"card""#, "card"), (#""output":"headphones""#, "headphones"),
            (#""output":null"#, ""), (#""output":"evil\u001b[2J""#, ""), ("\"x\":1", ""),
        ]
        for (field, expected) in rows {
            let json = #"{"phase":"playing","count":0,"volume":60,"shuffle":false,"repeat":"off","stream":false,"# + field + "}"
            let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
            XCTAssertEqual(MQTTBridge.output(status.output), expected, field)
        }
    }
}

// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
@testable import JukeboxMQTT
import JukeboxService
import XCTest

/// The headphone jack over MQTT: Home Assistant's plug binary sensor only on a box that watches a
/// jack, and its topic's value from `status --json`'s `headphones`.
final class MQTTHeadphonesTests: XCTestCase {
    func testTheSensorIsAnnouncedOnlyWithAJack() throws {
        func configs(_ headphones: Bool) -> [String: String] {
            let d = MQTTDiscovery(prefix: "homeassistant", topic: "jukebox/box", version: "jukebox 1", volumeRange: 0...100, headphones: headphones)
            return Dictionary(uniqueKeysWithValues: d.configs().map { ($0.topic, $0.payload) })
        }
        let with = configs(true)
        XCTAssertEqual(Set(with.keys).subtracting(configs(false).keys), ["homeassistant/binary_sensor/jukebox_box/headphones/config"])
        let sensor = try XCTUnwrap(with["homeassistant/binary_sensor/jukebox_box/headphones/config"])
        XCTAssertTrue(sensor.contains(#""state_topic":"jukebox/box/headphones","device_class":"plug""#), sensor)
        XCTAssertTrue(MQTTBridge.stateTopics.contains("headphones"))
    }

    func testTheTopicSaysWhatTheStatusSays() throws {
        for (field, expected) in [(#""headphones":true"#, "ON"), (#""headphones":false"#, "OFF"), (#""headphones":null"#, ""), ("\"x\":1", "")] {
            let json = #"{"phase":"playing","count":0,"volume":60,"shuffle":false,"repeat":"off","stream":false,"# + field + "}"
            let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
            XCTAssertEqual(MQTTBridge.headphones(status.headphones), expected, field)
        }
    }
}

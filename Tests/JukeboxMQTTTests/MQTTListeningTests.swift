// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
import JukeboxFixtures
@testable import JukeboxMQTT
import JukeboxService
import XCTest

/// The parental daily limit over MQTT: Home Assistant's listening-left sensor only while a limit is
/// set, and the topic's value from `status --json`'s `parental.limitLeft`.
final class MQTTListeningTests: XCTestCase {
    func testTheSensorIsAnnouncedOnlyWithADailyLimit() throws {
        func configs(_ limit: Bool) -> [String: String] {
            let d = MQTTDiscovery(prefix: "homeassistant", topic: "jukebox/box", version: "jukebox 1", volumeRange: 0...100,
                                  listeningLimit: limit)
            return Dictionary(uniqueKeysWithValues: d.configs().map { ($0.topic, $0.payload) })
        }
        let with = configs(true)
        XCTAssertEqual(Set(with.keys).subtracting(configs(false).keys), ["homeassistant/sensor/jukebox_box/listening_left/config"])
        let sensor = try XCTUnwrap(with["homeassistant/sensor/jukebox_box/listening_left/config"])
        XCTAssertTrue(sensor.contains(#""state_topic":"jukebox/box/listening_left","device_class":"duration","unit_of_measurement":"min""#), sensor)
        XCTAssertTrue(MQTTBridge.stateTopics.contains("listening_left"))
    }

    func testTheTopicSaysTheMinutesLeftAndNothingWithoutALimit() throws {
        let rows: [(String, String)] = [
            (#""parental":{"clockSynchronized":true,"quiet":false,"limitLeft":42,"resetAt":"06:00"}"#, "42"),
            (#""parental":{"clockSynchronized":false,"quiet":null,"limitLeft":0,"resetAt":"06:00"}"#, "0"),
            (#""parental":{"clockSynchronized":true,"quiet":true,"limitLeft":null,"resetAt":null}"#, ""),
            ("\"x\":1", ""),
        ]
        for (field, expected) in rows {
            let json = #"{"phase":"playing","count":0,"volume":60,"shuffle":false,"repeat":"off","stream":false,"# + field + "}"
            let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
            XCTAssertEqual(MQTTBridge.listeningLeft(status.parental), expected, field)
        }
    }
}

extension MQTTBridgeTests {
    /// A real player with a daily limit of 30 minutes, a real broker: the minutes left retained on
    /// `listening_left` and the sensor announced, both following the player's status.
    func testTheListeningLeftIsPublishedAndAnnouncedWithADailyLimit() throws {
        var settings = Settings()
        settings.parental = ParentalSettings(dailyLimit: 1800)
        _ = try startPlayer(settings: settings)
        let broker = try startBroker()
        startBridge(port: broker.port)
        let o = try observe(broker.port)
        XCTAssertTrue(o.sees(topic + "/listening_left", "30"), "listening_left: \(o.latest(topic + "/listening_left") ?? "nothing")")
        let config = "homeassistant/sensor/jukebox_test/listening_left/config"
        XCTAssertTrue(waitFor(60) { self.json(o.latest(config))?["state_topic"] as? String == self.topic + "/listening_left" },
                      "the sensor: \(o.latest(config) ?? "nothing")")
    }
}

// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
@testable import JukeboxMQTT
import JukeboxService
import XCTest

/// The battery over MQTT: Home Assistant's battery sensor and charging binary sensor only on a box
/// with a battery monitor, and the topics' values from `status --json`'s `battery`.
final class MQTTBatteryTests: XCTestCase {
    private func discovery(battery: Bool) -> [String: String] {
        let d = MQTTDiscovery(prefix: "homeassistant", topic: "jukebox/box", version: "jukebox 1", volumeRange: 0...100, battery: battery)
        return Dictionary(uniqueKeysWithValues: d.configs().map { ($0.topic, $0.payload) })
    }

    func testTheSensorsAreAnnouncedOnlyWithABattery() throws {
        let without = discovery(battery: false), with = discovery(battery: true)
        XCTAssertEqual(Set(with.keys).subtracting(without.keys), [
            "homeassistant/sensor/jukebox_box/battery/config", "homeassistant/binary_sensor/jukebox_box/battery_charging/config",
        ])
        let sensor = try XCTUnwrap(with["homeassistant/sensor/jukebox_box/battery/config"])
        XCTAssertTrue(sensor.contains(#""state_topic":"jukebox/box/battery","device_class":"battery","state_class":"measurement","unit_of_measurement":"%""#), sensor)
        let charging = try XCTUnwrap(with["homeassistant/binary_sensor/jukebox_box/battery_charging/config"])
        XCTAssertTrue(charging.contains(#""state_topic":"jukebox/box/battery_charging","device_class":"battery_charging""#), charging)
        XCTAssertTrue(MQTTBridge.stateTopics.contains("battery") && MQTTBridge.stateTopics.contains("battery_charging"))
    }

    func testTheTopicsSayWhatTheReadingSays() throws {
        let rows: [(String, String, String)] = [
            (#""battery":{"percent":54.5,"volts":3.81,"charging":false,"low":false}"#, "55", "OFF"),
            (#""battery":{"percent":12,"volts":null,"charging":true,"low":false}"#, "12", "ON"),
            (#""battery":{"percent":null,"volts":null,"charging":null,"low":true}"#, "", ""),
            (#""battery":null"#, "", ""),
        ]
        for (field, percent, charging) in rows {
            let json = #"{"phase":"playing","count":0,"volume":60,"shuffle":false,"repeat":"off","stream":false,"# + field + "}"
            let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
            let values = MQTTBridge.battery(status.battery)
            XCTAssertEqual(values.percent, percent, field)
            XCTAssertEqual(values.charging, charging, field)
        }
    }
}

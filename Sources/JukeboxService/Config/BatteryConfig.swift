// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `battery`: which chip measures the box's battery, where, how often, and the levels
/// the core acts at (`BatterySettings`). See docs/BOX.md "Battery".
public struct BatteryMonitorSettings: Equatable, Sendable {
    /// The chips jukebox reads.
    public enum Chip: String, Sendable, CaseIterable { case max17048, ina219 }
    public var chip: Chip
    /// `/dev/i2c-1`, a bus number, or an adapter name (as the display's `bus`).
    public var bus: String
    /// 7-bit address; nil: the chip's usual one (MAX17048 0x36, INA219 0x40).
    public var address: Int?
    /// Seconds between readings (a battery changes slowly; each reading is a few register reads).
    public var interval: Double
    /// INA219: whether a positive shunt voltage means charging (as the shunt is wired).
    public var chargingWhenPositive: Bool

    public init(chip: Chip, bus: String, address: Int?, interval: Double, chargingWhenPositive: Bool) {
        self.chip = chip
        self.bus = bus
        self.address = address
        self.interval = interval
        self.chargingWhenPositive = chargingWhenPositive
    }
}

/// The config's `battery.lowPin`: a low-battery pin (a PowerBoost's LBO) read as a GPIO line,
/// with a chip or without one. Its level is a fact (`Event.batteryPin`); the core decides.
public struct BatteryPinSettings: Equatable, Sendable {
    /// The line, as the buttons' lines are named: `GPIO4`, or `CHIP:OFFSET`.
    public var line: String
    /// Whether the pin is high while the battery is low (LBO is low then: false, the default).
    public var activeHigh: Bool

    public init(line: String, activeHigh: Bool = false) {
        self.line = line
        self.activeHigh = activeHigh
    }
}

struct RawBattery: Decodable {
    var chip: String?
    var bus: String?
    var address: Int?
    var interval: Double?
    var warnPercent: Double?
    var criticalPercent: Double?
    var chargingWhenPositive: Bool?
    var lowPin: String?
    var lowPinActive: String?
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey {
        case chip, bus, address, interval, warnPercent, criticalPercent, chargingWhenPositive, lowPin, lowPinActive
    }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        chip = try c.decodeIfPresent(String.self, forKey: .chip)
        bus = try c.decodeIfPresent(String.self, forKey: .bus)
        address = try c.decodeIfPresent(Int.self, forKey: .address)
        interval = try c.decodeIfPresent(Double.self, forKey: .interval)
        warnPercent = try c.decodeIfPresent(Double.self, forKey: .warnPercent)
        criticalPercent = try c.decodeIfPresent(Double.self, forKey: .criticalPercent)
        chargingWhenPositive = try c.decodeIfPresent(Bool.self, forKey: .chargingWhenPositive)
        lowPin = try c.decodeIfPresent(String.self, forKey: .lowPin)
        lowPinActive = try c.decodeIfPresent(String.self, forKey: .lowPinActive)
    }

    static let expectation = "must be {\"chip\": \"max17048\" or \"ina219\", \"bus\": \"/dev/i2c-1\" or a bus number, "
        + "\"address\": 3-119, \"interval\": 1-3600 s, \"warnPercent\": 0-100, \"criticalPercent\": 0-100 and below warnPercent, "
        + "\"chargingWhenPositive\": true or false, \"lowPin\": \"GPIO4\" or \"CHIP:OFFSET\", \"lowPinActive\": \"low\" or \"high\"; "
        + "a chip, a lowPin or both}"

    /// The monitor (nil: a pin only), the pin (nil: none) and the core's rules, or nil when a value
    /// is out of its range or neither a chip nor a pin is named.
    func settings() -> (monitor: BatteryMonitorSettings?, pin: BatteryPinSettings?, rules: BatterySettings)? {
        var pin: BatteryPinSettings?
        if let lowPin {
            guard !lowPin.isEmpty, lowPin.utf8.count <= 64, !lowPin.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
                  lowPinActive == nil || lowPinActive == "low" || lowPinActive == "high" else { return nil }
            pin = BatteryPinSettings(line: lowPin, activeHigh: lowPinActive == "high")
        } else if lowPinActive != nil {
            return nil
        }
        let warn = warnPercent ?? 15, critical = criticalPercent ?? 5
        guard warn.isFinite, critical.isFinite, (0...100).contains(warn), (0...100).contains(critical), critical < warn else { return nil }
        let rules = BatterySettings(warnPercent: warn, criticalPercent: critical)
        guard let chip else { return pin.map { (nil, $0, rules) } }
        guard let monitor = monitor(chip) else { return nil }
        return (monitor, pin, rules)
    }

    private func monitor(_ name: String) -> BatteryMonitorSettings? {
        guard let chip = BatteryMonitorSettings.Chip(rawValue: name) else { return nil }
        let bus = self.bus ?? "/dev/i2c-1"
        let interval = self.interval ?? 30
        guard !bus.isEmpty, bus.utf8.count <= 256, !bus.unicodeScalars.contains(where: { $0.value < 0x20 }),
              address.map({ (0x03...0x77).contains($0) }) ?? true,
              interval.isFinite, (1...3600).contains(interval) else { return nil }
        return BatteryMonitorSettings(chip: chip, bus: bus, address: address, interval: interval,
                                      chargingWhenPositive: chargingWhenPositive ?? false)
    }
}

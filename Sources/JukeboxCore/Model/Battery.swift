// SPDX-License-Identifier: MIT

/// One reading of the box's battery, as its monitor reports it (a fuel gauge on I2C, a voltage
/// and current monitor, or a low-battery pin). Facts only: what they mean is `State.battery`'s.
public struct BatteryReading: Equatable, Hashable, Sendable {
    /// State of charge in percent (0-100), nil when the monitor cannot tell (a pin only).
    public var percent: Double?
    /// The cell's voltage, when measured.
    public var volts: Double?
    /// Whether it is charging (current flows in), nil when the monitor cannot tell.
    public var charging: Bool?
    /// A low-battery pin is asserted (a PowerBoost's LBO): empty, whatever the percentage says.
    public var low: Bool

    public init(percent: Double? = nil, volts: Double? = nil, charging: Bool? = nil, low: Bool = false) {
        self.percent = percent
        self.volts = volts
        self.charging = charging
        self.low = low
    }
}

/// The battery's rules (`battery` in the config).
public struct BatterySettings: Equatable, Sendable {
    /// At or below this percentage (not charging): one warning, a message and the chime.
    public var warnPercent: Double = 15
    /// At or below this percentage, or with the low pin asserted (not charging): the place is
    /// saved and the power command runs.
    public var criticalPercent: Double = 5
    /// The warning comes again only after the level rose this far above `warnPercent` (or the
    /// box charged): a gauge wavering around the threshold does not warn at every reading.
    public static let rearmMargin = 3.0

    public init(warnPercent: Double = 15, criticalPercent: Double = 5) {
        self.warnPercent = warnPercent
        self.criticalPercent = criticalPercent
    }
}

/// What the core knows of the battery and has done about it.
public struct BatteryState: Equatable, Sendable {
    /// The last reading, nil before the first (or without a battery).
    public var reading: BatteryReading?
    /// The low warning was given and not re-armed yet.
    public var warned = false
    /// The critical level was reached: the power command ran. Nothing more is done until the
    /// box charges (the command failing, or a test's `true`, must not loop).
    public var poweringOff = false
    /// The low-battery pin's last state (`Event.batteryPin`); every reading carries it as `low`.
    public var pinLow = false

    public init(reading: BatteryReading? = nil, warned: Bool = false, poweringOff: Bool = false, pinLow: Bool = false) {
        self.reading = reading
        self.warned = warned
        self.poweringOff = poweringOff
        self.pinLow = pinLow
    }
}

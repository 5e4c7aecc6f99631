// SPDX-License-Identifier: MIT
import JukeboxCore

/// A chip that measures the box's battery: asked for one reading at a time (a few register reads
/// on I2C, well under a millisecond each), on the battery thread, never on the loop.
public protocol BatteryMonitor: AnyObject {
    /// One reading. Throws when the chip does not answer or answers nonsense.
    func read() throws(DeviceError) -> BatteryReading
}

extension I2CTransport {
    /// The default `readRegister16`: a write of the register's number, then a read of two bytes.
    public func readRegister16(address: UInt8, register: UInt8) throws(DeviceError) -> UInt16 {
        try write(address: address, bytes: [register])
        let bytes = try read(address: address, count: 2)
        return UInt16(bytes[0]) << 8 | UInt16(bytes[1])
    }
}

/// Maxim's MAX17048/MAX17049 fuel gauge (I2C 0x36): state of charge from its ModelGauge
/// algorithm, cell voltage, and the charge rate whose sign tells charging.
public final class MAX17048: BatteryMonitor {
    public static let defaultAddress: UInt8 = 0x36
    let bus: I2CTransport
    let address: UInt8

    enum Register: UInt8 { case vcell = 0x02, soc = 0x04, version = 0x08, crate = 0x16 }

    public init(bus: I2CTransport, address: UInt8 = MAX17048.defaultAddress) {
        self.bus = bus
        self.address = address
    }

    public func read() throws(DeviceError) -> BatteryReading {
        let version = try bus.readRegister16(address: address, register: Register.version.rawValue)
        // The datasheet's versions are 0x001x; anything else is another chip at this address.
        guard version & 0xFFF0 == 0x0010 else {
            throw DeviceError(kind: .noDevice, message: "0x\(I2CErrno.hex(address)): not a MAX17048 (version register 0x\(String(version, radix: 16)))")
        }
        let vcell = try bus.readRegister16(address: address, register: Register.vcell.rawValue)
        let soc = try bus.readRegister16(address: address, register: Register.soc.rawValue)
        let crate = Int16(bitPattern: try bus.readRegister16(address: address, register: Register.crate.rawValue))
        return Self.reading(vcell: vcell, soc: soc, crate: crate)
    }

    /// The registers as a reading: VCELL in 78.125 µV units, SOC in 1/256 %, CRATE in 0.208 %/h
    /// (positive: charging). A gauge reports up to a few percent over 100 right after a charge.
    static func reading(vcell: UInt16, soc: UInt16, crate: Int16) -> BatteryReading {
        BatteryReading(percent: min(100, Double(soc) / 256), volts: Double(vcell) * 78.125e-6, charging: crate > 0)
    }
}

/// TI's INA219 current and voltage monitor (I2C 0x40-0x4F) on the battery's lead: the bus voltage
/// (the battery's, under load) and the shunt's voltage (the current: its sign tells charging, as
/// wired). The percentage is estimated from the voltage of one lithium cell (`LithiumCell`).
public final class INA219: BatteryMonitor {
    public static let defaultAddress: UInt8 = 0x40
    let bus: I2CTransport
    let address: UInt8
    /// Whether a positive shunt voltage means charging (the current flows into the battery).
    let chargingWhenPositive: Bool

    enum Register: UInt8 { case shunt = 0x01, bus = 0x02 }

    public init(bus: I2CTransport, address: UInt8 = INA219.defaultAddress, chargingWhenPositive: Bool = false) {
        self.bus = bus
        self.address = address
        self.chargingWhenPositive = chargingWhenPositive
    }

    public func read() throws(DeviceError) -> BatteryReading {
        let busRegister = try bus.readRegister16(address: address, register: Register.bus.rawValue)
        let shunt = Int16(bitPattern: try bus.readRegister16(address: address, register: Register.shunt.rawValue))
        guard busRegister & 0x0001 == 0 else {
            throw DeviceError(kind: .failed, message: "0x\(I2CErrno.hex(address)): INA219 overflow (the current is beyond its range)")
        }
        return Self.reading(bus: busRegister, shunt: shunt, chargingWhenPositive: chargingWhenPositive)
    }

    /// The bus register's bits 15-3 in 4 mV; the shunt in 10 µV, signed. Under 2 mV across the
    /// shunt (a few mA through 0.1 Ω) is neither charging nor discharging: nil.
    static func reading(bus: UInt16, shunt: Int16, chargingWhenPositive: Bool) -> BatteryReading {
        let volts = Double(bus >> 3) * 0.004
        let charging: Bool? = abs(Int(shunt)) < 200 ? nil : (shunt > 0) == chargingWhenPositive
        return BatteryReading(percent: LithiumCell.percent(volts: volts), volts: volts, charging: charging)
    }
}

/// One lithium-ion/polymer cell's charge from its voltage: a rough curve (a cell at rest; under
/// load it reads lower), good enough for "low" and "empty", not for a fuel gauge's precision.
public enum LithiumCell {
    static let curve: [(volts: Double, percent: Double)] = [
        (3.00, 0), (3.30, 2), (3.45, 5), (3.60, 15), (3.70, 30), (3.80, 50), (3.90, 65), (4.00, 80), (4.10, 90), (4.20, 100),
    ]

    /// The percentage at `volts`, linear between the curve's points, 0 below and 100 above it.
    public static func percent(volts: Double) -> Double {
        guard let first = curve.first, let last = curve.last else { return 0 }
        if volts <= first.volts { return 0 }
        if volts >= last.volts { return 100 }
        for (a, b) in zip(curve, curve.dropFirst()) where volts <= b.volts {
            return a.percent + (volts - a.volts) / (b.volts - a.volts) * (b.percent - a.percent)
        }
        return 100
    }
}

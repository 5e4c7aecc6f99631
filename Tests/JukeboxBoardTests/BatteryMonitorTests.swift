// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import XCTest

/// The battery chips read through their registers (`RegisterChipSimulator` at the I2C transport):
/// what each register means, a chip that is not there or not the one named, an overflow.
final class BatteryMonitorTests: XCTestCase {
    func testMAX17048ReadsChargeVoltageAndTheChargeRatesSign() throws {
        let rows: [(vcell: UInt16, soc: UInt16, crate: UInt16, percent: Double, volts: Double, charging: Bool)] = [
            // 52736 × 78.125 µV = 4.12 V; 0x5A80 = 90.5 %; a positive rate charges.
            (0xCE00, 0x5A80, 0x0010, 90.5, 4.12, true),
            (0xB400, 0x0C00, 0xFFE0, 12, 3.6, false),
            // Right after a charge a gauge reads over 100 %: shown as 100.
            (0xD200, 0x6500, 0x0000, 100, 4.2, false),
        ]
        for row in rows {
            let chip = RegisterChipSimulator(address: 0x36, registers: [0x02: row.vcell, 0x04: row.soc, 0x08: 0x0012, 0x16: row.crate])
            let reading = try MAX17048(bus: chip).read()
            XCTAssertEqual(reading.percent ?? -1, row.percent, accuracy: 1e-9, "\(row)")
            XCTAssertEqual(reading.volts ?? -1, row.volts, accuracy: 1e-9, "\(row)")
            XCTAssertEqual(reading.charging, row.charging, "\(row)")
            XCTAssertFalse(reading.low)
        }
    }

    func testAnotherChipOrNoneAtTheAddressIsAClearError() {
        let other = RegisterChipSimulator(address: 0x36, registers: [0x08: 0x4000])
        XCTAssertThrowsError(try MAX17048(bus: other).read()) { error in
            XCTAssertEqual((error as? DeviceError)?.kind, .noDevice)
            XCTAssertEqual((error as? DeviceError)?.message, "0x36: not a MAX17048 (version register 0x4000)")
        }
        let elsewhere = RegisterChipSimulator(address: 0x37, registers: [:])
        XCTAssertThrowsError(try MAX17048(bus: elsewhere).read()) { error in
            XCTAssertEqual((error as? DeviceError)?.kind, .noDevice)
        }
        XCTAssertThrowsError(try INA219(bus: elsewhere).read()) { error in
            XCTAssertEqual((error as? DeviceError)?.kind, .noDevice)
        }
    }

    func testINA219ReadsTheVoltageAndTheCurrentsDirection() throws {
        // 3.7 V = 925 × 4 mV in bits 15-3; the shunt in 10 µV steps.
        let rows: [(bus: UInt16, shunt: Int16, positiveCharges: Bool, volts: Double, percent: Double, charging: Bool?)] = [
            (925 << 3, -500, true, 3.7, 30, false),
            (925 << 3, 500, true, 3.7, 30, true),
            (925 << 3, 500, false, 3.7, 30, false),
            // Under 2 mV across the shunt: neither.
            (1000 << 3 | 0x2, 150, true, 4.0, 80, nil),
            (700 << 3, -3000, false, 2.8, 0, true),
        ]
        for row in rows {
            let chip = RegisterChipSimulator(address: 0x40, registers: [0x01: UInt16(bitPattern: row.shunt), 0x02: row.bus])
            let reading = try INA219(bus: chip, chargingWhenPositive: row.positiveCharges).read()
            XCTAssertEqual(reading.volts ?? -1, row.volts, accuracy: 1e-9, "\(row)")
            XCTAssertEqual(reading.percent ?? -1, row.percent, accuracy: 1e-9, "\(row)")
            XCTAssertEqual(reading.charging, row.charging, "\(row)")
        }
        let overflow = RegisterChipSimulator(address: 0x40, registers: [0x01: 0, 0x02: 925 << 3 | 0x1])
        XCTAssertThrowsError(try INA219(bus: overflow).read()) { error in
            XCTAssertEqual((error as? DeviceError)?.message, "0x40: INA219 overflow (the current is beyond its range)")
        }
    }

    func testALithiumCellsChargeFollowsItsCurve() {
        let rows: [(Double, Double)] = [(2.5, 0), (3.0, 0), (3.3, 2), (3.525, 10), (3.75, 40), (4.15, 95), (4.2, 100), (4.35, 100)]
        for (volts, percent) in rows {
            XCTAssertEqual(LithiumCell.percent(volts: volts), percent, accuracy: 1e-9, "\(volts) V")
        }
    }
}

// SPDX-License-Identifier: MIT

/// A chip of 16-bit registers on I2C (the battery gauges MAX17048 and INA219) simulated at the
/// transport: a write of one byte sets the register pointer, a read returns the register there,
/// most significant byte first, as the chips do. Another address does not acknowledge.
public final class RegisterChipSimulator: I2CTransport {
    public let address: UInt8
    /// The registers' values; one not here reads 0xFFFF (a floating bus).
    public var registers: [UInt8: UInt16]
    /// When set, every transfer throws this error (a chip that stopped answering).
    public var failure: DeviceError?
    private var pointer: UInt8 = 0

    public init(address: UInt8, registers: [UInt8: UInt16]) {
        self.address = address
        self.registers = registers
    }

    private func check(_ address: UInt8) throws(DeviceError) {
        if let failure { throw failure }
        guard address == self.address else {
            throw DeviceError(kind: .noDevice, message: "0x\(I2CErrno.hex(address)): nothing acknowledged")
        }
    }

    public func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
        try check(address)
        guard let first = bytes.first else { return }
        pointer = first
        // A register pointer and a value: a write to the register.
        if bytes.count == 3 { registers[first] = UInt16(bytes[1]) << 8 | UInt16(bytes[2]) }
    }

    public func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8] {
        try check(address)
        let value = registers[pointer] ?? 0xFFFF
        return (0..<count).map { i in i % 2 == 0 ? UInt8(value >> 8) : UInt8(value & 0xFF) }
    }
}

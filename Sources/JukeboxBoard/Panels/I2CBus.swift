// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxSystem

/// Something I2C writes go through: the real bus (`I2CBus`) or a simulator.
public protocol I2CTransport: AnyObject {
    /// Writes `bytes` to the device at 7-bit `address` as one transaction (START, address, bytes,
    /// STOP). Throws `.noDevice` when nothing acknowledges, other kinds on bus failures.
    func write(address: UInt8, bytes: [UInt8]) throws(DeviceError)
    /// Reads `count` bytes from the device at `address` as one transaction (START, address + R,
    /// bytes, STOP). Transports for write-only devices (panels) need not implement it.
    func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8]
    /// Reads a 16-bit register, most significant byte first (the battery gauges): the register's
    /// number written, then two bytes read. The default does a write and a read; `I2CBus` one SMBus
    /// word read (a repeated start between them, as the chips' datasheets draw it).
    func readRegister16(address: UInt8, register: UInt8) throws(DeviceError) -> UInt16
}

extension I2CTransport {
    /// Write-only transports (the panel simulators): a read fails.
    public func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8] {
        throw DeviceError(kind: .failed, message: "0x\(I2CErrno.hex(address)): this transport cannot read")
    }
}

/// One I2C adapter through the kernel's `i2c-dev` interface (`/dev/i2c-N`).
///
/// Transfers are synchronous: a write of n bytes takes about (n + 1) × 90 µs at 100 kHz. Not
/// thread-safe: one owner (the display link) uses it. `close()` is idempotent; `deinit` closes.
public final class I2CBus: I2CTransport {
    /// The device node opened, e.g. `/dev/i2c-1`.
    public let path: String
    private var fd: Int32
    private var selected: UInt8?

    /// An adapter the system has: its number (`/dev/i2c-N`) and the kernel's name for it.
    public struct Adapter: Sendable, Equatable {
        public var number: Int
        public var name: String
        public var path: String { "/dev/i2c-\(number)" }
    }

    /// Opens `/dev/i2c-<number>`.
    public convenience init(number: Int) throws(DeviceError) {
        try self.init(path: "/dev/i2c-\(number)")
    }

    /// Opens a device node. Throws `.notFound` (listing the buses there are) or `.permissionDenied`.
    public init(path: String) throws(DeviceError) {
        self.path = path
        let fd = retryingEINTR { Glibc.open(cPath(path), O_RDWR | O_CLOEXEC) }
        guard fd >= 0 else { throw I2CErrno.openError(errno, path: path) }
        self.fd = fd
    }

    /// Opens the first adapter whose kernel name contains `name` (case-insensitive), e.g. `bcm2835`
    /// or `i2c@7e804000`. Throws `.notFound` listing the adapters there are.
    public convenience init(adapterNamed name: String) throws(DeviceError) {
        let all = Self.adapters()
        guard let found = all.first(where: { $0.name.lowercased().contains(name.lowercased()) }) else {
            throw DeviceError(kind: .notFound, message: "no I2C adapter named \"\(name)\"; \(I2CErrno.listing(all))")
        }
        try self.init(path: found.path)
    }

    deinit { close() }

    /// The adapters in `/sys/class/i2c-dev` (empty when module `i2c-dev` is not loaded), by number.
    public static func adapters(sysfs: String = "/sys/class/i2c-dev") -> [Adapter] {
        var found: [Adapter] = []
        for entryName in (try? directoryEntries(sysfs)) ?? [] {
            guard entryName.hasPrefix("i2c-"), let number = Int(entryName.dropFirst(4)) else { continue }
            let name = readFileText("\(sysfs)/\(entryName)/name", limit: 4096)?.split(separator: "\n").first.map(String.init) ?? "?"
            found.append(Adapter(number: number, name: name))
        }
        return found.sorted { $0.number < $1.number }
    }

    /// See `I2CTransport.write`. The address is selected with `I2C_SLAVE` only when it changes.
    public func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
        guard fd >= 0 else { throw DeviceError(kind: .failed, message: "\(path): bus is closed") }
        try select(address)
        let written = bytes.withUnsafeBytes { raw in
            retryingEINTR { Glibc.write(fd, raw.baseAddress, raw.count) }
        }
        if written < 0 { throw I2CErrno.transferError(errno, path: path, address: address) }
        if written != bytes.count {
            throw DeviceError(kind: .failed, message: "\(path): 0x\(I2CErrno.hex(address)): short write (\(written) of \(bytes.count) bytes)")
        }
    }

    /// See `I2CTransport.read`. The address is selected with `I2C_SLAVE` only when it changes.
    public func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8] {
        guard fd >= 0 else { throw DeviceError(kind: .failed, message: "\(path): bus is closed") }
        try select(address)
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { raw in
            retryingEINTR { Glibc.read(fd, raw.baseAddress, raw.count) }
        }
        if got < 0 { throw I2CErrno.transferError(errno, path: path, address: address) }
        if got != count {
            throw DeviceError(kind: .failed, message: "\(path): 0x\(I2CErrno.hex(address)): short read (\(got) of \(count) bytes)")
        }
        return bytes
    }

    /// What answered during a `scan()`.
    public struct ScanResult: Sendable, Equatable {
        /// Addresses that acknowledged.
        public var answering: [UInt8]
        /// Addresses a kernel driver has claimed (`UU` in i2cdetect); not probed.
        public var claimed: [UInt8]
    }

    /// Probes 0x08…0x77 like `i2cdetect`'s default: an SMBus read-byte at 0x30–0x37 and 0x50–0x5F
    /// (a quick write there can corrupt some EEPROMs), an SMBus quick write elsewhere (read-byte when
    /// the adapter cannot do quick writes). Writes no data to any device. Takes ≈ 10–20 ms at 100 kHz.
    public func scan() throws(DeviceError) -> ScanResult {
        guard fd >= 0 else { throw DeviceError(kind: .failed, message: "\(path): bus is closed") }
        var funcs: UInt = 0
        let canQuick = clinux_ioctl_ptr(fd, UInt(I2C_FUNCS), &funcs) == 0 && funcs & UInt(I2C_FUNC_SMBUS_QUICK) != 0
        var result = ScanResult(answering: [], claimed: [])
        for address in UInt8(0x08)...UInt8(0x77) {
            if clinux_ioctl_long(fd, UInt(I2C_SLAVE), UInt(address)) < 0 {
                if errno == EBUSY { result.claimed.append(address); continue }
                throw I2CErrno.transferError(errno, path: path, address: address)
            }
            selected = address
            let readByte = (0x30...0x37).contains(address) || (0x50...0x5F).contains(address) || !canQuick
            var args = i2c_smbus_ioctl_data()
            var data = i2c_smbus_data()
            let rc: Int32 = withUnsafeMutablePointer(to: &data) { dataPointer in
                if readByte {
                    args.read_write = UInt8(I2C_SMBUS_READ)
                    args.size = UInt32(I2C_SMBUS_BYTE)
                    args.data = dataPointer
                } else {
                    args.read_write = UInt8(I2C_SMBUS_WRITE)
                    args.size = UInt32(I2C_SMBUS_QUICK)
                    args.data = nil
                }
                args.command = 0
                return clinux_ioctl_ptr(fd, UInt(I2C_SMBUS), &args)
            }
            if rc >= 0 { result.answering.append(address) }
        }
        return result
    }

    /// See `I2CTransport.readRegister16`: SMBus "read word data" (the word arrives low byte first,
    /// so the chip's first byte is the low one here and is swapped back).
    public func readRegister16(address: UInt8, register: UInt8) throws(DeviceError) -> UInt16 {
        guard fd >= 0 else { throw DeviceError(kind: .failed, message: "\(path): bus is closed") }
        try select(address)
        var args = i2c_smbus_ioctl_data()
        var data = i2c_smbus_data()
        let rc: Int32 = withUnsafeMutablePointer(to: &data) { dataPointer in
            args.read_write = UInt8(I2C_SMBUS_READ)
            args.command = register
            args.size = UInt32(I2C_SMBUS_WORD_DATA)
            args.data = dataPointer
            return retryingEINTR { clinux_ioctl_ptr(fd, UInt(I2C_SMBUS), &args) }
        }
        if rc < 0 { throw I2CErrno.transferError(errno, path: path, address: address) }
        return data.word.byteSwapped
    }

    /// Closes the device node; later writes throw `.failed`. Safe to call twice.
    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        selected = nil
    }

    private func select(_ address: UInt8) throws(DeviceError) {
        guard selected != address else { return }
        guard address < 0x80 else {
            throw DeviceError(kind: .failed, message: "0x\(I2CErrno.hex(address)) is not a 7-bit I2C address")
        }
        if clinux_ioctl_long(fd, UInt(I2C_SLAVE), UInt(address)) < 0 {
            throw I2CErrno.transferError(errno, path: path, address: address)
        }
        selected = address
    }
}

// The one place where errno values from i2c-dev become `DeviceError`s.
enum I2CErrno {
    static func hex(_ value: UInt8) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return digits.count < 2 ? "0" + digits : digits
    }

    static func listing(_ adapters: [I2CBus.Adapter]) -> String {
        if adapters.isEmpty {
            return "there are no I2C buses (load module i2c-dev; on a Pi set dtparam=i2c_arm=on in config.txt)"
        }
        return "buses: " + adapters.map { "\($0.path) (\($0.name))" }.joined(separator: ", ")
    }

    static func openError(_ code: Int32, path: String) -> DeviceError {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            return DeviceError(kind: .notFound, message: "no I2C bus \(path); \(listing(I2CBus.adapters()))")
        case EACCES, EPERM:
            return DeviceError(kind: .permissionDenied,
                            message: "\(path): permission denied (add the user to group i2c, or install a udev rule giving /dev/i2c-* to that group)")
        default:
            return DeviceError(kind: .failed, message: "\(path): \(errnoText(code))")
        }
    }

    static func transferError(_ code: Int32, path: String, address: UInt8) -> DeviceError {
        switch code {
        case ENXIO, EREMOTEIO, ENODEV:
            return DeviceError(kind: .noDevice, message: "\(path): no device answers at 0x\(hex(address))")
        case EBUSY:
            return DeviceError(kind: .busy, message: "\(path): 0x\(hex(address)) is claimed by a kernel driver")
        case ETIMEDOUT, EAGAIN:
            return DeviceError(kind: .failed, message: "\(path): 0x\(hex(address)): bus timeout (check wiring and pull-ups)")
        default:
            return DeviceError(kind: .failed, message: "\(path): 0x\(hex(address)): \(errnoText(code))")
        }
    }
}

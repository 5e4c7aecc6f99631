// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxSystem

/// Something SPI transfers go through: the real device (`SPIDevice`) or a simulator.
public protocol SPITransport: AnyObject {
    /// Clocks `bytes` out while chip select is held and returns the bytes clocked in at the same
    /// time (as many as were sent: SPI is full duplex). Throws on a failed transfer; a chip that is
    /// absent does not fail a transfer, it answers 0x00 or 0xFF.
    func transfer(_ bytes: [UInt8]) throws(DeviceError) -> [UInt8]
}

/// One SPI chip select through the kernel's `spidev` interface (`/dev/spidevB.C`: bus B, chip
/// select C), mode 0, 8-bit words. One `SPI_IOC_MESSAGE(1)` per `transfer`. Not thread-safe: one
/// owner (the card reader's thread). `close()` is idempotent; `deinit` closes.
public final class SPIDevice: SPITransport {
    /// The device node opened, e.g. `/dev/spidev0.0`.
    public let path: String
    /// The clock in Hz (the MFRC522 takes up to 10 MHz; 1 MHz tolerates long jumper wires).
    public let speed: UInt32
    private var fd: Int32

    /// Opens `path` and sets mode 0, 8 bits per word and `speed`. Throws `.notFound` (listing the
    /// spidev nodes there are), `.permissionDenied` or `.invalid` (the kernel refused a setting).
    public init(path: String, speed: UInt32 = 1_000_000) throws(DeviceError) {
        self.path = path
        self.speed = speed
        let fd = retryingEINTR { Glibc.open(cPath(path), O_RDWR | O_CLOEXEC) }
        guard fd >= 0 else { throw Self.openError(errno, path: path) }
        if clinux_spi_setup(fd, 0, 8, speed) < 0 {
            let code = errno
            _ = Glibc.close(fd)
            throw DeviceError(kind: .invalid, message: "\(path): cannot set SPI mode 0, 8 bits, \(speed) Hz: \(errnoText(code))", errno: code)
        }
        self.fd = fd
    }

    deinit { close() }

    /// The spidev nodes in `/dev` (empty when SPI is off: on a Pi, `dtparam=spi=on`), sorted.
    public static func nodes(dev: String = "/dev") -> [String] {
        ((try? directoryEntries(dev)) ?? []).filter { $0.hasPrefix("spidev") }.sorted().map { "\(dev)/\($0)" }
    }

    /// See `SPITransport.transfer`.
    public func transfer(_ bytes: [UInt8]) throws(DeviceError) -> [UInt8] {
        guard fd >= 0 else { throw DeviceError(kind: .failed, message: "\(path): device is closed") }
        guard !bytes.isEmpty else { return [] }
        var received = [UInt8](repeating: 0, count: bytes.count)
        let rc = bytes.withUnsafeBytes { tx in
            received.withUnsafeMutableBytes { rx in
                retryingEINTR { clinux_spi_transfer(fd, tx.baseAddress, rx.baseAddress, UInt32(tx.count), speed) }
            }
        }
        if rc < 0 {
            let code = errno
            throw DeviceError(kind: .failed, message: "\(path): SPI transfer: \(errnoText(code))", errno: code)
        }
        return received
    }

    /// Closes the device node; later transfers throw `.failed`. Safe to call twice.
    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    static func openError(_ code: Int32, path: String) -> DeviceError {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            let there = nodes()
            let listing = there.isEmpty ? "there are no spidev devices (on a Pi set dtparam=spi=on in config.txt)"
                                        : "devices: " + there.joined(separator: ", ")
            return DeviceError(kind: .notFound, message: "no SPI device \(path); \(listing)", errno: code)
        case EACCES, EPERM:
            return DeviceError(kind: .permissionDenied,
                               message: "\(path): permission denied (add the user to group spi, or install board/99-jukebox.rules)", errno: code)
        default:
            return DeviceError(kind: .failed, message: "\(path): \(errnoText(code))", errno: code)
        }
    }
}

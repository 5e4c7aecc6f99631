// SPDX-License-Identifier: MIT

/// Why a board device (a GPIO chip or line, an input device, an I2C bus or the device at an
/// address) could not be found, opened, requested, read or written: the one error type of the
/// board adapters. `message` is one line that says what is wrong and, where it can, what exists
/// instead or what to do (the kind alone is for code that must tell cases apart).
public struct DeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Equatable {
        /// No such chip, line, input device or bus; the message lists what exists.
        case notFound
        /// Held by another process or a kernel driver (the message names it when known).
        case busy
        /// The device node exists but this user may not open it (the message names the group
        /// and the udev rule).
        case permissionDenied
        /// Nothing acknowledged an I2C address (not connected, wrong address, no power).
        case noDevice
        /// A spec is incomplete or contradictory, or the kernel refused a setting.
        case invalid
        /// Anything else (`errno` says what).
        case failed
    }

    /// The class of failure.
    public var kind: Kind
    /// One readable line.
    public var message: String
    /// errno of the failing call, or 0.
    public var errno: Int32

    /// Creates an error.
    public init(kind: Kind, message: String, errno: Int32 = 0) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    /// The message.
    public var description: String { message }
}

// SPDX-License-Identifier: MIT
import Glibc

/// Why GPIO lines could not be found, requested or read. `message` is one line that says what is
/// wrong and, where it can, what exists instead or what to do.
public struct GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Equatable {
        /// No chip with that label, path or name.
        case chipNotFound
        /// No line with that name, or an offset past the chip's last line.
        case lineNotFound
        /// The line is requested by another process or a kernel driver (`message` names it).
        case busy
        /// The chip device cannot be opened by this user (group `gpio`, udev rule).
        case permissionDenied
        /// The spec is incomplete or contradictory, or the kernel refused a setting.
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

    public var description: String { message }
}

// The one place where errno values from the GPIO shim become `GPIOError`s.
enum GPIOErrors {
    static let permissionHint = "add the user to group gpio and install the udev rule board/99-jukebox.rules "
        + "(SUBSYSTEM==\"gpio\", KERNEL==\"gpiochip*\", GROUP=\"gpio\", MODE=\"0660\"; Raspberry Pi OS has it)"

    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// A chip device that could not be opened.
    static func open(_ code: Int32, path: String, chips: String) -> GPIOError {
        switch code {
        case EACCES, EPERM:
            return GPIOError(kind: .permissionDenied, message: "\(path): permission denied: \(permissionHint)", errno: code)
        case ENOENT:
            return GPIOError(kind: .chipNotFound, message: "\(path): no such gpiochip; chips here: \(chips)", errno: code)
        case ENOTTY, ENODEV, EINVAL:
            return GPIOError(kind: .chipNotFound, message: "\(path): not a GPIO chip; chips here: \(chips)", errno: code)
        default:
            return GPIOError(kind: .failed, message: "\(path): \(text(code))", errno: code)
        }
    }

    /// A line request the kernel refused. `who` is the consumer holding the line, when known.
    static func request(_ code: Int32, line: String, who: String?) -> GPIOError {
        switch code {
        case EBUSY:
            let holder = who.map { $0.isEmpty ? "another user (no consumer name)" : "'\($0)'" } ?? "another user"
            return GPIOError(kind: .busy, message: "line \(line) is used by \(holder)", errno: code)
        case EACCES, EPERM:
            return GPIOError(kind: .permissionDenied, message: "line \(line): permission denied: \(permissionHint)", errno: code)
        case EINVAL, EOPNOTSUPP:
            return GPIOError(kind: .invalid, message: "line \(line): the kernel refused the settings "
                             + "(\(text(code)); bias needs Linux 5.5 or later)", errno: code)
        default:
            return GPIOError(kind: .failed, message: "line \(line): request failed: \(text(code))", errno: code)
        }
    }

    /// A read from a request's fd (`"edges"`) or of a line's `"level"` failed.
    static func read(_ code: Int32, what: String, reading: String = "edges") -> GPIOError {
        GPIOError(kind: .failed, message: "\(what): read \(reading): \(text(code))", errno: code)
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

// The one place where errno values from the GPIO shim become `DeviceError`s.
enum GPIOErrors {
    static let permissionHint = "add the user to group gpio and install the udev rule board/99-jukebox.rules "
        + "(SUBSYSTEM==\"gpio\", KERNEL==\"gpiochip*\", GROUP=\"gpio\", MODE=\"0660\"; Raspberry Pi OS has it)"

    /// A chip device that could not be opened.
    static func open(_ code: Int32, path: String, chips: String) -> DeviceError {
        switch code {
        case EACCES, EPERM:
            return DeviceError(kind: .permissionDenied, message: "\(path): permission denied: \(permissionHint)", errno: code)
        case ENOENT:
            return DeviceError(kind: .notFound, message: "\(path): no such gpiochip; chips here: \(chips)", errno: code)
        case ENOTTY, ENODEV, EINVAL:
            return DeviceError(kind: .notFound, message: "\(path): not a GPIO chip; chips here: \(chips)", errno: code)
        default:
            return DeviceError(kind: .failed, message: "\(path): \(errnoText(code))", errno: code)
        }
    }

    /// A line request the kernel refused. `who` is the consumer holding the line, when known.
    static func request(_ code: Int32, line: String, who: String?) -> DeviceError {
        switch code {
        case EBUSY:
            let holder = who.map { $0.isEmpty ? "another user (no consumer name)" : "'\($0)'" } ?? "another user"
            return DeviceError(kind: .busy, message: "line \(line) is used by \(holder)", errno: code)
        case EACCES, EPERM:
            return DeviceError(kind: .permissionDenied, message: "line \(line): permission denied: \(permissionHint)", errno: code)
        case EINVAL, EOPNOTSUPP:
            return DeviceError(kind: .invalid, message: "line \(line): the kernel refused the settings "
                             + "(\(errnoText(code)); bias needs Linux 5.5 or later)", errno: code)
        default:
            return DeviceError(kind: .failed, message: "line \(line): request failed: \(errnoText(code))", errno: code)
        }
    }

    /// A read from a request's fd (`"edges"`) or of a line's `"level"` failed.
    static func read(_ code: Int32, what: String, reading: String = "edges") -> DeviceError {
        DeviceError(kind: .failed, message: "\(what): read \(reading): \(errnoText(code))", errno: code)
    }
}

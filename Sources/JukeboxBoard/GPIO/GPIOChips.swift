// SPDX-License-Identifier: MIT
import CInput
import Glibc

/// One line of a chip, as `jukebox probe gpio` shows it.
public struct GPIOLineInfo: Sendable, Equatable {
    public var offset: Int
    /// The line's name from the device tree (`GPIO17`), or "".
    public var name: String
    /// Who requested it (a process's consumer name or a kernel driver), or "".
    public var consumer: String
    /// Whether it is requested by anyone.
    public var used: Bool

    public init(offset: Int, name: String, consumer: String, used: Bool) {
        self.offset = offset
        self.name = name
        self.consumer = consumer
        self.used = used
    }
}

/// One GPIO chip device.
public struct GPIOChipInfo: Sendable, Equatable {
    /// `/dev/gpiochip0`.
    public var path: String
    /// `gpiochip0` (empty when the chip could not be opened).
    public var name: String
    /// `pinctrl-bcm2711`, `pinctrl-rp1`… (empty when the chip could not be opened).
    public var label: String
    public var lineCount: Int
    /// Every line, when asked for.
    public var lines: [GPIOLineInfo]
    /// Why the chip could not be opened (permission denied…), or nil.
    public var error: String?

    public init(path: String, name: String, label: String, lineCount: Int, lines: [GPIOLineInfo], error: String? = nil) {
        self.path = path
        self.name = name
        self.label = label
        self.lineCount = lineCount
        self.lines = lines
        self.error = error
    }
}

/// The GPIO chips of this machine, and what the linked libgpiod can do.
public enum GPIOChips {
    /// Labels of the Raspberry Pi banks that carry the 40-pin header, newest first: a spec with an
    /// offset and no chip means the first of these present. Never a `gpiochipN` number: the Pi 5's
    /// bank moved from gpiochip4 to gpiochip0 between kernels.
    public static let headerLabels = ["pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"]

    /// The libgpiod API compiled in: 1 (1.6) or 2 (2.x).
    public static var libgpiodAPI: Int { Int(jb_gpio_api_major()) }
    /// libgpiod's version string.
    public static var libgpiodVersion: String { String(cString: jb_gpio_library_version()) }

    /// Every `gpiochip*` device in `directory`, in numeric order, with their lines when `lines`.
    /// Chips that cannot be opened are listed with `error` set; no chips gives an empty list.
    public static func list(directory: String = "/dev", lines: Bool = true) -> [GPIOChipInfo] {
        chipPaths(in: directory).map { path in
            let chip: GPIOChip
            do throws(DeviceError) {
                chip = try GPIOChip(path: path, chipsForMessages: "")
            } catch {
                return GPIOChipInfo(path: path, name: "", label: "", lineCount: 0, lines: [], error: error.message)
            }
            return GPIOChipInfo(path: path, name: chip.name, label: chip.label, lineCount: chip.lineCount,
                                lines: lines ? (0..<chip.lineCount).compactMap { chip.lineInfo($0) } : [])
        }
    }

    /// `/dev/gpiochip*` paths in numeric order (gpiochip2 before gpiochip10).
    static func chipPaths(in directory: String) -> [String] {
        numberedDevices(in: directory, prefix: "gpiochip")
    }

    /// "gpiochip0 [pinctrl-bcm2711] 58 lines, gpiochip1 [raspberrypi-exp-gpio] 8 lines" or "none".
    static func summary(directory: String) -> String {
        let chips = list(directory: directory, lines: false)
        if chips.isEmpty { return "none (no \(directory)/gpiochip*)" }
        return chips.map { chip in
            chip.error.map { "\(chip.path) (\($0))" } ?? "\(chip.name) [\(chip.label)] \(chip.lineCount) lines"
        }.joined(separator: ", ")
    }
}

/// An open chip device (internal: Swift callers use `GPIOChips` and `GPIOLines`).
final class GPIOChip {
    let path: String
    let name: String
    let label: String
    let lineCount: Int
    private(set) var handle: OpaquePointer?

    /// Opens `path`; `chipsForMessages` is the "chips here" list for a not-found error.
    init(path: String, chipsForMessages: @autoclosure () -> String) throws(DeviceError) {
        guard let handle = jb_gpio_chip_open(path) else {
            let code = errno
            throw GPIOErrors.open(code, path: path, chips: code == ENOENT || code == ENOTTY || code == ENODEV ? chipsForMessages() : "")
        }
        var info = jb_gpio_chip_info()
        guard jb_gpio_chip_get_info(handle, &info) == 0 else {
            let code = errno
            jb_gpio_chip_close(handle)
            throw GPIOErrors.open(code, path: path, chips: "")
        }
        self.path = path
        self.handle = handle
        name = cText(&info.name)
        label = cText(&info.label)
        lineCount = Int(info.num_lines)
    }

    deinit { close() }

    func close() {
        if let handle { jb_gpio_chip_close(handle) }
        handle = nil
    }

    func lineInfo(_ offset: Int) -> GPIOLineInfo? {
        guard let handle, offset >= 0 else { return nil }
        var info = jb_gpio_line_info()
        guard jb_gpio_chip_get_line_info(handle, UInt32(offset), &info) == 0 else { return nil }
        return GPIOLineInfo(offset: offset, name: cText(&info.name), consumer: cText(&info.consumer), used: info.used)
    }

    /// The offset of the line called `name`, or nil.
    func find(_ name: String) -> Int? {
        guard let handle else { return nil }
        let offset = jb_gpio_chip_find_line(handle, name)
        return offset >= 0 ? Int(offset) : nil
    }
}

/// A fixed-size C char array (imported as a tuple) as a String.
func cText<T>(_ tuple: inout T) -> String {
    withUnsafeBytes(of: &tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

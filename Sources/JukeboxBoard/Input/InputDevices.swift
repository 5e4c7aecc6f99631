// SPDX-License-Identifier: MIT
import CInput
import Glibc
import JukeboxCore
import JukeboxSystem

/// Which evdev device(s) to read.
public enum InputSelector: Sendable, Equatable, CustomStringConvertible {
    /// Every device whose name (EVIOCGNAME) contains this, ignoring case: `"Consumer Control"`,
    /// `"gpio_ir_recv"`, `"AVRCP"`, `"button"`. A keyboard often has a separate device for its
    /// media keys; all matches are opened.
    case name(String)
    /// One device by path: `/dev/input/event3` or a stable `/dev/input/by-id/…` link.
    case path(String)
    /// Every device that can send one of `MediaKey.all` (EVIOCGBIT): the config's `"*"`.
    case anyWithMediaKeys

    public var description: String {
        switch self {
        case .name(let name): "input device named like '\(name)'"
        case .path(let path): path
        case .anyWithMediaKeys: "input device with media keys"
        }
    }
}

/// An input device as `jukebox probe input` shows it, or an open one.
public struct InputDeviceInfo: Sendable, Equatable {
    public var path: String
    /// EVIOCGNAME, or "" when the device could not be opened.
    public var name: String
    /// The `MediaKey.all` codes the device can send (EVIOCGBIT).
    public var mediaKeys: [Int]
    /// Why the device could not be opened, or nil.
    public var error: String?

    public init(path: String, name: String, mediaKeys: [Int], error: String? = nil) {
        self.path = path
        self.name = name
        self.mediaKeys = mediaKeys
        self.error = error
    }

    public var hasMediaKeys: Bool { !mediaKeys.isEmpty }
}

/// What one `read()` found.
public struct InputBatch: Sendable, Equatable {
    /// Key events of all devices, each device's in order.
    public var keys: [InputKeyEvent]
    /// Devices that went away (unplugged, Bluetooth disconnected): closed now; `error` says why.
    /// `rescan()` reopens them when they come back.
    public var lost: [InputDeviceInfo]

    public init(keys: [InputKeyEvent] = [], lost: [InputDeviceInfo] = []) {
        self.keys = keys
        self.lost = lost
    }
}

/// evdev devices chosen by name or path, read as `InputKeyEvent`s. Devices come and go: a device
/// that disappears is closed and reported by `read()`, and `rescan()` (call it on a timer, every few
/// seconds; it never blocks) reopens what matches again. Owned by one thread at a time.
public final class InputDevices {
    public let selectors: [InputSelector]
    /// Where `eventN` devices are listed (`/dev/input`).
    public let directory: String

    private struct Device {
        var info: InputDeviceInfo
        var canonical: String
        var fd: Int32
        var parser = InputEventParser()
    }
    private var devices: [Device] = []

    /// Whether devices are grabbed (EVIOCGRAB) as they are opened, so their keys reach no one else
    /// (a card reader's digits must not be typed into a console login).
    public let grab: Bool
    /// Devices that matched but could not be grabbed (another program holds them), with why; a
    /// grabbed device sends its events to the grabber only, so these are left closed.
    public private(set) var grabFailures: [InputDeviceInfo] = []

    /// Selects devices; opens nothing until `rescan()`.
    public init(_ selectors: [InputSelector], directory: String = "/dev/input", grab: Bool = false) {
        self.selectors = selectors
        self.directory = directory
        self.grab = grab
    }

    /// Opens every selected device now; throws when a selector matches nothing (`.notFound` listing
    /// the devices here, `.permissionDenied` when the match may be among unreadable devices,
    /// `.busy` when `grab` was asked and another program holds the match).
    public static func open(_ selectors: [InputSelector], directory: String = "/dev/input", grab: Bool = false) throws(DeviceError) -> InputDevices {
        let devices = InputDevices(selectors, directory: directory, grab: grab)
        devices.rescan()
        guard let first = devices.missing.first else { return devices }
        devices.close()
        if let held = devices.grabFailures.first {
            throw DeviceError(kind: .busy, message: "\(held.path) (\(held.name)): \(held.error ?? "cannot grab it")", errno: EBUSY)
        }
        throw InputErrors.missing(first, directory: directory)
    }

    deinit { close() }

    /// The open devices.
    public var opened: [InputDeviceInfo] { devices.map(\.info) }
    /// Selectors that no open device satisfies.
    public var missing: [InputSelector] { selectors.filter { !satisfied($0) } }
    /// The fds to poll for readability (changes after `read()` reports a loss and after `rescan()`).
    public var fds: [Int32] { devices.map(\.fd) }

    /// Opens selected devices that are not open yet; returns those it opened. Devices that cannot
    /// be opened are skipped (`missing` still names their selectors).
    @discardableResult
    public func rescan() -> [InputDeviceInfo] {
        var added: [InputDeviceInfo] = []
        grabFailures = []
        for case .path(let path) in selectors {
            let canonical = Self.canonical(path)
            guard !devices.contains(where: { $0.canonical == canonical }), let device = try? Self.openDevice(path),
                  grabbed(device) else { continue }
            adopt(device, canonical: canonical)
            added.append(device.info)
        }
        let names = selectors.compactMap { if case .name(let n) = $0 { n.lowercased() } else { nil } }
        let anyMedia = selectors.contains(.anyWithMediaKeys)
        if !names.isEmpty || anyMedia {
            for path in Self.eventPaths(in: directory) {
                let canonical = Self.canonical(path)
                guard !devices.contains(where: { $0.canonical == canonical }), let device = try? Self.openDevice(path) else { continue }
                let name = device.info.name.lowercased()
                if names.contains(where: { name.contains($0) }) || (anyMedia && device.info.hasMediaKeys) {
                    guard grabbed(device) else { continue }
                    adopt(device, canonical: canonical)
                    added.append(device.info)
                } else {
                    _ = Glibc.close(device.fd)
                }
            }
        }
        return added
    }

    /// Reads what every device has waiting; never blocks. A device whose read fails (ENODEV after an
    /// unplug) or ends is closed and reported in `lost`.
    public func read() -> InputBatch {
        var batch = InputBatch()
        var chunk = [UInt8](repeating: 0, count: 64 * InputEventParser.recordSize)
        var index = 0
        while index < devices.count {
            var lostReason: String?
            // Bounded: at most 64 chunks per device per call; the rest waits for the next poll.
            for _ in 0..<64 {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(devices[index].fd, $0.baseAddress, $0.count) }
                if n > 0 { batch.keys += devices[index].parser.feed(chunk[0..<n]); continue }
                if n == 0 { lostReason = "end of file"; break }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN { break }
                lostReason = errnoText(code)
                break
            }
            if let lostReason {
                var info = devices[index].info
                info.error = lostReason
                batch.lost.append(info)
                _ = Glibc.close(devices[index].fd)
                devices.remove(at: index)
            } else {
                index += 1
            }
        }
        return batch
    }

    /// Closes every device. Idempotent; `rescan()` opens them again.
    public func close() {
        for device in devices { _ = Glibc.close(device.fd) }
        devices = []
    }

    /// Every `eventN` device in `directory`, in numeric order; unreadable ones with `error` set.
    public static func list(directory: String = "/dev/input") -> [InputDeviceInfo] {
        eventPaths(in: directory).map { path in
            do throws(DeviceError) {
                let device = try openDevice(path)
                _ = Glibc.close(device.fd)
                return device.info
            } catch {
                return InputDeviceInfo(path: path, name: "", mediaKeys: [], error: error.message)
            }
        }
    }

    // MARK: - internals

    /// Takes an fd that delivers `struct input_event` records (tests: a pipe) as an open device.
    func adopt(fd: Int32, path: String, name: String) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        adopt(Device(info: InputDeviceInfo(path: path, name: name, mediaKeys: []), canonical: path, fd: fd), canonical: path)
    }

    private func adopt(_ device: Device, canonical: String) {
        var device = device
        device.canonical = canonical
        devices.append(device)
    }

    /// Grabs `device` when asked to; on failure closes it and records why.
    private func grabbed(_ device: Device) -> Bool {
        guard grab else { return true }
        if jb_input_grab(device.fd, 1) == 0 { return true }
        var info = device.info
        info.error = "cannot grab it: " + errnoText(errno)
        grabFailures.append(info)
        _ = Glibc.close(device.fd)
        return false
    }

    private func satisfied(_ selector: InputSelector) -> Bool {
        switch selector {
        case .path(let path):
            let canonical = Self.canonical(path)
            return devices.contains { $0.canonical == canonical }
        case .name(let name):
            return devices.contains { $0.info.name.lowercased().contains(name.lowercased()) }
        case .anyWithMediaKeys:
            return devices.contains { $0.info.hasMediaKeys }
        }
    }

    /// Opens a device non-blocking, reads its name and media keys, and puts its clock on
    /// CLOCK_MONOTONIC (best effort: older kernels keep CLOCK_REALTIME).
    private static func openDevice(_ path: String) throws(DeviceError) -> Device {
        let fd = Glibc.open(cPath(path), O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw InputErrors.open(errno, path: path) }
        var name = [CChar](repeating: 0, count: 256)
        guard jb_input_get_name(fd, &name, name.count) >= 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw InputErrors.open(code, path: path)
        }
        _ = jb_input_use_monotonic_clock(fd)
        let keys = MediaKey.all.filter { jb_input_has_key(fd, UInt32($0)) == 1 }
        let info = InputDeviceInfo(path: path, name: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                   mediaKeys: keys)
        return Device(info: info, canonical: canonical(path), fd: fd)
    }

    /// `/dev/input/event*` paths in numeric order.
    static func eventPaths(in directory: String) -> [String] {
        numberedDevices(in: directory, prefix: "event")
    }

    /// The path with symlinks resolved (by-id links and eventN name the same device), or itself.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(cPath(path), nil) else { return path }
        defer { free(resolved) }
        return pathString(cString: resolved)
    }
}

// The one place where errno values from evdev become `DeviceError`s.
enum InputErrors {
    static let permissionHint = "add the user to group input (usermod -aG input USER; Debian's udev gives /dev/input/event* to it)"

    static func open(_ code: Int32, path: String) -> DeviceError {
        switch code {
        case EACCES, EPERM:
            return DeviceError(kind: .permissionDenied, message: "\(path): permission denied: \(permissionHint)", errno: code)
        case ENOENT, ENODEV, ENXIO:
            return DeviceError(kind: .notFound, message: "\(path): no such input device", errno: code)
        case ENOTTY, EINVAL:
            return DeviceError(kind: .notFound, message: "\(path): not an input event device", errno: code)
        default:
            return DeviceError(kind: .failed, message: "\(path): \(errnoText(code))", errno: code)
        }
    }

    /// A selector that matched nothing, with what is there instead.
    static func missing(_ selector: InputSelector, directory: String) -> DeviceError {
        let all = InputDevices.list(directory: directory)
        let readable = all.filter { $0.error == nil }
        let here = readable.isEmpty ? "none" : readable.map { "'\($0.name)' (\($0.path))" }.joined(separator: ", ")
        if case .path(let path) = selector {
            let fd = Glibc.open(cPath(path), O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            let code = fd >= 0 ? ENOTTY : errno
            if fd >= 0 { _ = Glibc.close(fd) }
            var error = open(code, path: path)
            if error.kind == .notFound { error.message += "; devices here: \(here)" }
            return error
        }
        let unreadable = all.filter { $0.error?.hasSuffix(permissionHint) == true }
        if !unreadable.isEmpty && readable.isEmpty {
            return DeviceError(kind: .permissionDenied, message: "no \(selector) among the readable devices; "
                              + "\(unreadable.map(\.path).joined(separator: ", ")): permission denied: \(permissionHint)", errno: EACCES)
        }
        let more = unreadable.isEmpty ? "" : "; unreadable: \(unreadable.map(\.path).joined(separator: ", "))"
        return DeviceError(kind: .notFound, message: "no \(selector) in \(directory); devices here: \(here)\(more)", errno: ENOENT)
    }
}

// SPDX-License-Identifier: MIT
import CInput
import Glibc

/// Which line to watch and how it is wired. Buttons are usually wired to ground with the pull-up
/// on: the defaults (`pullUp`, `activeLow`) make a press a rising edge.
public struct GPIOLineSpec: Sendable, Equatable {
    /// The line's bias resistor.
    public enum Bias: Sendable, Equatable {
        /// Leave what firmware or the device tree set.
        case asIs
        /// Disable pull resistors (the board has its own).
        case none
        case pullUp
        case pullDown
    }

    /// A chip label (`pinctrl-rp1`), path (`/dev/gpiochip0`) or name (`gpiochip0`). Nil: with a
    /// `name`, every chip is searched; with an `offset`, the first chip whose label is one of
    /// `GPIOChips.headerLabels`.
    public var chip: String?
    /// The line's offset on its chip (the BCM number on a Pi header bank). Wins over `name`.
    public var offset: Int?
    /// The line's name (`GPIO17`), used when `offset` is nil.
    public var name: String?
    public var bias: Bias
    /// Whether the line is active when low (a button to ground); edges are reported after it.
    public var activeLow: Bool

    public init(chip: String? = nil, offset: Int? = nil, name: String? = nil, bias: Bias = .pullUp, activeLow: Bool = true) {
        self.chip = chip
        self.offset = offset
        self.name = name
        self.bias = bias
        self.activeLow = activeLow
    }

    /// How messages name the line: `GPIO17`, `pinctrl-rp1 offset 17`, `offset 17`.
    public var label: String {
        if let name, offset == nil { return chip.map { "\(name) on \($0)" } ?? name }
        return [chip, offset.map { "offset \($0)" }].compactMap { $0 }.joined(separator: " ")
    }

    var cBias: Int32 {
        switch bias {
        case .asIs: Int32(JB_GPIO_BIAS_AS_IS)
        case .none: Int32(JB_GPIO_BIAS_DISABLED)
        case .pullUp: Int32(JB_GPIO_BIAS_PULL_UP)
        case .pullDown: Int32(JB_GPIO_BIAS_PULL_DOWN)
        }
    }
}

/// One edge on a watched line, in the order the kernel saw them.
public struct GPIOEdge: Sendable, Equatable, CustomStringConvertible {
    /// The line's position in the specs given to `GPIOLines.open`.
    public var line: Int
    /// After active-low: true when the line became active (an active-low button was pressed).
    public var rising: Bool
    /// The kernel's timestamp: CLOCK_MONOTONIC (libgpiod 2; libgpiod 1.6 on Linux 5.7 and later),
    /// CLOCK_REALTIME with libgpiod 1.6 on older kernels. Compare edges with each other only.
    public var timestampNs: UInt64

    public init(line: Int, rising: Bool, timestampNs: UInt64) {
        self.line = line
        self.rising = rising
        self.timestampNs = timestampNs
    }

    /// `timestampNs` in seconds.
    public var time: Double { Double(timestampNs) / 1e9 }

    public var description: String { "line \(line) \(rising ? "rising" : "falling") at \(timestampNs) ns" }
}

/// Input lines requested with both edges, read as timestamped `GPIOEdge`s. No policy here:
/// debouncing, gestures and encoder decoding belong to the core.
///
/// Owned by one thread at a time. Poll `fds` for readability, then call `readEdges()`; nothing
/// blocks. Lines on several chips are fine (one request per chip).
public final class GPIOLines {
    /// Where a spec was found.
    public struct Resolved: Sendable, Equatable {
        public var chipPath: String
        public var chipLabel: String
        public var offset: Int
        /// The line's name on the chip, or "".
        public var name: String
    }

    /// The specs given to `open`, and where each was found (same order).
    public let specs: [GPIOLineSpec]
    public let resolved: [Resolved]
    private var chips: [GPIOChip]
    /// One request per chip; `lines[i]` is the spec index of the request's line i.
    private var requests: [(handle: OpaquePointer, lines: [Int], fds: [Int32])]

    /// Opens every line of `specs` as an input with both edges, raw: no kernel debounce on either
    /// libgpiod version (the core debounces from the edges' timestamps, so the first edge of a
    /// press acts at once; the kernel's would hold it until the line is stable). `consumer` is the name
    /// other programs see (`gpioinfo`). `directory` holds the chip devices.
    /// Throws `.notFound` naming what exists, `.busy` naming the holder,
    /// `.permissionDenied` saying what to install, `.invalid` for an incomplete spec.
    public static func open(_ specs: [GPIOLineSpec], consumer: String = "jukebox",
                            directory: String = "/dev") throws(DeviceError) -> GPIOLines {
        var resolver = Resolver(directory: directory)
        var places: [(chip: GPIOChip, offset: Int)] = []
        for spec in specs { places.append(try resolver.resolve(spec)) }
        var groups: [(chip: GPIOChip, lines: [Int])] = []
        for (index, place) in places.enumerated() {
            if let g = groups.firstIndex(where: { $0.chip === place.chip }) { groups[g].lines.append(index) }
            else { groups.append((place.chip, [index])) }
        }
        var requests: [(handle: OpaquePointer, lines: [Int], fds: [Int32])] = []
        for group in groups {
            let configs = group.lines.map { jb_gpio_line_config(offset: UInt32(places[$0].offset), bias: specs[$0].cBias,
                                                                 active_low: specs[$0].activeLow) }
            var failed = 0
            guard let handle = jb_gpio_request_lines(group.chip.handle, consumer, configs, configs.count, &failed) else {
                let code = errno
                for r in requests { jb_gpio_request_release(r.handle) }
                let culprit = failed < group.lines.count ? [group.lines[failed]] : group.lines
                let holder = culprit.lazy.compactMap { group.chip.lineInfo(places[$0].offset) }.first { $0.used }
                let name = failed < group.lines.count ? specs[group.lines[failed]].label
                    : group.lines.map { specs[$0].label }.joined(separator: ", ")
                throw GPIOErrors.request(code, line: name, who: holder?.consumer)
            }
            requests.append((handle, group.lines, Self.fds(of: handle)))
        }
        let resolved = places.map { place in
            Resolved(chipPath: place.chip.path, chipLabel: place.chip.label, offset: place.offset,
                     name: place.chip.lineInfo(place.offset)?.name ?? "")
        }
        return GPIOLines(specs: specs, resolved: resolved, chips: groups.map(\.chip), requests: requests)
    }

    init(specs: [GPIOLineSpec], resolved: [Resolved], chips: [GPIOChip],
         requests: [(handle: OpaquePointer, lines: [Int], fds: [Int32])]) {
        self.specs = specs
        self.resolved = resolved
        self.chips = chips
        self.requests = requests
    }

    deinit { close() }

    /// The fds to poll for readability: one per line with libgpiod 1.6, one per chip with libgpiod 2.
    /// Empty after `close()`.
    public var fds: [Int32] { requests.flatMap(\.fds) }

    /// Every edge waiting on every fd, oldest first (merged across fds by timestamp; on one line the
    /// kernel's order is kept). Returns [] when none is waiting; never blocks. Throws when a read
    /// fails (the chip went away); the lines stay open until `close()`.
    public func readEdges() throws(DeviceError) -> [GPIOEdge] {
        var edges: [GPIOEdge] = []
        var buffer = [jb_gpio_edge](repeating: jb_gpio_edge(), count: Int(JB_GPIO_MAX_LINES))
        for request in requests {
            for fdIndex in request.fds.indices {
                // Bounded: a button cannot produce more than this between two polls.
                for _ in 0..<64 {
                    let count = buffer.withUnsafeMutableBufferPointer {
                        jb_gpio_request_read(request.handle, fdIndex, $0.baseAddress, $0.count)
                    }
                    if count < 0 {
                        let code = errno
                        if code == EINTR { continue }
                        throw GPIOErrors.read(code, what: request.lines.map { specs[$0].label }.joined(separator: ", "))
                    }
                    if count == 0 { break }
                    for edge in buffer[0..<Int(count)] {
                        edges.append(GPIOEdge(line: request.lines[Int(edge.index)], rising: edge.rising,
                                              timestampNs: edge.timestamp_ns))
                    }
                }
            }
        }
        // Stable merge by timestamp (one fd per line with libgpiod 1.6).
        return edges.enumerated().sorted { ($0.element.timestampNs, $0.offset) < ($1.element.timestampNs, $1.offset) }
            .map(\.element)
    }

    /// Whether line `line` (its position in `specs`) is active now (after active-low), read from the
    /// line itself, not from its edges: the kernel queues 16 edges a line and drops what does not
    /// fit, so after a long burst the last edge read need not be the line's level. Throws when the
    /// read fails or the lines are closed.
    public func level(_ line: Int) throws(DeviceError) -> Bool {
        guard let (handle, index) = place(line) else {
            throw DeviceError(kind: .invalid, message: "line \(line) is not open", errno: EBADF)
        }
        let value = jb_gpio_request_get_value(handle, index)
        if value < 0 { throw GPIOErrors.read(errno, what: specs[line].label, reading: "level") }
        return value == 1
    }

    /// The request holding line `line` and the line's index in it; nil after `close()`.
    func place(_ line: Int) -> (handle: OpaquePointer, index: Int)? {
        for request in requests {
            if let index = request.lines.firstIndex(of: line) { return (request.handle, index) }
        }
        return nil
    }

    /// Releases the lines and closes the chips. Idempotent.
    public func close() {
        for request in requests { jb_gpio_request_release(request.handle) }
        requests = []
        for chip in chips { chip.close() }
        chips = []
    }

    static func fds(of handle: OpaquePointer) -> [Int32] {
        var fds = [Int32](repeating: -1, count: Int(JB_GPIO_MAX_LINES))
        let count = jb_gpio_request_get_fds(handle, &fds, fds.count)
        return Array(fds.prefix(count))
    }
}

/// Finds chips and offsets for specs, opening each chip once.
private struct Resolver {
    let directory: String
    var open: [String: GPIOChip] = [:]
    var scanned: [(path: String, chip: GPIOChip?, error: DeviceError?)]? = nil

    init(directory: String) { self.directory = directory }

    mutating func resolve(_ spec: GPIOLineSpec) throws(DeviceError) -> (chip: GPIOChip, offset: Int) {
        if spec.offset == nil && (spec.name ?? "").isEmpty {
            throw DeviceError(kind: .invalid, message: "a GPIO line needs an offset or a name (\(spec.chip ?? "no chip"))")
        }
        if let offset = spec.offset, offset < 0 {
            throw DeviceError(kind: .invalid, message: "\(spec.label): offsets start at 0")
        }
        if let offset = spec.offset {
            let chip: GPIOChip
            if let wanted = spec.chip { chip = try self.chip(wanted) }
            else { chip = try headerChip() }
            guard offset < chip.lineCount else {
                throw DeviceError(kind: .notFound, message: "\(spec.label): \(chip.name) [\(chip.label)] has \(chip.lineCount) "
                                + "lines (offsets 0-\(chip.lineCount - 1))")
            }
            return (chip, offset)
        }
        let name = spec.name ?? ""
        if let wanted = spec.chip {
            let chip = try self.chip(wanted)
            guard let offset = chip.find(name) else {
                throw DeviceError(kind: .notFound, message: "no line named \(name) on \(chip.name) [\(chip.label)]", errno: ENOENT)
            }
            return (chip, offset)
        }
        let all = try scan()
        for entry in all {
            if let chip = entry.chip, let offset = chip.find(name) { return (chip, offset) }
        }
        if let denied = all.first(where: { $0.error?.kind == .permissionDenied })?.error { throw denied }
        throw DeviceError(kind: .notFound, message: "no GPIO line named \(name); chips here: \(GPIOChips.summary(directory: directory))",
                        errno: ENOENT)
    }

    /// A chip by path (`/…`), device name (`gpiochip0`) or label.
    private mutating func chip(_ wanted: String) throws(DeviceError) -> GPIOChip {
        let isName = wanted.hasPrefix("gpiochip") && Int(wanted.dropFirst("gpiochip".count)) != nil
        if wanted.hasPrefix("/") || isName {
            let path = isName ? directory + "/" + wanted : wanted
            if let chip = open[path] { return chip }
            let dir = directory
            let chip = try GPIOChip(path: path, chipsForMessages: GPIOChips.summary(directory: dir))
            open[path] = chip
            return chip
        }
        let all = try scan()
        if let chip = all.lazy.compactMap(\.chip).first(where: { $0.label == wanted }) { return chip }
        if let denied = all.first(where: { $0.error?.kind == .permissionDenied })?.error { throw denied }
        throw DeviceError(kind: .notFound, message: "no gpiochip with label \(wanted); chips here: \(GPIOChips.summary(directory: directory))",
                        errno: ENOENT)
    }

    private mutating func headerChip() throws(DeviceError) -> GPIOChip {
        let all = try scan()
        for label in GPIOChips.headerLabels {
            if let chip = all.lazy.compactMap(\.chip).first(where: { $0.label == label }) { return chip }
        }
        if let denied = all.first(where: { $0.error?.kind == .permissionDenied })?.error { throw denied }
        throw DeviceError(kind: .notFound, message: "no Raspberry Pi header chip (\(GPIOChips.headerLabels.joined(separator: ", "))); "
                        + "name the chip; chips here: \(GPIOChips.summary(directory: directory))", errno: ENOENT)
    }

    private mutating func scan() throws(DeviceError) -> [(path: String, chip: GPIOChip?, error: DeviceError?)] {
        if let scanned { return scanned }
        var result: [(path: String, chip: GPIOChip?, error: DeviceError?)] = []
        for path in GPIOChips.chipPaths(in: directory) {
            if let chip = open[path] { result.append((path, chip, nil)); continue }
            do throws(DeviceError) {
                let chip = try GPIOChip(path: path, chipsForMessages: "")
                open[path] = chip
                result.append((path, chip, nil))
            } catch {
                result.append((path, nil, error))
            }
        }
        scanned = result
        return result
    }
}

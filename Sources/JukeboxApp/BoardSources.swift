// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The configured buttons, encoder and input devices as the runtime's event sources. They only
/// translate: GPIO edges become `buttonEdge`/`encoderEdge`, keys become `mediaKey`, and a button's
/// line is read when the core asks (`level(of:)`); what an edge means (debounce, gestures,
/// detents) is decided in the core.
public enum BoardSources {
    /// The sources for `hardware` (none when nothing is configured).
    public static func make(_ hardware: BoardConfig, log: Log) -> [EventSource] {
        var sources: [EventSource] = []
        if let gpio = GPIOSource(hardware, log: log) { sources.append(gpio) }
        if let input = hardware.input, !input.isEmpty { sources.append(InputSource(input, log: log)) }
        return sources
    }

    /// The card reader `rfid` names, if any.
    public static func cardReader(_ rfid: RFIDSettings?, log: Log) -> [EventSource] {
        guard let rfid else { return [] }
        switch rfid.reader {
        case .keyboard: return [CardReaderSource(rfid, log: log)]
        case .rc522:
            let path = rfid.device ?? "/dev/spidev0.0"
            let name = "card reader (rc522 \(path))"
            do {
                let spi = try SPIDevice(path: path)
                return [PolledCardSource(CardWatch(MFRC522(spi)), name: name, log: log)]
            } catch {
                // The player plays without cards; the journal says why.
                log.warning("\(name): \(error); no card reader")
                return []
            }
        case .pn532:
            let bus = rfid.bus ?? "/dev/i2c-1"
            let name = "card reader (pn532 \(bus) 0x\(String(rfid.address, radix: 16)))"
            do {
                let i2c = try I2CBus(path: bus)
                return [PolledCardSource(CardWatch(PN532(i2c, address: rfid.address)), name: name, log: log)]
            } catch {
                log.warning("\(name): \(error); no card reader")
                return []
            }
        }
    }

    /// The low-battery pin `battery.lowPin` names, if any, on the config's GPIO chip and bias.
    public static func batteryPin(_ pin: BatteryPinSettings?, gpio: BoardConfig.GPIO?, log: Log) -> [EventSource] {
        guard let pin else { return [] }
        return [BatteryPinSource(GPIOSource.lineSpec(pin.line, gpio: gpio, activeLow: !pin.activeHigh), log: log)]
    }

    /// The battery's chip `battery` names, if any, read every `interval` seconds.
    public static func battery(_ battery: BatteryMonitorSettings?, log: Log) -> [EventSource] {
        guard let battery else { return [] }
        let name = "battery (\(battery.chip.rawValue) \(battery.bus))"
        do {
            let bus: I2CBus
            if let n = Int(battery.bus) { bus = try I2CBus(number: n) } else if battery.bus.hasPrefix("/") {
                bus = try I2CBus(path: battery.bus)
            } else {
                bus = try I2CBus(adapterNamed: battery.bus)
            }
            let chip: BatteryMonitor = switch battery.chip {
            case .max17048: MAX17048(bus: bus, address: battery.address.map(UInt8.init) ?? MAX17048.defaultAddress)
            case .ina219: INA219(bus: bus, address: battery.address.map(UInt8.init) ?? INA219.defaultAddress,
                                 chargingWhenPositive: battery.chargingWhenPositive)
            }
            return [BatterySource(chip, name: name, log: log, interval: battery.interval)]
        } catch {
            // The player plays without it; the journal says why.
            log.warning("\(name): \(error); no battery readings")
            return []
        }
    }
}

/// Buttons and the rotary encoder on GPIO lines. A missing chip or a busy line is reported once
/// and retried every few seconds (hot-plugged HATs, a service that starts before a module loads).
public final class GPIOSource: EventSource {
    /// What a line is for.
    public enum Role: Equatable, Sendable { case button(Button), encoderA, encoderB }

    private let specs: [GPIOLineSpec]
    private let roles: [Role]
    private let log: Log
    private var lines: GPIOLines?
    private var a = false, b = false
    private var lastAttempt = -1e9
    private var lastError: String?

    /// Lines for the configured buttons and encoder; nil when none are configured.
    public init?(_ hardware: BoardConfig, log: Log) {
        var specs: [GPIOLineSpec] = []
        var roles: [Role] = []
        func spec(_ line: String) -> GPIOLineSpec { Self.lineSpec(line, gpio: hardware.gpio) }
        for (role, line) in (hardware.buttons ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let button = Button(rawValue: role) else { continue }
            specs.append(spec(line))
            roles.append(.button(button))
        }
        if let encoder = hardware.encoder {
            specs += [spec(encoder.a), spec(encoder.b)]
            roles += [.encoderA, .encoderB]
            if let push = encoder.push {
                specs.append(spec(push))
                roles.append(.button(.encoderPush))
            }
        }
        guard !specs.isEmpty else { return nil }
        self.specs = specs
        self.roles = roles
        self.log = log
        open()
    }

    private func open() {
        lastAttempt = monotonicNow()
        do {
            lines = try GPIOLines.open(specs)
            lastError = nil
            log.info("gpio: \(specs.count) lines (libgpiod \(GPIOChips.libgpiodVersion); raw edges, debounced by jukebox)")
        } catch {
            if error.description != lastError { log.warning("gpio: \(error); buttons are off, retrying") }
            lastError = error.description
        }
    }

    /// The line the config names: `CHIP:OFFSET` or a line name (`GPIO17`, on the config's chip if one
    /// is named), with the config's bias and active level (`activeLow` overrides the latter).
    public static func lineSpec(_ line: String, gpio: BoardConfig.GPIO?, activeLow: Bool? = nil) -> GPIOLineSpec {
        let bias: GPIOLineSpec.Bias
        switch gpio?.bias {
        case "pull-down"?: bias = .pullDown
        case "none"?: bias = .none
        default: bias = .pullUp
        }
        let low = activeLow ?? gpio?.activeLow ?? true
        if let colon = line.lastIndex(of: ":"), let offset = Int(line[line.index(after: colon)...]) {
            return GPIOLineSpec(chip: String(line[..<colon]), offset: offset, bias: bias, activeLow: low)
        }
        return GPIOLineSpec(chip: gpio?.chip, name: line, bias: bias, activeLow: low)
    }

    /// Lines already opened (tests feed them through `GPIOEventFeed`).
    public init(lines: GPIOLines, roles: [Role], log: Log) {
        self.specs = lines.specs
        self.roles = roles
        self.log = log
        self.lines = lines
    }

    public var fds: [Int32] { lines?.fds ?? [] }

    public func read(fd: Int32) -> [Event] {
        guard let lines else { return [] }
        let edges: [GPIOEdge]
        do { edges = try lines.readEdges() } catch {
            log.warning("gpio: \(error); buttons are off, retrying")
            lastError = error.description
            lines.close()
            self.lines = nil
            return []
        }
        return edges.compactMap { edge -> Event? in
            guard roles.indices.contains(edge.line) else { return nil }
            switch roles[edge.line] {
            case .button(let button): return .buttonEdge(button, pressed: edge.rising, at: edge.time)
            case .encoderA:
                a = edge.rising
                return .encoderEdge(a: a, b: b, at: edge.time)
            case .encoderB:
                b = edge.rising
                return .encoderEdge(a: a, b: b, at: edge.time)
            }
        }
    }

    public func maintain() {
        if lines == nil && monotonicNow() - lastAttempt >= 5 { open() }
    }

    /// While the lines are not open (retried every 5 s).
    public var needsMaintenance: Bool { lines == nil }

    public func level(of button: Button) -> Bool? {
        guard let lines, let line = roles.firstIndex(of: .button(button)) else { return nil }
        do { return try lines.level(line) } catch {
            log.warning("gpio: \(error)")
            return nil
        }
    }
}

/// Media keys from Linux input devices; devices that come and go (USB, Bluetooth) are reopened.
public final class InputSource: EventSource {
    private let devices: InputDevices
    private let log: Log

    /// Devices for the config's `input` list (`"*"`: any with media keys).
    public init(_ names: [String], log: Log) {
        let selectors: [InputSelector] = names.map { n in
            n == "*" ? .anyWithMediaKeys : n.hasPrefix("/") ? .path(n) : .name(n)
        }
        devices = InputDevices(selectors)
        self.log = log
        maintain()
        if devices.opened.isEmpty { log.info("input: no device yet for \(names.joined(separator: ", ")); watching for one") }
    }

    public var fds: [Int32] { devices.fds }

    public func read(fd: Int32) -> [Event] {
        let batch = devices.read()
        for gone in batch.lost { log.info("input: \(gone.name) went away (\(gone.error ?? "closed"))") }
        return batch.keys.map { .mediaKey(code: $0.code, value: $0.value, at: $0.time) }
    }

    public func maintain() {
        for added in devices.rescan() { log.info("input: \(added.name) (\(added.path))") }
    }

    /// Always: devices come and go (USB, Bluetooth) and are found by a rescan once a second.
    public var needsMaintenance: Bool { true }
}

// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
import JukeboxSystem

/// The hardware part of the configuration: which GPIO lines are which buttons, the rotary
/// encoder, input devices for media keys, the I2C display. It may come from a board profile
/// (`"board": "pi4"` → `profiles/pi4.json`) with any key overridden in the config itself.
public struct BoardConfig: Equatable, Sendable, Decodable {
    /// GPIO settings shared by all lines.
    public struct GPIO: Equatable, Sendable, Decodable {
        /// Chip label (`pinctrl-bcm2711`) or path (`/dev/gpiochip0`); nil: find lines by name on any chip.
        public var chip: String?
        /// "pull-up", "pull-down" or "none".
        public var bias: String?
        /// Whether a pressed button reads low (wired to ground with a pull-up).
        public var activeLow: Bool?
        /// Debounce window in milliseconds, applied by the core from the kernel's edge timestamps (the lines are requested raw, without kernel debounce, on both libgpiod versions).
        public var debounceMs: Int?
    }

    /// The rotary encoder.
    public struct Encoder: Equatable, Sendable, Decodable {
        /// Line of channel A (CLK).
        public var a: String
        /// Line of channel B (DT).
        public var b: String
        /// Line of its push button, if any.
        public var push: String?
        /// Quadrature transitions per detent: 1, 2 or 4.
        public var stepsPerDetent: Int?
        /// Whether fast turns move further.
        public var acceleration: Bool?
    }

    /// The I2C display.
    public struct Display: Equatable, Sendable, Decodable {
        /// A `DisplayType` name (`hd44780-16x2`, `ssd1306`, …); checked by `validate`.
        public var type: String
        /// `type` as a `DisplayType`; nil for a name that `validate` rejects.
        public var kind: DisplayType? { DisplayType(rawValue: type) }
        /// `/dev/i2c-1`, a bus number, or an adapter name.
        public var bus: String?
        /// 7-bit address (decimal in JSON: 39 = 0x27, 63 = 0x3F, 60 = 0x3C).
        public var address: Int?
        /// HD44780 backpack wiring: `"standard"`, `"mjkdz"` or `"rs=0,rw=1,e=2,bl=3,d4=4,d5=5,d6=6,d7=7"`.
        public var pins: String?

        /// A display entry.
        public init(type: String, bus: String? = nil, address: Int? = nil, pins: String? = nil) {
            self.type = type
            self.bus = bus
            self.address = address
            self.pins = pins
        }
    }

    /// Board name, for messages.
    public var board: String?
    /// GPIO settings.
    public var gpio: GPIO?
    /// Button role → line (`GPIO17`, or `CHIP:OFFSET`).
    public var buttons: [String: String]?
    /// The rotary encoder.
    public var encoder: Encoder?
    /// Input devices for media keys: names (substring) or paths; `["*"]`: every device with media keys.
    public var input: [String]?
    /// The display.
    public var display: Display?
    /// What the power button runs.
    public var powerCommand: [String]?

    /// No hardware.
    public init() {}

    /// The keys this type reads (so the config parser does not call them unknown).
    public static let keys: Set<String> = ["board", "gpio", "buttons", "encoder", "input", "display", "powerCommand"]

    /// `self` over `base`: every key set here wins; buttons merge per role.
    public func over(_ base: BoardConfig) -> BoardConfig {
        var merged = base
        if let board { merged.board = board }
        if let gpio {
            var g = base.gpio ?? GPIO()
            if let v = gpio.chip { g.chip = v }
            if let v = gpio.bias { g.bias = v }
            if let v = gpio.activeLow { g.activeLow = v }
            if let v = gpio.debounceMs { g.debounceMs = v }
            merged.gpio = g
        }
        if let buttons { merged.buttons = (base.buttons ?? [:]).merging(buttons) { $1 } }
        if let encoder { merged.encoder = encoder }
        if let input { merged.input = input }
        if let display { merged.display = display }
        if let powerCommand { merged.powerCommand = powerCommand }
        return merged
    }

    /// Checks roles and values; the message says what to fix.
    public func validate(source: String) throws(Config.Problem) {
        for role in (buttons ?? [:]).keys where Button(rawValue: role) == nil || role == Button.encoderPush.rawValue {
            let roles = Button.allCases.filter { $0 != .encoderPush }.map(\.rawValue).joined(separator: ", ")
            throw Config.Problem(description: "\(source): buttons: unknown role \"\(role)\" (roles: \(roles))")
        }
        if let bias = gpio?.bias, !["pull-up", "pull-down", "none"].contains(bias) {
            throw Config.Problem(description: "\(source): gpio.bias: must be \"pull-up\", \"pull-down\" or \"none\"")
        }
        if let ms = gpio?.debounceMs, !(0...500).contains(ms) {
            throw Config.Problem(description: "\(source): gpio.debounceMs: must be 0 to 500")
        }
        if let steps = encoder?.stepsPerDetent, ![1, 2, 4].contains(steps) {
            throw Config.Problem(description: "\(source): encoder.stepsPerDetent: must be 1, 2 or 4")
        }
        if let d = display {
            guard DisplayType(rawValue: d.type) != nil else {
                throw Config.Problem(description: "\(source): display.type: must be \(DisplayType.quotedNames())")
            }
            if let a = d.address, !(0x03...0x77).contains(a) {
                throw Config.Problem(description: "\(source): display.address: must be a 7-bit address (3-119; 39 is 0x27)")
            }
        }
        if let p = powerCommand, p.isEmpty { throw Config.Problem(description: "\(source): powerCommand: must be a non-empty argument list") }
    }

    /// The panel layout for the configured display, if any.
    public var layout: PanelLayout? {
        display?.kind?.layout
    }

    /// Applies the policy parts (debounce, encoder, power command) to the core's settings.
    public func apply(to settings: inout Settings) {
        if let ms = gpio?.debounceMs { settings.debounce = Double(ms) / 1000 }
        if let steps = encoder?.stepsPerDetent { settings.encoderStepsPerDetent = steps }
        if let accel = encoder?.acceleration { settings.encoderAcceleration = accel }
        if let command = powerCommand { settings.powerCommand = command }
        settings.display = layout
    }

    /// Reads a board profile: `name` is a path, or a name looked up in `folders` as `NAME.json`.
    public static func profile(_ name: String, folders: [String]) throws(Config.Problem) -> BoardConfig {
        let candidates = name.contains("/") ? [name] : folders.map { "\($0)/\(name).json" }
        guard let path = candidates.first(where: fileExists) else {
            throw Config.Problem(description: "board profile \"\(name)\" not found (looked in \(folders.joined(separator: ", ")))")
        }
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: 1 << 20) } catch {
            throw Config.Problem(description: "cannot read board profile: \(error)")
        }
        do {
            if let problem = JSONText.problem(bytes) { throw JSONTextError(problem: problem) }
            return try JSONDecoder().decode(BoardConfig.self, from: Data(bytes))
        } catch {
            throw Config.Problem(description: "\(path): not a valid board profile (\(StateStore.describe(error)))")
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// A PCF8574 + HD44780 that decodes the exact bytes written to it: pin states, E falling edges
/// latching nibbles (D4–D7 only, as wired), 8-bit mode after power-on and 4-bit mode after
/// function set, instructions (clear, home, entry mode, display control, shifts, function set,
/// CGRAM/DDRAM address) and data writes into 80 bytes of DDRAM and 64 of CGRAM.
/// Timing is not modelled (every instruction completes at once).
public final class HD44780Simulator: I2CTransport {
    public let address: UInt8
    public let geometry: PanelLayout
    public let pins: HD44780Pins

    /// Every write received, in order (payload bytes, without the address).
    public private(set) var writes: [[UInt8]] = []
    /// When set, writes throw this error (a disconnected or failing panel).
    public var failure: DeviceError?

    public private(set) var ddram = [UInt8](repeating: 0x20, count: 0x80)
    public private(set) var cgram = [UInt8](repeating: 0, count: 64)
    public private(set) var displayOn = false
    public private(set) var cursorOn = false
    public private(set) var fourBit = false
    public private(set) var backlightOn = false
    public private(set) var addressCounter = 0

    private var pinState: UInt8 = 0
    private var pendingHigh: UInt8?
    private var toCGRAM = false
    private var increment = true
    private var shift = 0

    public init(address: UInt8 = 0x27, geometry: PanelLayout = .lcd16x2, pins: HD44780Pins = .standard) {
        self.address = address
        self.geometry = geometry
        self.pins = pins
    }

    /// Total payload bytes received.
    public var bytesReceived: Int { writes.reduce(0) { $0 + $1.count } }

    /// Forgets the write log (the panel state stays).
    public func resetCounters() { writes = [] }

    public func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
        if let failure { throw failure }
        guard address == self.address else {
            throw DeviceError(kind: .noDevice, message: "simulated bus: no device answers at 0x\(I2CErrno.hex(address))")
        }
        writes.append(bytes)
        for byte in bytes { pins(byte) }
    }

    /// Feeds a raw expander byte, as a glitch would (for garbage tests).
    public func glitch(_ bytes: [UInt8]) { for byte in bytes { pins(byte) } }

    /// What a person sees: each row's characters (ROM glyphs as Unicode, CGRAM glyphs by their
    /// design in `HD44780Glyph`, unknown CGRAM bitmaps as `�`); blank rows when the display is off.
    public var rows: [String] {
        (0..<geometry.rows).map { row in
            guard displayOn else { return String(repeating: " ", count: geometry.columns) }
            return String((0..<geometry.columns).map { column in
                let code = ddram[visibleAddress(row: row, column: column)]
                if code < 0x10 { return HD44780Glyph.byBitmap[glyph(slot: Int(code & 7))] ?? "�" }
                return HD44780ROM.character(for: code)
            })
        }
    }

    /// The 8 rows of CGRAM slot `slot`.
    public func glyph(slot: Int) -> [UInt8] { Array(cgram[slot * 8..<slot * 8 + 8]).map { $0 & 0x1F } }

    /// A cell's 5×8 pixels (for snapshots): CGRAM from the simulator, ROM glyphs from `Font6x8`.
    public func cellBitmap(row: Int, column: Int) -> [UInt8] {
        guard displayOn else { return Array(repeating: 0, count: 8) }
        let code = ddram[visibleAddress(row: row, column: column)]
        if code < 0x10 { return glyph(slot: Int(code & 7)) }
        return Font6x8.rows(for: HD44780ROM.character(for: code)).map { $0 >> 1 }
    }

    private func visibleAddress(row: Int, column: Int) -> Int {
        let base = Int(HD44780.rowAddresses[row])
        let line = base & 0x40
        return line + ((base & 0x3F) + column + shift + 40) % 40
    }

    private func pins(_ byte: UInt8) {
        let eWas = pinState & (1 << pins.e) != 0
        pinState = byte
        backlightOn = (byte & (1 << pins.backlight) != 0) == pins.backlightActiveHigh
        guard eWas, byte & (1 << pins.e) == 0, byte & (1 << pins.rw) == 0 else { return }
        var nibble: UInt8 = 0
        for (index, pin) in pins.data.enumerated() where byte & (1 << pin) != 0 { nibble |= 1 << index }
        let rs = byte & (1 << pins.rs) != 0
        if !fourBit {
            execute(nibble << 4, data: rs)
        } else if let high = pendingHigh {
            pendingHigh = nil
            execute(high << 4 | nibble, data: rs)
        } else {
            pendingHigh = nibble
        }
    }

    private func execute(_ value: UInt8, data: Bool) {
        if data {
            if toCGRAM {
                cgram[addressCounter & 0x3F] = value
                addressCounter = (addressCounter + (increment ? 1 : 63)) & 0x3F
            } else {
                ddram[addressCounter] = value
                step()
            }
            return
        }
        switch value {
        case 0x80...: toCGRAM = false; addressCounter = Int(value & 0x7F)
        case 0x40...: toCGRAM = true; addressCounter = Int(value & 0x3F)
        case 0x20...:
            fourBit = value & 0x10 == 0
            pendingHigh = nil
        case 0x10...:
            let right = value & 0x04 != 0
            if value & 0x08 != 0 { shift += right ? -1 : 1; shift = (shift + 40) % 40 } else if !toCGRAM {
                let saved = increment
                increment = right
                step()
                increment = saved
            }
        case 0x08...:
            displayOn = value & 0x04 != 0
            cursorOn = value & 0x02 != 0
        case 0x04...: increment = value & 0x02 != 0
        case 0x02...: addressCounter = 0; shift = 0; toCGRAM = false
        case 0x01:
            ddram = Array(repeating: 0x20, count: 0x80)
            addressCounter = 0
            shift = 0
            increment = true
            toCGRAM = false
        default: break
        }
    }

    // Moves the DDRAM address counter the way a 2-line controller does (0x27 → 0x40, 0x67 → 0x00).
    private func step() {
        if increment {
            addressCounter = addressCounter == 0x27 ? 0x40 : addressCounter == 0x67 ? 0x00 : (addressCounter + 1) & 0x7F
        } else {
            addressCounter = addressCounter == 0x40 ? 0x27 : addressCounter == 0x00 ? 0x67 : addressCounter - 1
        }
    }
}

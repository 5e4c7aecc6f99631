// SPDX-License-Identifier: MIT

/// An SSD1306 or SH1106 128x64 that decodes the exact bytes written to it: control bytes (0x00
/// commands, 0x40 data, Co=1 single-byte forms), multi-byte commands, the addressing modes
/// (SSD1306: horizontal, vertical, page; SH1106: page only) with column/page windows, segment remap
/// and COM scan direction, display on/off, inversion and contrast; → the 128×64 pixels a person sees.
public final class SSD1306Simulator: I2CTransport {
    public let address: UInt8
    public let controller: SSD1306.Controller
    /// Every write received, in order (payload bytes).
    public private(set) var writes: [[UInt8]] = []
    /// When set, writes throw this error.
    public var failure: DeviceError?
    /// Commands the controller does not have (an SH1106 given 0x20/0x21/0x22, say).
    public private(set) var unsupported: [UInt8] = []

    public private(set) var displayOn = false
    public private(set) var inverted = false
    public private(set) var contrast: UInt8 = 0x7F
    public private(set) var chargePump = false
    /// Display RAM: `ramColumns` × 8 pages.
    public private(set) var ram: [UInt8]
    public let ramColumns: Int

    private var mode = 2 // page addressing after reset
    private var column = 0, page = 0
    private var columnWindow = 0...127, pageWindow = 0...7
    private var segmentRemap = false, comReversed = false
    private var command: [UInt8] = []

    public init(controller: SSD1306.Controller = .ssd1306, address: UInt8 = 0x3C) {
        self.controller = controller
        self.address = address
        ramColumns = controller == .ssd1306 ? 128 : 132
        ram = Array(repeating: 0, count: ramColumns * 8)
    }

    public var bytesReceived: Int { writes.reduce(0) { $0 + $1.count } }
    public func resetCounters() { writes = [] }

    /// Fills display RAM with a pattern (power-on garbage).
    public func scramble(seed: UInt32 = 1) {
        var state = seed
        for index in ram.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            ram[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    public func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
        if let failure { throw failure }
        guard address == self.address else {
            throw DeviceError(kind: .noDevice, message: "simulated bus: no device answers at 0x\(I2CErrno.hex(address))")
        }
        writes.append(bytes)
        var index = 0
        while index < bytes.count {
            let control = bytes[index]
            index += 1
            let single = control & 0x80 != 0
            let data = control & 0x40 != 0
            let end = single ? min(index + 1, bytes.count) : bytes.count
            for byte in bytes[index..<end] { data ? self.data(byte) : self.command(byte) }
            index = end
        }
    }

    /// The pixel a person sees at x 0…127, y 0…63 (false for all when the display is off).
    public func pixel(x: Int, y: Int) -> Bool {
        guard displayOn else { return false }
        let offset: Int
        if case .sh1106(let columnOffset) = controller { offset = columnOffset } else { offset = 0 }
        // A1 + C8 is upright on these modules; A0 mirrors left-right, C0 upside down.
        let ramX = (segmentRemap ? x : 127 - x) + offset
        let ramY = comReversed ? y : 63 - y
        let lit = ram[(ramY / 8) * ramColumns + ramX] & (1 << (ramY % 8)) != 0
        return lit != inverted
    }

    /// All 64 rows of 128 pixels.
    public var pixels: [[Bool]] { (0..<64).map { y in (0..<128).map { x in pixel(x: x, y: y) } } }

    private func data(_ byte: UInt8) {
        ram[page * ramColumns + column] = byte
        switch mode {
        case 0:
            if column < columnWindow.upperBound { column += 1 } else {
                column = columnWindow.lowerBound
                page = page < pageWindow.upperBound ? page + 1 : pageWindow.lowerBound
            }
        case 1:
            if page < pageWindow.upperBound { page += 1 } else {
                page = pageWindow.lowerBound
                column = column < columnWindow.upperBound ? column + 1 : columnWindow.lowerBound
            }
        default:
            column = (column + 1) % ramColumns
        }
    }

    private func command(_ byte: UInt8) {
        command.append(byte)
        let first = command[0]
        let sh1106 = controller != .ssd1306
        let argumentCount: Int
        switch first {
        case 0x81, 0xA8, 0xD3, 0xD5, 0xD9, 0xDA, 0xDB: argumentCount = 1
        case 0x8D, 0x20: argumentCount = sh1106 ? 0 : 1
        case 0xAD: argumentCount = sh1106 ? 1 : 0
        case 0x21, 0x22, 0xA3: argumentCount = sh1106 ? 0 : 2
        default: argumentCount = 0
        }
        guard command.count > argumentCount else { return }
        let arguments = Array(command.dropFirst())
        command = []
        switch first {
        case 0x00...0x0F: column = (column & 0xF0) | Int(first & 0x0F)
        case 0x10...0x1F: column = (column & 0x0F) | Int(first & 0x0F) << 4
        case 0x20: if sh1106 { unsupported.append(first) } else { mode = Int(arguments[0] & 3) }
        case 0x21:
            if sh1106 { unsupported.append(first) } else {
                columnWindow = Int(arguments[0] & 0x7F)...Int(arguments[1] & 0x7F)
                column = columnWindow.lowerBound
            }
        case 0x22:
            if sh1106 { unsupported.append(first) } else {
                pageWindow = Int(arguments[0] & 7)...Int(arguments[1] & 7)
                page = pageWindow.lowerBound
            }
        case 0x81: contrast = arguments[0]
        case 0x8D: if sh1106 { unsupported.append(first) } else { chargePump = arguments[0] & 0x04 != 0 }
        case 0xAD: if sh1106 { chargePump = arguments[0] & 0x01 != 0 } else { unsupported.append(first) }
        case 0xA0, 0xA1: segmentRemap = first == 0xA1
        case 0xA6, 0xA7: inverted = first == 0xA7
        case 0xAE, 0xAF: displayOn = first == 0xAF
        case 0xB0...0xB7: page = Int(first & 7)
        case 0xC0, 0xC8: comReversed = first == 0xC8
        default: break // start line, multiplex, clocks, precharge, VCOMH, A4/A5, NOP: no visible effect here
        }
    }
}

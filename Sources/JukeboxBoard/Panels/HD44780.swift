// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc

/// An HD44780 character LCD (16x2, 20x4) in 4-bit mode behind a PCF8574 I2C expander.
///
/// Initialisation is split across `update` calls so no call sleeps on the caller's thread for more
/// than 150 µs: the first (and after an error) waits 50 ms for power-up, then nibble 3, 5 ms,
/// nibble 3, 150 µs (the one in-call wait), nibbles 3 and 2, function set 0x28, display off 0x08,
/// clear 0x01, 2 ms, entry mode 0x06, display on 0x0C; each wait is returned as
/// `.initialising(retryAt:)`. Every `reinitInterval` seconds (and after any write error) it
/// re-initialises and redraws, because 5 V backpacks on 3.3 V buses lose nibble sync and show
/// garbage. Frames are transliterated for ROM A00; up to 8 glyphs per frame go to CGRAM. Only
/// changed cells are sent: per row, runs of changed cells (gaps of one cell are bridged), each run
/// after a set-address command, all of a row in one I2C write (4 expander bytes per HD44780 byte).
public final class HD44780: PanelDriver {
    public let geometry: PanelLayout
    /// The expander's 7-bit address (0x27 PCF8574, 0x3F PCF8574A).
    public let address: UInt8
    public let pins: HD44780Pins
    /// Seconds between periodic re-initialisations; 0 turns them off.
    public var reinitInterval: Double = 60
    /// Whether the backlight is on; `setBacklight` switches it at once, otherwise the next write does.
    public private(set) var backlight = true

    /// The one in-call wait (150 µs between the first nibbles 3); a test puts a recorder here to
    /// see every wait without timing the call.
    var pause: (_ microseconds: UInt32) -> Void = { _ = usleep($0) }

    private let transport: I2CTransport
    private var phase = Phase.cold(powerWait: true)
    private var shown: [[UInt8]]?
    private var slots: [HD44780Glyph?] = Array(repeating: nil, count: 8)
    private var initialisedAt = 0.0

    private enum Phase: Equatable {
        case cold(powerWait: Bool)
        case powerUp(until: Double)
        case firstNibble(until: Double)
        case clearing(until: Double)
        case ready
    }

    /// DDRAM address of each row's first cell.
    static let rowAddresses: [UInt8] = [0x00, 0x40, 0x14, 0x54]

    /// A driver for a panel of `geometry` (`.lcd16x2`, `.lcd20x4`) at `address` on `transport`.
    /// Sends nothing until the first `update`.
    public init(transport: I2CTransport, address: UInt8 = 0x27, geometry: PanelLayout = .lcd16x2,
                pins: HD44780Pins = .standard) {
        self.transport = transport
        self.address = address
        self.geometry = geometry
        self.pins = pins
    }

    public func invalidate() {
        phase = .cold(powerWait: true)
        shown = nil
    }

    /// Switches the backlight with one expander write. Throws like `update`.
    public func setBacklight(_ on: Bool) throws(DeviceError) {
        backlight = on
        try send([pins.byte(nibble: 0, rs: false, e: false, backlight: on)])
    }

    public func update(_ frame: DisplayFrame, now: Double) throws(DeviceError) -> PanelUpdate {
        if phase == .ready, reinitInterval > 0, now - initialisedAt >= reinitInterval {
            phase = .cold(powerWait: false)
        }
        if let wait = try initialise(now: now) { return .initialising(retryAt: wait) }
        return try draw(frame)
    }

    /// The transliterated cell codes and CGRAM glyphs a frame needs (pure; for tests and the demo).
    static func encode(_ frame: DisplayFrame, geometry: PanelLayout, loaded: [HD44780Glyph?])
        -> (cells: [[UInt8]], slots: [HD44780Glyph?]) {
        let grid = frame.grid(geometry)
        var wanted: [HD44780Glyph] = []
        for row in grid {
            for character in row {
                if let glyph = cgramGlyph(character), !wanted.contains(glyph) { wanted.append(glyph) }
            }
        }
        // Keep glyphs where they are; new ones take slots this frame does not use.
        var slots = loaded.map { slot in slot.flatMap { wanted.contains($0) ? $0 : nil } }
        for glyph in wanted where !slots.contains(glyph) {
            if let free = slots.firstIndex(where: { $0 == nil }) { slots[free] = glyph }
        }
        let cells = grid.map { row in
            row.map { character -> UInt8 in
                if let glyph = cgramGlyph(character) {
                    if let slot = slots.firstIndex(of: glyph) { return UInt8(slot) }
                    if case .glyph(let panelGlyph) = glyph { return HD44780ROM.nearest(panelGlyph.fallback) }
                }
                return HD44780ROM.nearest(character)
            }
        }
        return (cells, slots)
    }

    private static func cgramGlyph(_ character: Character) -> HD44780Glyph? {
        if character == "\\" { return .backslash }
        guard let glyph = PanelGlyph(rawValue: character), glyph != .full else { return nil }
        return .glyph(glyph)
    }

    // Runs the next step of the initialisation; returns when to come back, nil once ready.
    private func initialise(now: Double) throws(DeviceError) -> Double? {
        switch phase {
        case .ready:
            return nil
        case .cold(let powerWait):
            try send([pins.byte(nibble: 0, rs: false, e: false, backlight: backlight)])
            if powerWait {
                phase = .powerUp(until: now + 0.050)
                return now + 0.050
            }
            return try firstNibble(now: now)
        case .powerUp(let until):
            if now < until { return until }
            return try firstNibble(now: now)
        case .firstNibble(let until):
            if now < until { return until }
            try send(nibbles([0x3]))
            pause(150)
            var bytes = nibbles([0x3, 0x2])
            for command: UInt8 in [0x28, 0x08, 0x01] { bytes += byteNibbles(command, data: false) }
            try send(bytes)
            shown = Array(repeating: Array(repeating: 0x20, count: geometry.columns), count: geometry.rows)
            slots = Array(repeating: nil, count: 8)
            phase = .clearing(until: now + 0.002)
            return now + 0.002
        case .clearing(let until):
            if now < until { return until }
            try send(byteNibbles(0x06, data: false) + byteNibbles(0x0C, data: false))
            phase = .ready
            initialisedAt = now
            return nil
        }
    }

    private func firstNibble(now: Double) throws(DeviceError) -> Double {
        try send(nibbles([0x3]))
        phase = .firstNibble(until: now + 0.005)
        return now + 0.005
    }

    private func draw(_ frame: DisplayFrame) throws(DeviceError) -> PanelUpdate {
        let (cells, newSlots) = Self.encode(frame, geometry: geometry, loaded: slots)
        var bytes = 0, writes = 0
        var glyphBytes: [UInt8] = []
        for (slot, glyph) in newSlots.enumerated() where glyph != nil && glyph != slots[slot] {
            glyphBytes += byteNibbles(0x40 | UInt8(slot) << 3, data: false)
            for row in glyph!.bitmap { glyphBytes += byteNibbles(row, data: true) }
        }
        if !glyphBytes.isEmpty {
            try send(glyphBytes)
            bytes += glyphBytes.count
            writes += 1
        }
        slots = newSlots
        let before = shown ?? Array(repeating: Array(repeating: 0xFF, count: geometry.columns), count: geometry.rows)
        for (row, codes) in cells.enumerated() {
            let runs = Self.changedRuns(old: before[row], new: codes)
            guard !runs.isEmpty else { continue }
            var rowBytes: [UInt8] = []
            for run in runs {
                rowBytes += byteNibbles(0x80 | (Self.rowAddresses[row] + UInt8(run.lowerBound)), data: false)
                for code in codes[run] { rowBytes += byteNibbles(code, data: true) }
            }
            try send(rowBytes)
            bytes += rowBytes.count
            writes += 1
            shown?[row] = codes
        }
        shown = cells
        return writes == 0 ? .unchanged : .sent(bytes: bytes, writes: writes)
    }

    /// Ranges of changed cells; two runs one unchanged cell apart are joined (sending that cell
    /// costs no more than a new set-address command).
    static func changedRuns(old: [UInt8], new: [UInt8]) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        for index in new.indices where index >= old.count || old[index] != new[index] {
            if let last = runs.last, index - last.upperBound <= 1 {
                runs[runs.count - 1] = last.lowerBound..<(index + 1)
            } else {
                runs.append(index..<(index + 1))
            }
        }
        return runs
    }

    private func nibbles(_ values: [UInt8]) -> [UInt8] {
        values.flatMap { value in
            [pins.byte(nibble: value, rs: false, e: true, backlight: backlight),
             pins.byte(nibble: value, rs: false, e: false, backlight: backlight)]
        }
    }

    private func byteNibbles(_ value: UInt8, data: Bool) -> [UInt8] {
        [value >> 4, value & 0x0F].flatMap { nibble in
            [pins.byte(nibble: nibble, rs: data, e: true, backlight: backlight),
             pins.byte(nibble: nibble, rs: data, e: false, backlight: backlight)]
        }
    }

    private func send(_ bytes: [UInt8]) throws(DeviceError) {
        try write(bytes, via: transport, address: address)
    }
}

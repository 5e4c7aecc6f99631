// SPDX-License-Identifier: MIT
import JukeboxCore

/// A 128x64 monochrome OLED on I2C: SSD1306 (horizontal addressing with column/page windows) or
/// SH1106 (132-column RAM, page addressing only, visible area from `columnOffset`).
///
/// Frames are drawn with `Font6x8` into a 1-bit framebuffer (21 columns × 8 text rows, one row per
/// 8-pixel page) plus an optional progress bar, and only the pages that changed are sent, each
/// within the span of columns that changed. No call waits; a full frame is 1 024 data bytes
/// (≈ 92 ms at 100 kHz, ≈ 23 ms at 400 kHz), a progress tick a few bytes. The init sequence is
/// sent at the first update, after a write error and every `reinitInterval` seconds (then the
/// whole frame is sent again).
public final class SSD1306: PanelDriver {
    /// The controller on the module.
    public enum Controller: Sendable, Equatable {
        case ssd1306
        /// SH1106: RAM columns 0–131, the 128 visible ones usually start at 2.
        case sh1106(columnOffset: Int)
        public static let sh1106 = Controller.sh1106(columnOffset: 2)
    }

    public let controller: Controller
    /// 7-bit address: 0x3C, or 0x3D when the module's address jumper is moved.
    public let address: UInt8
    public let geometry = PanelLayout.oled128x64
    /// Seconds between periodic re-initialisations; 0 turns them off.
    public var reinitInterval: Double = 300
    /// The contrast (0x81 command) sent at init; `setContrast` changes it at once.
    public private(set) var contrast: UInt8 = 0xCF

    private let transport: I2CTransport
    private var initialisedAt: Double?
    private var shown: [UInt8]?

    /// A driver for a module with `controller` at `address` on `transport`. Sends nothing until the
    /// first `update`.
    public init(transport: I2CTransport, controller: Controller = .ssd1306, address: UInt8 = 0x3C) {
        self.transport = transport
        self.controller = controller
        self.address = address
    }

    /// The init commands (without the 0x00 control byte).
    var initCommands: [UInt8] {
        switch controller {
        case .ssd1306:
            return [0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x00, 0xA1, 0xC8,
                    0xDA, 0x12, 0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6, 0x81, contrast, 0xAF]
        case .sh1106:
            // No charge-pump (0x8D) or addressing-mode (0x20) commands: DC-DC on with 0xAD 0x8B.
            return [0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0xAD, 0x8B, 0xA1, 0xC8,
                    0xDA, 0x12, 0xD9, 0x22, 0xDB, 0x40, 0xA4, 0xA6, 0x81, contrast, 0xAF]
        }
    }

    public func invalidate() {
        initialisedAt = nil
        shown = nil
    }

    /// Sets the contrast (0–255) with one write. Throws like `update`.
    public func setContrast(_ value: UInt8) throws(DeviceError) {
        contrast = value
        try send([0x00, 0x81, value])
    }

    public func update(_ frame: DisplayFrame, now: Double) throws(DeviceError) -> PanelUpdate {
        var bytes = 0, writes = 0
        if let at = initialisedAt, reinitInterval > 0, now - at >= reinitInterval { invalidate() }
        if initialisedAt == nil {
            let commands = [0x00] + initCommands
            try send(commands)
            bytes += commands.count
            writes += 1
            initialisedAt = now
            shown = nil
        }
        let pixels = OLEDRenderer.render(frame)
        for write in Self.pageWrites(old: shown, new: pixels, controller: controller) {
            try send(write)
            bytes += write.count
            writes += 1
        }
        shown = pixels
        return writes == 0 ? .unchanged : .sent(bytes: bytes, writes: writes)
    }

    /// The writes that bring a panel showing `old` (nil: unknown) to `new`: for each changed page the
    /// span of changed columns. SSD1306: consecutive changed pages share one window (0x21, 0x22) and
    /// one data write; SH1106: per page 0xB0+p and the column (offset added), then its data.
    static func pageWrites(old: [UInt8]?, new: [UInt8], controller: Controller) -> [[UInt8]] {
        var spans: [(page: Int, columns: ClosedRange<Int>)] = []
        for page in 0..<8 {
            let changed = (0..<128).filter { old == nil || old![page * 128 + $0] != new[page * 128 + $0] }
            if let first = changed.first, let last = changed.last { spans.append((page, first...last)) }
        }
        var writes: [[UInt8]] = []
        switch controller {
        case .ssd1306:
            var index = 0
            while index < spans.count {
                var end = index
                while end + 1 < spans.count, spans[end + 1].page == spans[end].page + 1 { end += 1 }
                let group = spans[index...end]
                let low = group.map(\.columns.lowerBound).min()!, high = group.map(\.columns.upperBound).max()!
                writes.append([0x00, 0x21, UInt8(low), UInt8(high), 0x22, UInt8(group.first!.page), UInt8(group.last!.page)])
                var data: [UInt8] = [0x40]
                for span in group { data += new[(span.page * 128 + low)...(span.page * 128 + high)] }
                writes.append(data)
                index = end + 1
            }
        case .sh1106(let offset):
            for span in spans {
                let column = span.columns.lowerBound + offset
                writes.append([0x00, 0xB0 | UInt8(span.page), UInt8(column & 0x0F), 0x10 | UInt8(column >> 4)])
                writes.append([0x40] + new[(span.page * 128 + span.columns.lowerBound)...(span.page * 128 + span.columns.upperBound)])
            }
        }
        return writes
    }

    private func send(_ bytes: [UInt8]) throws(DeviceError) {
        try write(bytes, via: transport, address: address)
    }
}

/// Draws frames for 128x64 panels into the SSD1306 page layout: 1 024 bytes, byte
/// `page * 128 + x` holds pixels x, page*8…page*8+7 (bit 0 at the top).
public enum OLEDRenderer {
    /// Text starts this many pixels from the left (21 × 6 = 126 of 128 columns).
    public static let leftMargin = 1

    /// The framebuffer for a frame: 8 text rows of 21 characters (row r on page r) and, when
    /// `progress` is set, a bar on `progressRow` (default the last row): an outline at x 1…126,
    /// y 1…6 of that row, its interior (124 columns) filled from the left.
    public static func render(_ frame: DisplayFrame) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let geometry = PanelLayout.oled128x64
        let barRow = frame.progress == nil ? nil : min(max(frame.progressRow ?? geometry.rows - 1, 0), geometry.rows - 1)
        for (row, cells) in frame.grid(geometry).enumerated() where row != barRow {
            for (column, character) in cells.enumerated() {
                let x = leftMargin + column * Font6x8.width
                for (dx, bits) in Font6x8.columns(for: character).enumerated() { buffer[row * 128 + x + dx] = bits }
            }
        }
        if let barRow, let progress = frame.progress {
            let fraction = progress.isNaN ? 0 : min(max(progress, 0), 1)
            let filled = Int((fraction * 124).rounded())
            for x in 1...126 {
                let bits: UInt8
                if x == 1 || x == 126 { bits = 0x7E } else if x - 2 < filled { bits = 0x7E } else { bits = 0x42 }
                buffer[barRow * 128 + x] = bits
            }
        }
        return buffer
    }
}

// SPDX-License-Identifier: MIT

/// A picture of what a simulated panel shows, for the README, tests and `jukebox demo`: PBM (P1,
/// P4), PNG (palette, zlib stored blocks) and terminal text.
public struct PanelSnapshot: Sendable, Equatable {
    /// Pixel kinds: background (LCD gaps between cells, OLED dark), an unlit LCD dot, a lit pixel.
    public enum Pixel: UInt8, Sendable { case background = 0, dot = 1, lit = 2 }

    public let width: Int
    public let height: Int
    public var pixels: [Pixel]
    /// RGB for background, dot, lit.
    public var palette: [(UInt8, UInt8, UInt8)]

    public static func == (a: Self, b: Self) -> Bool { a.width == b.width && a.height == b.height && a.pixels == b.pixels }

    /// Any picture, white on black (tests draw known patterns with it).
    init(width: Int, height: Int, pixels: [Pixel]) {
        precondition(pixels.count == width * height, "a picture has width × height pixels")
        self.width = width
        self.height = height
        self.pixels = pixels
        palette = [(0, 0, 0), (0, 0, 0), (235, 245, 255)]
    }

    /// The 128×64 pixels of an OLED (white on black).
    public init(oled: SSD1306Simulator) {
        width = 128
        height = 64
        pixels = (0..<64).flatMap { y in (0..<128).map { x in oled.pixel(x: x, y: y) ? Pixel.lit : .background } }
        palette = [(0, 0, 0), (0, 0, 0), (235, 245, 255)]
    }

    /// An LCD: 5×8 dots per cell, one pixel between cells, a two-pixel border (dark on green).
    public init(lcd: HD44780Simulator) {
        let columns = lcd.geometry.columns, rows = lcd.geometry.rows
        width = columns * 6 + 3
        height = rows * 9 + 3
        var pixels = [Pixel](repeating: .background, count: width * height)
        for row in 0..<rows {
            for column in 0..<columns {
                let bitmap = lcd.cellBitmap(row: row, column: column)
                for y in 0..<8 {
                    for x in 0..<5 {
                        let lit = bitmap[y] & (0x10 >> x) != 0
                        pixels[(2 + row * 9 + y) * width + 2 + column * 6 + x] = lit ? .lit : .dot
                    }
                }
            }
        }
        self.pixels = pixels
        palette = lcd.backlightOn ? [(120, 190, 40), (110, 178, 36), (20, 40, 20)] : [(60, 80, 40), (58, 76, 38), (20, 30, 20)]
    }

    private func lit(_ x: Int, _ y: Int) -> Bool { pixels[y * width + x] == .lit }

    /// Plain PBM (P1): `1` is a lit pixel.
    public func pbmText() -> String {
        var text = "P1\n\(width) \(height)\n"
        for y in 0..<height {
            text += (0..<width).map { lit($0, y) ? "1" : "0" }.joined(separator: " ") + "\n"
        }
        return text
    }

    /// Raw PBM (P4): rows packed MSB first, padded to whole bytes.
    public func pbm() -> [UInt8] {
        var bytes = Array("P4\n\(width) \(height)\n".utf8)
        for y in 0..<height {
            for start in stride(from: 0, to: width, by: 8) {
                var byte: UInt8 = 0
                for bit in 0..<8 where start + bit < width && lit(start + bit, y) { byte |= 0x80 >> bit }
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// A PNG (8-bit palette), each pixel drawn `scale`×`scale`.
    public func png(scale: Int = 4) -> [UInt8] {
        let scale = max(1, scale)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * scale + 1) * height * scale)
        for y in 0..<height {
            var line: [UInt8] = [0] // filter: none
            for x in 0..<width {
                let value = pixels[y * width + x].rawValue
                for _ in 0..<scale { line.append(value) }
            }
            for _ in 0..<scale { raw += line }
        }
        var header: [UInt8] = []
        header += PNG.bigEndian(UInt32(width * scale))
        header += PNG.bigEndian(UInt32(height * scale))
        header += [8, 3, 0, 0, 0]
        return PNG.signature + PNG.chunk("IHDR", header)
            + PNG.chunk("PLTE", palette.flatMap { [$0.0, $0.1, $0.2] })
            + PNG.chunk("IDAT", PNG.zlibStored(raw)) + PNG.chunk("IEND", [])
    }

    /// Unicode half blocks: two pixel rows per text line (`▀ ▄ █` and space).
    public func halfBlocks() -> String {
        var lines: [String] = []
        for y in stride(from: 0, to: height, by: 2) {
            lines.append(String((0..<width).map { x -> Character in
                let top = lit(x, y), bottom = y + 1 < height && lit(x, y + 1)
                return top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }))
        }
        return lines.joined(separator: "\n")
    }

    /// Unicode braille: 2×4 pixels per character (U+2800 + dot bits), so the 128×64 OLED is 64×16
    /// characters and fits, boxed, in an 80×24 terminal (half blocks need 128×32).
    public func braille() -> String {
        // The dot bit of each pixel in a 2×4 cell, by row then column (Unicode's dot numbering:
        // 1-2-3 down the left column, 4-5-6 down the right, 7 and 8 added below them later).
        let bits: [[UInt32]] = [[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]]
        var lines: [String] = []
        for top in stride(from: 0, to: height, by: 4) {
            var line = String.UnicodeScalarView()
            for left in stride(from: 0, to: width, by: 2) {
                var dots: UInt32 = 0
                for dy in 0..<4 where top + dy < height {
                    for dx in 0..<2 where left + dx < width && lit(left + dx, top + dy) { dots |= bits[dy][dx] }
                }
                line.append(Unicode.Scalar(0x2800 + dots)!)
            }
            lines.append(String(line))
        }
        return lines.joined(separator: "\n")
    }

    /// Text rows in a box (for character LCDs in a terminal).
    public static func boxed(_ rows: [String]) -> String {
        let width = rows.map(\.count).max() ?? 0
        let bar = String(repeating: "─", count: width)
        return (["┌" + bar + "┐"] + rows.map { "│" + $0 + "│" } + ["└" + bar + "┘"]).joined(separator: "\n")
    }
}

/// The few pieces of PNG and zlib a snapshot needs.
enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Length, type, data, CRC-32 of type and data.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks of at most 65 535 bytes.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        return out + bigEndian(adler32(data))
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in data { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

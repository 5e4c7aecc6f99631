// SPDX-License-Identifier: MIT
import JukeboxBoard
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// `jukebox probe replay-i2c`: feeds a recorded I2C byte log through the display simulators and
/// prints what the panel would show. The hardware-in-the-loop tests record what the kernel's I2C
/// adapter received (board/hil/modules/i2c-hil.c); this turns those bytes back into a screen, so a
/// test compares text, not bytes.
enum ProbeReplay {
    /// Runs the subcommand; the log has one message a line: `27 W 0c 08 …` (address, W or R,
    /// bytes in hex). Prints the panel's rows between `|` marks; exit 1 when the log cannot be read.
    static func run(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--panel", "--address", "--pins"], flags: [], command: "probe replay-i2c")
        if a.wantsHelp { return Probe.subjectHelp("replay-i2c") }
        let panel = DisplayType(rawValue: try a.choice("--panel", DisplayType.panels.map(\.rawValue)) ?? "") ?? .hd44780x16x2
        let pins = try a.choice("--pins", ["standard", "mjkdz"]) ?? "standard"
        guard a.positional.count == 1 else { throw UsageError(message: "probe replay-i2c needs one log FILE") }
        guard let text = readText(a.positional[0]) else {
            writeAll(2, "jukebox: cannot read \(a.positional[0])\n")
            return 1
        }
        let lcd = !panel.layout.graphic
        let address = UInt8(try a.int("--address", in: 3...119) ?? (lcd ? 0x27 : 0x3C))
        let writes = parse(text, address: address)
        let rows: [String]
        if lcd {
            let sim = HD44780Simulator(address: address, geometry: panel.layout,
                                       pins: pins == "mjkdz" ? .mjkdz : .standard)
            for bytes in writes { try? sim.write(address: address, bytes: bytes) }
            rows = sim.rows
        } else {
            let sim = SSD1306Simulator(controller: panel == .sh1106 ? .sh1106 : .ssd1306, address: address)
            for bytes in writes { try? sim.write(address: address, bytes: bytes) }
            rows = textGrid(sim)
        }
        let bytes = writes.reduce(0) { $0 + $1.count }
        writeAll(1, rows.map { "|" + DisplayText.inert($0) + "|" }.joined(separator: "\n") + "\n(\(writes.count) writes, \(bytes) bytes to 0x\(String(address, radix: 16)))\n")
        return 0
    }

    /// The writes to `address`, in order; other addresses, reads and malformed lines are skipped.
    static func parse(_ text: String, address: UInt8) -> [[UInt8]] {
        var writes: [[UInt8]] = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 2, words[1] == "W", UInt8(words[0], radix: 16) == address else { continue }
            writes.append(words.dropFirst(2).compactMap { UInt8($0, radix: 16) })
        }
        return writes
    }

    /// The OLED read back as text: each 6×8 cell of the 21×8 grid matched against the panel font
    /// (blank: space; anything else, such as the progress bar: `▒`).
    static func textGrid(_ sim: SSD1306Simulator) -> [String] {
        var candidates: [Character] = (0x20...0x7E).map { Character(Unicode.Scalar($0)!) }
        candidates += (0xA0...0xFF).compactMap { Unicode.Scalar($0).map(Character.init) }
        candidates += PanelGlyph.allCases.map(\.rawValue)
        var byColumns: [[UInt8]: Character] = [:]
        for c in candidates.reversed() where Font6x8.has(c) { byColumns[Font6x8.columns(for: c)] = c }
        let pixels = sim.pixels
        // The driver may centre the 126 text pixels in 128: read at the margin that matches most.
        func grid(margin: Int) -> [String] {
            (0..<8).map { page in
                String((0..<21).map { cell -> Character in
                    let columns = (0..<6).map { dx -> UInt8 in
                        var byte: UInt8 = 0
                        for dy in 0..<8 where pixels[page * 8 + dy][margin + cell * 6 + dx] { byte |= 1 << dy }
                        return byte
                    }
                    if columns.allSatisfy({ $0 == 0 }) { return " " }
                    return byColumns[columns] ?? "▒"
                })
            }
        }
        let grids = (0...2).map { grid(margin: $0) }
        return grids.max { a, b in a.joined().filter { $0 == "▒" }.count > b.joined().filter { $0 == "▒" }.count }!
    }

    private static func readText(_ path: String) -> String? {
        let fd = open(cPath(path), O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { return nil }
            if n == 0 { break }
            data += chunk[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import JukeboxCore
import XCTest

/// Snapshots of simulated panels: PNG files that decode, PBM, terminal renderings.
final class DisplaySnapshotTests: XCTestCase {
    /// Where the snapshots are left for people to look at.
    static let folder = NSTemporaryDirectory() + "jukebox-panel-snapshots"

    func testPngSnapshotsOfAnOledAndAnLcdFrameAreValid() throws {
        try FileManager.default.createDirectory(atPath: Self.folder, withIntermediateDirectories: true)
        let oledSim = SSD1306Simulator()
        let oled = SSD1306(transport: oledSim)
        _ = try oled.update(DisplayFrame(rows: ["Morning Bell", "The Band", "", "▶ 1:23 / 4:56", "", "🔀 🔁  🔈▁▂▃▄▅",
                                              "Ärger über Straße", ""], progress: 0.29), now: 0)
        let lcdSim = HD44780Simulator()
        let lcd = HD44780(transport: lcdSim)
        var now = 0.0
        while case .initialising(let at) = try lcd.update(DisplayFrame(rows: ["Morning Bell    ", "▶ 1:23 / 4:56 🔀"]), now: now) { now = at }

        for (name, snapshot, size) in [("oled.png", PanelSnapshot(oled: oledSim), (512, 256)),
                                       ("lcd16x2.png", PanelSnapshot(lcd: lcdSim), (99 * 4, 21 * 4))] {
            let png = snapshot.png(scale: 4)
            let path = Self.folder + "/" + name
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(png)))
            let pixels = try Self.decode(png)
            XCTAssertEqual(pixels.width, size.0)
            XCTAssertEqual(pixels.height, size.1)
            print("snapshot: \(path) (\(png.count) bytes)")
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
                XCTAssertEqual(try Self.pythonCheck(path), "ok \(size.0)x\(size.1)")
            }
        }
        let lcdText = PanelSnapshot.boxed(lcdSim.rows)
        print(lcdText)
        XCTAssertTrue(lcdText.contains("│▶ 1:23 / 4:56 🔀 │"))
        let half = PanelSnapshot(oled: oledSim).halfBlocks()
        print(half)
        XCTAssertEqual(half.split(separator: "\n").count, 32)
        let pbm = PanelSnapshot(oled: oledSim).pbm()
        XCTAssertEqual(pbm.count, "P4\n128 64\n".utf8.count + 16 * 64)
        _ = FileManager.default.createFile(atPath: Self.folder + "/oled.pbm", contents: Data(pbm))
        XCTAssertTrue(PanelSnapshot(oled: oledSim).pbmText().hasPrefix("P1\n128 64\n"))
    }

    /// The demo's OLED in a terminal: braille, 2×4 pixels a character, boxed in 66×18 (fits 80×24);
    /// every character's dots are exactly the lit pixels of its cell.
    func testBrailleDrawsTheOledIn64By16CharactersDotForDot() throws {
        // A known pattern: lit pixels at (0,0), (1,3), (127,63), and the whole cell at (10..11, 4..7).
        var pixels = [PanelSnapshot.Pixel](repeating: .background, count: 128 * 64)
        for (x, y) in [(0, 0), (1, 3), (127, 63)] { pixels[y * 128 + x] = .lit }
        for y in 4..<8 { for x in 10..<12 { pixels[y * 128 + x] = .lit } }
        let lines = PanelSnapshot(width: 128, height: 64, pixels: pixels).braille().split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 16)
        XCTAssertEqual(lines.map { $0.unicodeScalars.count }, Array(repeating: 64, count: 16))
        func cell(_ column: Int, _ row: Int) -> UInt32 { Array(lines[row].unicodeScalars)[column].value - 0x2800 }
        XCTAssertEqual(cell(0, 0), 0x01 | 0x80, "dot 1 (0,0) and dot 8 (1,3)")
        XCTAssertEqual(cell(63, 15), 0x80, "dot 8: the bottom-right pixel")
        XCTAssertEqual(cell(5, 1), 0xFF, "a full cell")
        let lit = lines.joined().unicodeScalars.reduce(0) { $0 + ($1.value - 0x2800).nonzeroBitCount }
        XCTAssertEqual(lit, 3 + 8, "no other dot")
        let boxed = PanelSnapshot.boxed(lines).split(separator: "\n")
        XCTAssertEqual(boxed.count, 18)
        XCTAssertTrue(boxed.allSatisfy { $0.count == 66 }, "fits an 80-column terminal")
    }

    /// Walks the chunks (checking each CRC), inflates the stored blocks (checking Adler-32) and
    /// returns the size; the data must be one filter byte plus width bytes per row.
    static func decode(_ png: [UInt8]) throws -> (width: Int, height: Int) {
        XCTAssertEqual(Array(png.prefix(8)), PNG.signature)
        var offset = 8, width = 0, height = 0
        var idat: [UInt8] = []
        func u32(_ at: Int) -> Int { Int(png[at]) << 24 | Int(png[at + 1]) << 16 | Int(png[at + 2]) << 8 | Int(png[at + 3]) }
        while offset < png.count {
            let length = u32(offset)
            let body = Array(png[(offset + 4)..<(offset + 8 + length)])
            XCTAssertEqual(UInt32(u32(offset + 8 + length)), PNG.crc32(body), "CRC")
            let type = String(decoding: body.prefix(4), as: UTF8.self)
            if type == "IHDR" { width = u32(offset + 8); height = u32(offset + 12) }
            if type == "IDAT" { idat += body.dropFirst(4) }
            offset += 12 + length
        }
        var raw: [UInt8] = []
        var at = 2
        while true {
            let final = idat[at] & 1
            let count = Int(idat[at + 1]) | Int(idat[at + 2]) << 8
            XCTAssertEqual(count ^ 0xFFFF, Int(idat[at + 3]) | Int(idat[at + 4]) << 8)
            raw += idat[(at + 5)..<(at + 5 + count)]
            at += 5 + count
            if final == 1 { break }
        }
        XCTAssertEqual(PNG.adler32(raw), UInt32(Int(idat[at]) << 24 | Int(idat[at + 1]) << 16 | Int(idat[at + 2]) << 8 | Int(idat[at + 3])))
        XCTAssertEqual(raw.count, (width + 1) * height)
        return (width, height)
    }

    /// Decodes with Python's zlib and checks every CRC there too.
    static func pythonCheck(_ path: String) throws -> String {
        let script = """
        import struct, sys, zlib
        d = open(sys.argv[1], 'rb').read(); assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n'; i = 8; z = b''
        while i < len(d):
            n, = struct.unpack('>I', d[i:i+4]); t = d[i+4:i+8]; c = d[i+8:i+8+n]
            assert struct.unpack('>I', d[i+8+n:i+12+n])[0] == zlib.crc32(t + c)
            if t == b'IHDR': w, h = struct.unpack('>II', c[:8])
            if t == b'IDAT': z += c
            i += 12 + n
        assert len(zlib.decompress(z)) == (w + 1) * h
        print('ok %dx%d' % (w, h))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

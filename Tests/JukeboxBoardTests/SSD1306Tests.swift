// SPDX-License-Identifier: MIT
@testable import JukeboxBoard
import JukeboxCore
import XCTest

/// The OLED drivers through the simulators: pixels a person would see, bytes per update.
final class SSD1306Tests: XCTestCase {
    let rows = ["Morning Bell", "The Band", "", "▶ 1:23 / 4:56", "🔀 🔁 🔈▁▂▃▄", "Ärger über Straße", "", ""]

    /// Checks that text row `row` shows `text` in the font at its cell positions.
    func assertText(_ sim: SSD1306Simulator, row: Int, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        for (column, character) in text.enumerated() {
            let glyph = Font6x8.rows(for: character)
            for dy in 0..<8 {
                for dx in 0..<6 {
                    let expected = glyph[dy] & (0x20 >> dx) != 0
                    let x = OLEDRenderer.leftMargin + column * 6 + dx, y = row * 8 + dy
                    if sim.pixel(x: x, y: y) != expected {
                        return XCTFail("'\(character)' at row \(row) column \(column): pixel \(x),\(y)", file: file, line: line)
                    }
                }
            }
        }
    }

    func testTextRowsShowTheFontPixelsOverGarbageRam() throws {
        let sim = SSD1306Simulator()
        sim.scramble()
        let oled = SSD1306(transport: sim)
        _ = try oled.update(DisplayFrame(rows: rows), now: 0)
        XCTAssertTrue(sim.displayOn)
        XCTAssertTrue(sim.chargePump)
        XCTAssertEqual(sim.contrast, 0xCF)
        for (row, text) in rows.enumerated() { assertText(sim, row: row, text.padding(21)) }
        // Column 0 and 127 stay dark (the margins).
        XCTAssertFalse((0..<64).contains { sim.pixel(x: 0, y: $0) || sim.pixel(x: 127, y: $0) })
        // 'M' has its top-left and top-right pixels lit, the row under a capital is dark.
        XCTAssertTrue(sim.pixel(x: 1, y: 0))
        XCTAssertTrue(sim.pixel(x: 5, y: 0))
        XCTAssertFalse(sim.pixel(x: 1, y: 7))
    }

    func testProgressBarPixels() throws {
        let sim = SSD1306Simulator()
        let oled = SSD1306(transport: sim)
        _ = try oled.update(DisplayFrame(rows: ["Title"], progress: 0.5), now: 0)
        let top = 56
        // Outline x 1…126, y 1…6 of the last row; 62 of 124 interior columns filled.
        XCTAssertTrue(sim.pixel(x: 1, y: top + 3))
        XCTAssertTrue(sim.pixel(x: 126, y: top + 3))
        XCTAssertTrue(sim.pixel(x: 100, y: top + 1))
        XCTAssertTrue(sim.pixel(x: 100, y: top + 6))
        XCTAssertFalse(sim.pixel(x: 100, y: top + 0))
        XCTAssertFalse(sim.pixel(x: 100, y: top + 7))
        XCTAssertTrue(sim.pixel(x: 63, y: top + 3))
        XCTAssertFalse(sim.pixel(x: 64, y: top + 3))
        XCTAssertFalse(sim.pixel(x: 0, y: top + 3))
        XCTAssertEqual((2...125).filter { sim.pixel(x: $0, y: top + 3) }.count, 62)
        assertText(sim, row: 0, "Title")
    }

    func testOnlyChangedPagesAreSentAndTheFiguresPerUpdate() throws {
        let sim = SSD1306Simulator()
        let oled = SSD1306(transport: sim)
        let full = try oled.update(DisplayFrame(rows: rows, progress: 0.5), now: 0)
        // Init (1 + 25 commands), window (7), 1 024 pixels + control byte.
        XCTAssertEqual(full, .sent(bytes: 26 + 7 + 1025, writes: 3))
        sim.resetCounters()
        let tick = try oled.update(DisplayFrame(rows: rows, progress: 0.51), now: 1)
        XCTAssertEqual(tick, .sent(bytes: 7 + 2, writes: 2)) // one column of one page
        XCTAssertEqual(sim.writes, [[0x00, 0x21, 64, 64, 0x22, 7, 7], [0x40, 0x7E]])
        sim.resetCounters()
        var changed = rows
        changed[3] = "▶ 1:24 / 4:56"
        let clock = try oled.update(DisplayFrame(rows: changed, progress: 0.51), now: 2)
        XCTAssertEqual(clock, .sent(bytes: 7 + 1 + 5, writes: 2)) // the columns of one character that differ
        XCTAssertEqual(try oled.update(DisplayFrame(rows: changed, progress: 0.51), now: 3), .unchanged)
        assertText(sim, row: 3, "▶ 1:24 / 4:56")
        print("I2C bytes per update, SSD1306: full frame 1032 (+26 init), progress-bar tick 9, one character 13")
    }

    func testSH1106UsesPageAddressingWithTheColumnOffset() throws {
        let sim = SSD1306Simulator(controller: .sh1106)
        sim.scramble(seed: 7)
        let oled = SSD1306(transport: sim, controller: .sh1106)
        guard case .sent(let bytes, _) = try oled.update(DisplayFrame(rows: rows, progress: 0.25), now: 0) else { return XCTFail() }
        XCTAssertEqual(sim.unsupported, [])
        XCTAssertTrue(sim.chargePump)
        for (row, text) in rows.enumerated().dropLast() { assertText(sim, row: row, text.padding(21)) }
        // RAM columns 0, 1, 130, 131 are outside the picture and keep their garbage.
        let pixels = OLEDRenderer.render(DisplayFrame(rows: rows, progress: 0.25))
        XCTAssertEqual(sim.ram[3 * 132 + 2 + 1], pixels[3 * 128 + 1])
        XCTAssertEqual(sim.writes[1], [0x00, 0xB0, 0x02, 0x10])
        sim.resetCounters()
        let tick = try oled.update(DisplayFrame(rows: rows, progress: 0.26), now: 1)
        XCTAssertEqual(tick, .sent(bytes: 4 + 2, writes: 2))
        let column: UInt8 = 33 + 2
        XCTAssertEqual(sim.writes[0], [0x00, 0xB7, column & 0x0F, 0x10 | column >> 4])
        print("I2C bytes per update, SH1106: full frame \(bytes - 24) (+24 init), progress-bar tick 6")
    }

    func testContrastAndErrors() throws {
        let sim = SSD1306Simulator(address: 0x3D)
        let wrong = SSD1306(transport: sim)
        XCTAssertThrowsError(try wrong.update(DisplayFrame(rows: ["x"]), now: 0)) { error in
            XCTAssertEqual((error as? DeviceError)?.kind, .noDevice)
            XCTAssertTrue("\(error)".contains("0x3c"), "\(error)")
        }
        let oled = SSD1306(transport: sim, address: 0x3D)
        _ = try oled.update(DisplayFrame(rows: ["x"]), now: 0)
        try oled.setContrast(0x10)
        XCTAssertEqual(sim.contrast, 0x10)
    }

    func testFontCoversLatin1AndTheGlyphs() {
        for scalar in (0x20...0x7E).map({ Unicode.Scalar($0)! }) { XCTAssertTrue(Font6x8.has(Character(scalar)), "\(scalar)") }
        for character in "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ¡¿£°±µ«»" {
            XCTAssertTrue(Font6x8.has(character), "\(character)")
        }
        for glyph in PanelGlyph.allCases { XCTAssertTrue(Font6x8.has(glyph.rawValue), "\(glyph)") }
        XCTAssertNotEqual(Font6x8.rows(for: "é"), Font6x8.rows(for: "e"))
        XCTAssertNotEqual(Font6x8.rows(for: "Ä"), Font6x8.rows(for: "A"))
        XCTAssertEqual(Font6x8.rows(for: "ł"), Font6x8.rows(for: "l"))
        XCTAssertEqual(Font6x8.rows(for: "漢"), Font6x8.rows(for: "?"))
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

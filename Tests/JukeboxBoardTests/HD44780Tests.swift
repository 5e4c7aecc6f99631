// SPDX-License-Identifier: MIT
@testable import JukeboxBoard
import JukeboxCore
import XCTest

/// The HD44780 driver through the simulator: what a person would see, and the bytes it costs.
final class HD44780Tests: XCTestCase {
    /// A 16x2 display on the simulated PCF8574 backpack at its usual address (0x27) and wiring.
    func standard16x2() -> (HD44780Simulator, HD44780) {
        let sim = HD44780Simulator()
        return (sim, HD44780(transport: sim))
    }

    /// Runs updates until the panel is initialised, jumping the clock to each requested time.
    @discardableResult
    func drive(_ lcd: HD44780, _ frame: DisplayFrame, now: inout Double) throws -> PanelUpdate {
        for _ in 0..<10 {
            let result = try lcd.update(frame, now: now)
            guard case .initialising(let at) = result else { return result }
            XCTAssertGreaterThan(at, now)
            now = at
        }
        XCTFail("never finished initialising")
        return .unchanged
    }

    func testSixteenByTwoShowsTheRowsWithTheGlyphAndAOneCellChangeCostsEightBytes() throws {
        let (sim, lcd) = standard16x2()
        var now = 100.0
        let first = DisplayFrame(rows: ["Morning Bell    ", "▶ 1:23 / 4:56   "])
        try drive(lcd, first, now: &now)
        XCTAssertEqual(sim.rows, ["Morning Bell    ", "▶ 1:23 / 4:56   "])
        XCTAssertTrue(sim.fourBit)
        XCTAssertTrue(sim.displayOn)
        XCTAssertFalse(sim.cursorOn)
        XCTAssertTrue(sim.backlightOn)
        XCTAssertEqual(sim.glyph(slot: 0), HD44780Glyph.glyph(.play).bitmap)

        // A full redraw of both rows, measured on its own.
        sim.resetCounters()
        lcd.invalidate()
        now += 1
        let initAndFull = sim.writes.count
        XCTAssertEqual(initAndFull, 0)
        try drive(lcd, DisplayFrame(rows: ["Evening Bell    ", "⏸ 2:34 / 4:56   "]), now: &now)
        // After the clear only the non-blank cells go out: glyph load, row 0, row 1.
        XCTAssertEqual(sim.writes.suffix(3).map(\.count), [36, (1 + 12) * 4, (1 + 13) * 4])
        XCTAssertEqual(sim.rows, ["Evening Bell    ", "⏸ 2:34 / 4:56   "])

        sim.resetCounters()
        let tick = try lcd.update(DisplayFrame(rows: ["Evening Bell    ", "⏸ 2:35 / 4:56   "]), now: now + 1)
        XCTAssertEqual(tick, .sent(bytes: 8, writes: 1))
        XCTAssertEqual(sim.bytesReceived, 8)
        XCTAssertEqual(sim.rows, ["Evening Bell    ", "⏸ 2:35 / 4:56   "])
        XCTAssertEqual(try lcd.update(DisplayFrame(rows: ["Evening Bell    ", "⏸ 2:35 / 4:56   "]), now: now + 2), .unchanged)

        // Every cell different: two rows of address + 16 characters, 4 expander bytes each.
        _ = try lcd.update(DisplayFrame(rows: [String(repeating: "A", count: 16), String(repeating: "A", count: 16)]), now: now + 3)
        let full = try lcd.update(DisplayFrame(rows: [String(repeating: "B", count: 16), String(repeating: "B", count: 16)]), now: now + 4)
        XCTAssertEqual(full, .sent(bytes: 136, writes: 2))
        print("I2C bytes per update, HD44780 16x2: full redraw 136 in 2 writes (+36 per newly loaded CGRAM glyph), one-cell change 8")
    }

    func testInitialisationWaitsAreReturnedNotSlept() throws {
        let (sim, lcd) = standard16x2()
        // Every wait the driver does itself, recorded instead of timed (a wall-clock bound fails
        // on a loaded or emulated machine and proves nothing about sleeping).
        var paused: [UInt32] = []
        lcd.pause = { paused.append($0) }
        let frame = DisplayFrame(rows: ["Hi"])
        guard case .initialising(let powerUp) = try lcd.update(frame, now: 10) else { return XCTFail() }
        XCTAssertEqual(powerUp - 10, 0.050, accuracy: 1e-9) // > 40 ms after power-on
        XCTAssertEqual(sim.writes.count, 1) // backlight on, all other pins low
        XCTAssertEqual(try lcd.update(frame, now: 10.04), .initialising(retryAt: powerUp))
        XCTAssertEqual(sim.writes.count, 1)
        guard case .initialising(let second) = try lcd.update(frame, now: powerUp) else { return XCTFail() }
        XCTAssertEqual(second - powerUp, 0.005, accuracy: 1e-9) // > 4.1 ms after the first nibble 3
        XCTAssertFalse(sim.fourBit)
        XCTAssertEqual(paused, [])
        guard case .initialising(let cleared) = try lcd.update(frame, now: second) else { return XCTFail() }
        XCTAssertEqual(cleared - second, 0.002, accuracy: 1e-9) // > 1.52 ms after clear
        XCTAssertEqual(paused, [150], "only the 150 µs between the nibbles is waited in the call")
        XCTAssertTrue(sim.fourBit)
        guard case .sent = try lcd.update(frame, now: cleared) else { return XCTFail("not drawn") }
        XCTAssertEqual(sim.rows, ["Hi              ", "                "])
        XCTAssertEqual(paused, [150])
    }

    func testTransliterationForRomA00() throws {
        let (sim, lcd) = standard16x2()
        var now = 0.0
        try drive(lcd, DisplayFrame(rows: ["Ärger é è à ç ß\\", "~ñöü° Straße…“x”"]), now: &now)
        XCTAssertEqual(sim.rows, ["Arger e e a c β\\", "-ñöü° Straβe.\"x\""])
        XCTAssertEqual(sim.ddram[14], 0xE2) // ß → β
        XCTAssertEqual(sim.ddram[0x40 + 2], 0xEF) // ö
        XCTAssertEqual(HD44780ROM.nearest("\\"), UInt8(ascii: "/"))
        XCTAssertEqual(HD44780ROM.nearest("Ł"), UInt8(ascii: "L"))
        XCTAssertEqual(HD44780ROM.nearest("漢"), UInt8(ascii: "?"))
        // A decomposed é (e + U+0301) is one character and becomes e.
        XCTAssertEqual(HD44780ROM.nearest("e\u{301}"), UInt8(ascii: "e"))
    }

    func testMoreThanEightGlyphsInAFrameShowTheirFallbacks() throws {
        let (sim, lcd) = standard16x2()
        var now = 0.0
        try drive(lcd, DisplayFrame(rows: ["▶⏸■🔀🔁🔂🔈♪▁▂█▌", ""]), now: &now)
        XCTAssertEqual(sim.rows[0], "▶⏸■🔀🔁🔂🔈♪__█|    ")
        // The next frame reuses loaded slots and loads only what is new.
        sim.resetCounters()
        guard case .sent = try lcd.update(DisplayFrame(rows: ["▶ ▁▂▃", ""]), now: now + 1) else { return XCTFail() }
        XCTAssertEqual(sim.rows[0], "▶ ▁▂▃           ")
        XCTAssertEqual(sim.writes.first?.count, 3 * 36) // three new glyphs in one write
    }

    func testGarbageFromALostNibbleIsRepairedByThePeriodicReinit() throws {
        let (sim, lcd) = standard16x2()
        var now = 0.0
        let frame = DisplayFrame(rows: ["Morning Bell", "1:23"])
        try drive(lcd, frame, now: &now)
        // A glitch latches one stray nibble: from now on every byte is split wrongly.
        let pins = HD44780Pins.standard
        sim.glitch([pins.byte(nibble: 0x5, rs: true, e: true, backlight: true), pins.byte(nibble: 0x5, rs: true, e: false, backlight: true)])
        _ = try lcd.update(DisplayFrame(rows: ["Morning Bell", "1:24"]), now: now + 1)
        XCTAssertNotEqual(sim.rows, ["Morning Bell    ", "1:24            "])
        now += 60
        try drive(lcd, DisplayFrame(rows: ["Morning Bell", "1:25"]), now: &now)
        XCTAssertEqual(sim.rows, ["Morning Bell    ", "1:25            "])
    }

    func testWriteErrorThrowsAndTheNextUpdateInitialisesAgain() throws {
        let (sim, lcd) = standard16x2()
        var now = 0.0
        try drive(lcd, DisplayFrame(rows: ["One"]), now: &now)
        sim.failure = DeviceError(kind: .noDevice, message: "no device answers at 0x27")
        XCTAssertThrowsError(try lcd.update(DisplayFrame(rows: ["Two"]), now: now + 1))
        sim.failure = nil
        now += 2
        XCTAssertEqual(try lcd.update(DisplayFrame(rows: ["Two"]), now: now), .initialising(retryAt: now + 0.05))
        try drive(lcd, DisplayFrame(rows: ["Two"]), now: &now)
        XCTAssertEqual(sim.rows, ["Two             ", "                "])
    }

    func testTwentyByFourRowsLandAtTheirDdramAddresses() throws {
        let sim = HD44780Simulator(geometry: .lcd20x4)
        let lcd = HD44780(transport: sim, geometry: .lcd20x4)
        var now = 0.0
        let rows = ["Row zero is here ok.", "Row one, second line", "Row two: third line!", "Row three: the last."]
        try drive(lcd, DisplayFrame(rows: rows), now: &now)
        XCTAssertEqual(sim.rows, rows)
        XCTAssertEqual(sim.ddram[0x00], UInt8(ascii: "R"))
        XCTAssertEqual(sim.ddram[0x40 + 4], UInt8(ascii: "o"))
        XCTAssertEqual(sim.ddram[0x14 + 4], UInt8(ascii: "t"))
        XCTAssertEqual(sim.ddram[0x54 + 4], UInt8(ascii: "t"))
    }

    func testAnotherPinMappingAndItsSpec() throws {
        XCTAssertEqual(HD44780Pins(spec: "rs=6,rw=5,e=4,bl=7,d4=0,d5=1,d6=2,d7=3"), .mjkdz)
        XCTAssertEqual(HD44780Pins(spec: "standard"), .standard)
        XCTAssertNil(HD44780Pins(spec: "rs=0,rw=0,e=2,bl=3,d4=4,d5=5,d6=6,d7=7"))
        XCTAssertNil(HD44780Pins(spec: "rs=0"))
        XCTAssertEqual(HD44780Pins(spec: "rs=0,rw=1,e=2,bl=!3,d4=4,d5=5,d6=6,d7=7")?.backlightActiveHigh, false)
        let sim = HD44780Simulator(address: 0x3F, pins: .mjkdz)
        let lcd = HD44780(transport: sim, address: 0x3F, pins: .mjkdz)
        var now = 0.0
        try drive(lcd, DisplayFrame(rows: ["mjkdz backpack", "ok"]), now: &now)
        XCTAssertEqual(sim.rows, ["mjkdz backpack  ", "ok              "])
        try lcd.setBacklight(false)
        XCTAssertFalse(sim.backlightOn)
    }
}

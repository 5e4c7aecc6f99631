// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import XCTest

/// A USB card reader that types ids: recorded `struct input_event` bytes written into a pipe,
/// read by `InputDevices` with the same `read()` it uses for /dev/input/event*, assembled by
/// `CardKeys`.
final class CardKeysTests: XCTestCase {

    private let evSyn: UInt16 = 0, evKey: UInt16 = 1, evMsc: UInt16 = 4
    private let enter: UInt16 = 28, kpEnter: UInt16 = 96, leftShift: UInt16 = 42
    /// KEY_0 … KEY_9.
    private let digit: [Character: UInt16] = ["1": 2, "2": 3, "3": 4, "4": 5, "5": 6, "6": 7, "7": 8, "8": 9, "9": 10, "0": 11]

    private func record(_ type: UInt16, _ code: UInt16, _ value: Int32, _ time: Double) -> [UInt8] {
        InputEventParser.encode(type: type, code: code, value: value, time: time)
    }

    /// One key as a HID keyboard sends it: the scan code (EV_MSC), the press, a report; the
    /// release, a report.
    private func tap(_ code: UInt16, at t: Double) -> [UInt8] {
        record(evMsc, 4, 0x70000 + Int32(code), t) + record(evKey, code, 1, t) + record(evSyn, 0, 0, t)
            + record(evMsc, 4, 0x70000 + Int32(code), t + 0.002) + record(evKey, code, 0, t + 0.002) + record(evSyn, 0, 0, t + 0.002)
    }

    /// `text` typed from `start`, 8 ms a key (what readers do), then Enter; returns the bytes and
    /// the time of the Enter.
    private func typed(_ text: String, from start: Double, enter code: UInt16? = 28) -> (bytes: [UInt8], enter: Double) {
        var bytes: [UInt8] = []
        var t = start
        for c in text {
            bytes += tap(digit[c]!, at: t)
            t += 0.008
        }
        if let code { bytes += tap(code, at: t) }
        return (bytes, t)
    }

    private struct Reader {
        let devices = InputDevices([.name("RFID Reader")])
        let writer: Int32
        var keys = CardKeys()

        init() {
            var ends: [Int32] = [-1, -1]
            XCTAssertEqual(pipe(&ends), 0)
            devices.adopt(fd: ends[0], path: "/dev/input/event9", name: "Sycreader RFID Technology Co., Ltd SYC ID&IC USB Reader")
            writer = ends[1]
        }

        /// What the bytes made, times rounded to the record's microseconds (`microseconds` rounds the
        /// expectations the same way).
        mutating func feed(_ bytes: [UInt8]) -> [CardKeys.Output] {
            XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) }, bytes.count)
            return microseconds(devices.read().keys.flatMap { keys.feed($0) })
        }
    }

    func testAnIdTypedWithEnterIsOneCardAtTheTimeOfTheEnter() {
        var reader = Reader()
        defer { close(reader.writer) }
        let (bytes, at) = typed("0012345678", from: 100)
        XCTAssertEqual(reader.feed(bytes), microseconds([.card("0012345678", at: at)]))
        XCTAssertEqual(at, 100.08, accuracy: 1e-9)
        // Enter alone, and releases alone, make nothing.
        XCTAssertEqual(reader.feed(tap(enter, at: 101)), [])
    }

    func testKeypadDigitsHexLettersWithShiftAndKeypadEnter() {
        var reader = Reader()
        defer { close(reader.writer) }
        // 0 4 Shift+A 3 Shift+B 2 C(no shift) 1 on the keypad, KPENTER. The layout is not read:
        // KEY_A is 30 whatever the console's keymap makes of it.
        let keys: [(UInt16, Bool)] = [(82, false), (75, false), (30, true), (81, false), (48, true), (80, false), (46, false), (79, false)]
        var bytes: [UInt8] = []
        var t = 5.0
        for (code, shifted) in keys {
            if shifted { bytes += record(evKey, leftShift, 1, t) + record(evSyn, 0, 0, t) }
            bytes += tap(code, at: t + 0.001)
            if shifted { bytes += record(evKey, leftShift, 0, t + 0.004) + record(evSyn, 0, 0, t + 0.004) }
            t += 0.008
        }
        bytes += tap(kpEnter, at: t)
        XCTAssertEqual(reader.feed(bytes), microseconds([.card("04A3B2C1", at: t)]))
    }

    func testAutorepeatOfAHeldKeyTypesNothingMore() {
        var reader = Reader()
        defer { close(reader.writer) }
        // "1" held long enough for the kernel's autorepeat (value 2), then "2", Enter.
        let bytes = record(evKey, 2, 1, 7) + record(evSyn, 0, 0, 7)
            + record(evKey, 2, 2, 7.25) + record(evSyn, 0, 0, 7.25) + record(evKey, 2, 2, 7.283) + record(evSyn, 0, 0, 7.283)
            + record(evKey, 2, 0, 7.3) + record(evSyn, 0, 0, 7.3)
            + tap(3, at: 7.31) + tap(enter, at: 7.32)
        XCTAssertEqual(reader.feed(bytes), microseconds([.card("12", at: 7.32)]))
    }

    func testATornIdIsDroppedAndTheNextReadStandsAlone() {
        var reader = Reader()
        defer { close(reader.writer) }
        // The card was pulled away after five digits: no Enter. 0.8 s later a whole read.
        let torn = typed("00123", from: 10, enter: nil)
        XCTAssertEqual(reader.feed(torn.bytes), [])
        let whole = typed("0012345678", from: 10.8)
        XCTAssertEqual(reader.feed(whole.bytes), microseconds([
            .refused("dropped 5 keys without Enter (a pause of more than 0.5 s)"),
            .card("0012345678", at: whole.enter),
        ]))
    }

    func testALongGarbageStringIsRefusedWholeAndTheNextIdIsRead() {
        var reader = Reader()
        defer { close(reader.writer) }
        let long = typed(String(repeating: "9", count: 40), from: 20)
        XCTAssertEqual(reader.feed(long.bytes), [.refused("an id longer than 32 characters")])
        let exact = typed(String(repeating: "1", count: 32), from: 21)
        XCTAssertEqual(reader.feed(exact.bytes), microseconds([.card(String(repeating: "1", count: 32), at: exact.enter)]))
        // A key that is no digit or hex letter (KEY_Q, a keyboard, not a reader) spoils the id.
        XCTAssertEqual(reader.feed(tap(2, at: 22) + tap(16, at: 22.01) + tap(3, at: 22.02) + tap(enter, at: 22.03)),
                       [.refused("key 16 is not a digit or a hex letter")])
        let after = typed("42", from: 23)
        XCTAssertEqual(reader.feed(after.bytes), microseconds([.card("42", at: after.enter)]))
    }

    func testRecordsSplitAcrossReadsStillMakeTheId() {
        var reader = Reader()
        defer { close(reader.writer) }
        let (bytes, at) = typed("0099", from: 30)
        var outputs: [CardKeys.Output] = []
        // Cut at odd places, mid-record included.
        var start = 0
        for cut in [7, 50, 51, 200, bytes.count] {
            outputs += reader.feed(Array(bytes[start..<cut]))
            start = cut
        }
        XCTAssertEqual(outputs, microseconds([.card("0099", at: at)]))
    }
}

/// Times rounded to microseconds, as records carry them.
private func microseconds(_ outputs: [CardKeys.Output]) -> [CardKeys.Output] {
    outputs.map {
        if case .card(let id, let at) = $0 { return .card(id, at: (at * 1e6).rounded() / 1e6) }
        return $0
    }
}

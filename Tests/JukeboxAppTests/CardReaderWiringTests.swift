// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxApp
@testable import JukeboxBoard
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import XCTest

/// A keyboard-style card reader through the loop: evdev records on a pipe adopted as the reader's
/// device → `CardReaderSource` → `Event.cardRead` → the core; unplugged and plugged in again.
final class CardReaderWiringTests: XCTestCase {
    private let evSyn: UInt16 = 0, evKey: UInt16 = 1
    private let digit: [Character: UInt16] = ["1": 2, "2": 3, "3": 4, "4": 5, "5": 6, "6": 7, "7": 8, "8": 9, "9": 10, "0": 11]

    private func typed(_ text: String, from start: Double, enter: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        for (i, code) in (text.map { digit[$0]! } + (enter ? [28] : [])).enumerated() {
            let t = start + Double(i) * 0.008
            for value: Int32 in [1, 0] {
                bytes += InputEventParser.encode(type: evKey, code: code, value: value, time: t + (value == 0 ? 0.002 : 0))
                bytes += InputEventParser.encode(type: evSyn, code: 0, value: 0, time: t + (value == 0 ? 0.002 : 0))
            }
        }
        return bytes
    }

    /// A pipe adopted as the reader's device; returns the write end.
    private func plug(_ devices: InputDevices) -> Int32 {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        devices.adopt(fd: ends[0], path: "/dev/input/by-id/usb-reader-event-kbd", name: "RFID Reader")
        return ends[1]
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, bytes.count)
    }

    func testIdsReachTheCoreAndAReplugStartsClean() {
        let devices = InputDevices([.path("/dev/input/by-id/usb-reader-event-kbd")], grab: true)
        let source = CardReaderSource(devices: devices, log: Log(level: .error))
        XCTAssertTrue(source.needsMaintenance, "no reader yet: looked for once a second")
        var writer = plug(devices)
        XCTAssertFalse(source.needsMaintenance)
        let clock = ManualClock()
        let runtime = Runtime(state: State(), audio: RecordingAudio(), store: nil, status: RecordingStatus(),
                              log: Log(level: .error), sources: [source], clock: clock.read)
        runtime.start(initial: [.cardsLoaded(CardMap(["42": .command(.volumeDown)]))])

        write(writer, typed("0012345678", from: 50))
        XCTAssertTrue(runtime.step(wait: false))
        XCTAssertEqual(runtime.state.cards.lastUnknown, "0012345678")
        XCTAssertEqual(runtime.state.message, "new card 0012345678")
        XCTAssertEqual(runtime.state.cards.lastReadAt, 50.08, accuracy: 1e-6, "the kernel's time of the Enter")

        write(writer, typed("42", from: 52))
        XCTAssertTrue(runtime.step(wait: false))
        XCTAssertEqual(runtime.state.volume, 95)

        // Unplugged in the middle of an id: the reader is closed and looked for again.
        write(writer, typed("99", from: 54, enter: false))
        close(writer)
        XCTAssertTrue(runtime.step(wait: false))
        XCTAssertEqual(source.fds, [])
        XCTAssertTrue(source.needsMaintenance)
        // Plugged in again (what `rescan` does when the device is back): the torn "99" is gone.
        writer = plug(devices)
        defer { close(writer) }
        write(writer, typed("42", from: 54.1))
        XCTAssertTrue(runtime.step(wait: false))
        XCTAssertEqual(runtime.state.cards.lastReadID, "42")
        XCTAssertEqual(runtime.state.volume, 90, "42 again, 2 s after the last read of it: a new swipe")
        XCTAssertEqual(runtime.state.cards.lastUnknown, "0012345678", "no 9942 was read")
    }
}

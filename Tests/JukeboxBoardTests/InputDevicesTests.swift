// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import JukeboxCore
import XCTest

/// Recorded `struct input_event` bytes written into a pipe that `InputDevices` reads with the same
/// `read()` it uses for /dev/input/event*.
final class InputDevicesTests: XCTestCase {
    private let evSyn: UInt16 = 0, evKey: UInt16 = 1, evRel: UInt16 = 2, evMsc: UInt16 = 4, evLed: UInt16 = 17

    private func record(_ type: UInt16, _ code: UInt16, _ value: Int32, _ time: Double) -> [UInt8] {
        InputEventParser.encode(type: type, code: code, value: value, time: time)
    }

    private func syn(_ time: Double) -> [UInt8] { record(evSyn, 0, 0, time) }

    /// Devices reading a pipe; returns the write end.
    private func piped(_ devices: InputDevices, name: String = "Test Remote") -> Int32 {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        devices.adopt(fd: ends[0], path: "/dev/input/event7", name: name)
        return ends[1]
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, bytes.count)
    }

    func testAUSBKeyboardsMediaKeyPressRepeatAndRelease() {
        let devices = InputDevices([.name("Test Remote")])
        let writer = piped(devices)
        defer { close(writer) }
        // What a USB keyboard's consumer-control device sends: the HID usage (EV_MSC), the key,
        // SYN_REPORT; autorepeat after 250 ms, every 33 ms.
        write(writer, record(evMsc, 4, 0xc00cd, 100.25) + record(evKey, 164, 1, 100.25) + syn(100.25)
              + record(evKey, 164, 2, 100.5) + syn(100.5) + record(evKey, 164, 2, 100.533) + syn(100.533)
              + record(evMsc, 4, 0xc00cd, 100.6) + record(evKey, 164, 0, 100.6) + syn(100.6))
        let batch = devices.read()
        XCTAssertEqual(batch.lost, [])
        XCTAssertEqual(batch.keys.map(\.code), [164, 164, 164, 164])
        XCTAssertEqual(batch.keys.map(\.value), [1, 2, 2, 0])
        let times = batch.keys.map(\.time)
        for (got, want) in zip(times, [100.25, 100.5, 100.533, 100.6]) { XCTAssertEqual(got, want, accuracy: 1e-6) }
        XCTAssertEqual(devices.read(), InputBatch(), "nothing is read twice, nothing blocks")
    }

    func testPartialRecordsWaitForTheirRest() {
        let devices = InputDevices([.name("Test Remote")])
        let writer = piped(devices)
        defer { close(writer) }
        let bytes = record(evKey, 163, 1, 5) + syn(5) + record(evKey, 163, 0, 5.1) + syn(5.1)
        let size = InputEventParser.recordSize
        write(writer, Array(bytes[0..<10]))
        XCTAssertEqual(devices.read().keys, [])
        write(writer, Array(bytes[10..<(size + 3)]))
        XCTAssertEqual(devices.read().keys, [InputKeyEvent(code: 163, value: 1, time: 5)])
        write(writer, Array(bytes[(size + 3)..<(3 * size - 1)]))
        XCTAssertEqual(devices.read().keys, [])
        write(writer, Array(bytes[(3 * size - 1)...]))
        let last = devices.read().keys
        XCTAssertEqual(last.map(\.code), [163])
        XCTAssertEqual(last.map(\.value), [0])
    }

    func testEventsOtherThanKeysAreIgnored() {
        let devices = InputDevices([.name("Test Remote")])
        let writer = piped(devices)
        defer { close(writer) }
        write(writer, record(evRel, 0, 5, 1) + record(evRel, 8, -1, 1) + syn(1) + record(evLed, 0, 1, 1.1) + syn(1.1)
              + record(evMsc, 4, 0x1e, 1.2) + record(evKey, 115, 1, 1.2) + syn(1.2))
        XCTAssertEqual(devices.read().keys, [InputKeyEvent(code: MediaKey.volumeUp, value: 1, time: 1.2)])
    }

    func testAfterSynDroppedEverythingUntilTheNextReportIsDiscarded() {
        let devices = InputDevices([.name("Test Remote")])
        let writer = piped(devices)
        defer { close(writer) }
        write(writer, record(evKey, 165, 1, 2) + syn(2)
              + record(evSyn, 3, 0, 2.1)                       // SYN_DROPPED: the kernel's buffer overflowed
              + record(evKey, 165, 0, 2.2) + record(evKey, 166, 1, 2.2) + syn(2.2)
              + record(evKey, 166, 0, 2.3) + syn(2.3))
        XCTAssertEqual(devices.read().keys.map { [$0.code, $0.value] }, [[165, 1], [166, 0]])
    }

    func testADeviceThatGoesAwayIsClosedAndReported() {
        let devices = InputDevices([.name("Test Remote")])
        let writer = piped(devices, name: "Test Remote AVRCP")
        XCTAssertEqual(devices.fds.count, 1)
        XCTAssertEqual(devices.missing, [])
        write(writer, record(evKey, 200, 1, 9) + syn(9))
        close(writer)
        let batch = devices.read()
        XCTAssertEqual(batch.keys.map(\.code), [200], "what came before the loss is delivered")
        XCTAssertEqual(batch.lost.map(\.path), ["/dev/input/event7"])
        XCTAssertEqual(batch.lost.map(\.name), ["Test Remote AVRCP"])
        XCTAssertNotNil(batch.lost.first?.error)
        XCTAssertEqual(devices.fds, [])
        XCTAssertEqual(devices.missing, [.name("Test Remote")])
        XCTAssertEqual(devices.read(), InputBatch())
    }

    func testAMissingDeviceNameSaysWhatIsThere() {
        let dir = NSTemporaryDirectory() + "jukebox-input-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertThrowsError(try InputDevices.open([.name("Flirc")], directory: dir)) { error in
            XCTAssertEqual(error as? DeviceError, DeviceError(kind: .notFound,
                message: "no input device named like 'Flirc' in \(dir); devices here: none", errno: ENOENT))
        }
        XCTAssertThrowsError(try InputDevices.open([.path(dir + "/event3")], directory: dir)) { error in
            XCTAssertEqual((error as? DeviceError)?.kind, .notFound)
            XCTAssertEqual((error as? DeviceError)?.message, "\(dir)/event3: no such input device; devices here: none")
        }
        XCTAssertThrowsError(try InputDevices.open([.anyWithMediaKeys], directory: dir)) { error in
            XCTAssertEqual((error as? DeviceError)?.message, "no input device with media keys in \(dir); devices here: none")
        }
        // A file that is not an input device: listed with its error, not matched.
        _ = FileManager.default.createFile(atPath: dir + "/event0", contents: Data())
        XCTAssertEqual(InputDevices.list(directory: dir).map(\.path), [dir + "/event0"])
        XCTAssertNotNil(InputDevices.list(directory: dir).first?.error)
        XCTAssertThrowsError(try InputDevices.open([.path(dir + "/event0")], directory: dir)) { error in
            XCTAssertEqual((error as? DeviceError)?.message.hasPrefix("\(dir)/event0: not an input event device"), true)
        }
        // Tolerant use: nothing there yet, a rescan on a timer opens it later.
        let later = InputDevices([.name("Flirc")], directory: dir)
        XCTAssertEqual(later.rescan(), [])
        XCTAssertEqual(later.missing, [.name("Flirc")])
        XCTAssertEqual(later.fds, [])
    }

    func testListingWithNoDevicesIsEmpty() {
        XCTAssertEqual(InputDevices.list(directory: "/nonexistent/input"), [])
        _ = InputDevices.list() // this machine's /dev/input: whatever is there, no crash
    }

    func testMediaKeyCodes() {
        XCTAssertEqual(MediaKey.all, [164, 207, 200, 201, 166, 163, 165, 115, 114, 208, 168, 113])
        XCTAssertEqual(InputEventParser.recordSize, MemoryLayout<Int>.size == 8 ? 24 : 16)
    }
}

// SPDX-License-Identifier: MIT
@testable import JukeboxBoard
import XCTest

/// The PN532 driver through its simulator on the I2C path: frames, ACK, status byte, checksums,
/// cards placed, held, swiped, removed, two at once, torn away, a chip absent or noisy.
final class PN532Tests: XCTestCase {
    func testFramesAndChecksumsAsTheUserManualGivesThem() {
        // UM0701-02 §7.2: GetFirmwareVersion is 00 00 FF 02 FE D4 02 2A 00.
        XCTAssertEqual(PN532.frame([0xD4, 0x02]), [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD4, 0x02, 0x2A, 0x00])
    }

    func testStartLooksAndEveryUIDLength() throws {
        let sim = PN532Simulator()
        sim.busyReads = 3
        let chip = PN532(sim)
        try chip.start()
        XCTAssertEqual(chip.firmware, [0x32, 0x01, 0x06])
        XCTAssertTrue(sim.configured)
        XCTAssertEqual(sim.commands, [0x02, 0x14, 0x32])
        XCTAssertEqual(try chip.look(), .none)
        for uid: [UInt8] in [[1, 2, 3, 4], [4, 1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]] {
            sim.place(uid)
            XCTAssertEqual(try chip.look(), .card(uid))
            XCTAssertEqual(try chip.look(), .card(uid), "held")
            sim.remove(uid)
            XCTAssertEqual(try chip.look(), .none)
        }
    }

    func testTwoCardsListTheFirstAndATornCardIsAFailureThenGone() throws {
        let sim = PN532Simulator()
        let chip = PN532(sim)
        try chip.start()
        sim.place([1, 1, 1, 1])
        sim.place([2, 2, 2, 2])
        XCTAssertEqual(try chip.look(), .card([1, 1, 1, 1]))
        sim.remove([1, 1, 1, 1])
        XCTAssertEqual(try chip.look(), .card([2, 2, 2, 2]))
        sim.remove([2, 2, 2, 2])
        sim.place([4, 1, 2, 3, 4, 5, 6]).tearsAway = true
        guard case .failed(let why) = try chip.look() else { return XCTFail("torn: not a failure") }
        XCTAssertTrue(why.contains("checksum") || why.contains("cut short"), why)
        XCTAssertEqual(try chip.look(), .none)
    }

    func testAbsentHungAndNoisyChipsThrowAndTheWatchRestartsThem() throws {
        XCTAssertThrowsError(try PN532(PN532Simulator(chip: .absent)).start()) { XCTAssertEqual(($0 as? DeviceError)?.kind, .noDevice) }
        XCTAssertThrowsError(try PN532(PN532Simulator(), address: 0x25).start())
        for seed: UInt64 in [3, 99] {
            print("garbage seed \(seed)")
            XCTAssertThrowsError(try PN532(PN532Simulator(chip: .garbage(seed: seed))).start(), "seed \(seed)")
        }
        let slow = PN532Simulator()
        slow.busyReads = 50
        XCTAssertThrowsError(try PN532(slow, readyReads: 10).start()) { XCTAssertTrue(($0 as? DeviceError)?.message.contains("hung") ?? false) }

        let sim = PN532Simulator()
        let watch = CardWatch(PN532(sim), missesToRemove: 2)
        sim.place([0xAA, 0xBB, 0xCC, 0xDD])
        XCTAssertEqual(watch.poll(), [.placed("AABBCCDD")])
        XCTAssertEqual(watch.poll(), [])
        sim.chip = .absent
        XCTAssertEqual(watch.poll().last, .removed("AABBCCDD"))
        XCTAssertEqual(watch.poll(), [])
        sim.chip = .working
        let back = watch.poll()
        XCTAssertEqual(back.count, 2)
        XCTAssertEqual(back.last, .placed("AABBCCDD"))
        sim.remove([0xAA, 0xBB, 0xCC, 0xDD])
        XCTAssertEqual(watch.poll(), [])
        XCTAssertEqual(watch.poll(), [.removed("AABBCCDD")])
    }
}

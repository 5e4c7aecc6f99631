// SPDX-License-Identifier: MIT
@testable import JukeboxBoard
import XCTest

/// The MFRC522 driver through the register-level simulator at the SPI boundary: UIDs of every
/// length, cards held, swiped, removed, two at once, torn away mid-read, a chip absent or noisy.
final class MFRC522Tests: XCTestCase {
    let four: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
    let seven: [UInt8] = [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]
    let ten: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A]

    private func started(_ sim: MFRC522Simulator) throws -> MFRC522 {
        let chip = MFRC522(sim)
        try chip.start()
        XCTAssertEqual(chip.version, 0x92)
        XCTAssertTrue(sim.antennaOn)
        return chip
    }

    func testCRCAMatchesTheStandardsExamples() {
        // ISO/IEC 14443-3 annex B: CRC_A of 00 00 is A0 1E; of 12 34 is 26 CF.
        XCTAssertEqual(ISO14443A.crc([0x00, 0x00]), [0xA0, 0x1E])
        XCTAssertEqual(ISO14443A.crc([0x12, 0x34]), [0x26, 0xCF])
        XCTAssertEqual(ISO14443A.hex([0x04, 0xA1, 0x0F]), "04A10F")
    }

    func testNoCardIsACleanTimeoutAndTheRegistersWereWrittenAsTheDatasheetSays() throws {
        let sim = MFRC522Simulator()
        let chip = try started(sim)
        XCTAssertEqual(try chip.look(), .none)
        XCTAssertEqual(sim.frames, 1, "only the WUPA went out")
        // The WUPA: 0x52 in the FIFO, 7 bits (BitFramingReg 0x07 then 0x87 = StartSend).
        XCTAssertTrue(sim.transfers.contains([0x09 << 1, 0x52]))
        XCTAssertTrue(sim.transfers.contains([0x0D << 1, 0x87]))
    }

    func testFourSevenAndTenByteUIDsThroughEveryCascadeLevel() throws {
        for uid in [four, seven, ten] {
            let sim = MFRC522Simulator()
            let chip = try started(sim)
            sim.place(uid)
            XCTAssertEqual(try chip.look(), .card(uid), "\(uid.count)-byte UID")
            // WUPA, anticollision + select per level, HLTA.
            XCTAssertEqual(sim.frames, 1 + 2 * (uid.count == 4 ? 1 : uid.count == 7 ? 2 : 3) + 1)
            // Held: the halted card is woken and read again at every look.
            XCTAssertEqual(try chip.look(), .card(uid))
            sim.remove(uid)
            XCTAssertEqual(try chip.look(), .none)
        }
    }

    func testTwoCardsAtOnceAreToldApartAndTheSameOneWinsEachLook() throws {
        let sim = MFRC522Simulator()
        let chip = try started(sim)
        // They first differ in bit 0 of byte 1 (0xAD vs 0xAC), then the higher bit wins.
        let other: [UInt8] = [0xDE, 0xAC, 0xBE, 0xEF]
        sim.place(other)
        sim.place(four)
        XCTAssertEqual(try chip.look(), .card(four))
        XCTAssertEqual(try chip.look(), .card(four))
        sim.remove(four)
        XCTAssertEqual(try chip.look(), .card(other))
        // A 4-byte and a 7-byte card: they collide in the first byte (0xDE vs the cascade tag 0x88).
        sim.place(seven)
        let seen = try chip.look()
        XCTAssertTrue(seen == .card(seven) || seen == .card(other), "\(seen)")
        XCTAssertEqual(try chip.look(), seen)
    }

    func testManyCollisionsInOneLevelResolveBitByBit() throws {
        let sim = MFRC522Simulator()
        let chip = try started(sim)
        let cards: [[UInt8]] = [[0x00, 0x00, 0x00, 0x01], [0x00, 0x00, 0x00, 0x02], [0x80, 0x00, 0x00, 0x00], [0x7F, 0xFF, 0xFF, 0xFF]]
        for uid in cards { sim.place(uid) }
        var seen: [[UInt8]] = []
        for _ in cards {
            guard case .card(let uid) = try chip.look() else { return XCTFail("no card") }
            seen.append(uid)
            sim.remove(uid)
        }
        XCTAssertEqual(Set(seen.map(ISO14443A.hex)), Set(cards.map(ISO14443A.hex)))
        XCTAssertEqual(try chip.look(), .none)
    }

    func testCardsThatCollideOnlyAtTheSecondOrThirdCascadeLevel() throws {
        let pairs: [([UInt8], [UInt8])] = [
            ([0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66], [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x67]),
            ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 5, 6, 0x87, 8, 9, 10]),
        ]
        for (a, b) in pairs {
            let sim = MFRC522Simulator()
            let chip = try started(sim)
            sim.place(a)
            sim.place(b)
            guard case .card(let first) = try chip.look() else { return XCTFail("no card") }
            XCTAssertTrue(first == a || first == b)
            sim.remove(first)
            XCTAssertEqual(try chip.look(), .card(first == a ? b : a))
        }
    }

    func testRandomFieldsOfUpToFourCardsAreReadOneByOne() throws {
        var seed = ProcessInfo.processInfo.environment["JUKEBOX_MFRC522_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("MFRC522Tests random seed \(seed) (JUKEBOX_MFRC522_SEED=\(seed) replays it)")
        func next() -> UInt64 { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return seed }
        for round in 0..<200 {
            let sim = MFRC522Simulator()
            let chip = try started(sim)
            var placed: Set<String> = []
            for _ in 0..<(1 + Int(next() % 4)) {
                let length = [4, 7, 10][Int(next() % 3)]
                // Mostly shared prefixes, so collisions fall late and at every level.
                var uid = (0..<length).map { _ in UInt8(truncatingIfNeeded: next() % 4 == 0 ? next() : 0x5A) }
                // ISO/IEC 14443-3 gives no card the cascade tag as the first UID byte of its last
                // cascade level (uid0 of a 4-byte UID, uid3 of a 7-byte one, uid6 of a 10-byte one):
                // such a card would answer that level as one with a level more does, and their SAKs
                // would collide (seed 12800442788426622087: 5A5A5A885A5A5A beside a 10-byte UID).
                if uid[0] == ISO14443A.cascadeTag { uid[0] = 0x08 }
                if uid[length - 4] == ISO14443A.cascadeTag { uid[length - 4] = 0x08 }
                guard !placed.contains(ISO14443A.hex(uid)) else { continue }
                placed.insert(ISO14443A.hex(uid))
                sim.place(uid)
            }
            var seen: Set<String> = []
            var last = try chip.look()
            while case .card(let uid) = last {
                XCTAssertTrue(placed.contains(ISO14443A.hex(uid)), "round \(round): \(ISO14443A.hex(uid)) was never placed")
                seen.insert(ISO14443A.hex(uid))
                sim.remove(uid)
                if seen.count > placed.count { break }
                last = try chip.look()
            }
            XCTAssertEqual(seen, placed, "round \(round), the look after the last card: \(last)")
        }
    }

    func testACardTornAwayMidReadFailsCleanlyThenIsGone() throws {
        // Torn after each number of answered frames: during ATQA, anticollision, SAK at each level.
        for uid in [four, seven] {
            for answered in 0..<(uid.count == 4 ? 3 : 5) {
                let sim = MFRC522Simulator()
                let chip = try started(sim)
                sim.place(uid).framesLeft = answered
                guard case .failed(let why) = try chip.look() else { return XCTFail("torn after \(answered): not a failure") }
                XCTAssertFalse(why.isEmpty)
                XCTAssertEqual(try chip.look(), .none, "torn after \(answered): \(why)")
            }
        }
    }

    func testAbsentChipAndGarbageAreRefusedAtStartAndALostChipIsNoticedAtTheNextLook() throws {
        for fill: UInt8 in [0x00, 0xFF] {
            let chip = MFRC522(MFRC522Simulator(chip: .absent(fill: fill)))
            XCTAssertThrowsError(try chip.start()) { XCTAssertEqual(($0 as? DeviceError)?.kind, .noDevice) }
            XCTAssertThrowsError(try chip.look())
        }
        for seed: UInt64 in [1, 42, 0xDEADBEEF] {
            print("garbage seed \(seed)")
            let chip = MFRC522(MFRC522Simulator(chip: .garbage(seed: seed)))
            XCTAssertThrowsError(try chip.start(), "seed \(seed)")
        }
        let sim = MFRC522Simulator()
        let chip = try started(sim)
        sim.place(four)
        XCTAssertEqual(try chip.look(), .card(four))
        sim.chip = .garbage(seed: 7)
        XCTAssertThrowsError(try chip.look()) { XCTAssertEqual(($0 as? DeviceError)?.kind, .noDevice) }
        sim.chip = .absent(fill: 0xFF)
        XCTAssertThrowsError(try chip.look())
        sim.failure = DeviceError(kind: .failed, message: "gone")
        XCTAssertThrowsError(try chip.look())
    }

    func testAnOldVersionChipStillWorksAndAHungChipIsAnErrorNotAHang() throws {
        let sim = MFRC522Simulator(chip: .working(version: 0x88))
        let chip = MFRC522(sim)
        try chip.start()
        XCTAssertEqual(chip.version, 0x88)
        sim.place(four)
        XCTAssertEqual(try chip.look(), .card(four))
        // A chip whose ComIrqReg never shows an end: the wait is bounded.
        let hung = HungChip()
        let driver = MFRC522(hung)
        try driver.start()
        XCTAssertThrowsError(try driver.look()) { XCTAssertTrue(($0 as? DeviceError)?.message.contains("hung") ?? false) }
        XCTAssertEqual(hung.irqReads, MFRC522.maxIrqReads)
    }

    /// Answers registers from a simulator but reads ComIrqReg as 0 forever.
    final class HungChip: SPITransport {
        let sim = MFRC522Simulator()
        var irqReads = 0
        func transfer(_ bytes: [UInt8]) throws(DeviceError) -> [UInt8] {
            if bytes == [0x80 | 0x04 << 1, 0] { irqReads += 1; return [0, 0] }
            return try sim.transfer(bytes)
        }
    }
}

/// Placements and removals from looks, and the watch that restarts a lost chip.
final class CardWatchTests: XCTestCase {
    func testPresenceNeedsMissesInARowAndASecondCardReplacesTheFirst() {
        var p = CardPresence(missesToRemove: 3)
        XCTAssertEqual(p.feed(.none), [])
        XCTAssertEqual(p.feed(.card([1, 2, 3, 4])), [.placed("01020304")])
        XCTAssertEqual(p.feed(.card([1, 2, 3, 4])), [])
        XCTAssertEqual(p.feed(.none), [])
        XCTAssertEqual(p.feed(.failed("CRC")), [])
        XCTAssertEqual(p.feed(.card([1, 2, 3, 4])), [], "two misses then seen again: still there")
        XCTAssertEqual(p.feed(.card([9, 9, 9, 9])), [.removed("01020304"), .placed("09090909")])
        XCTAssertEqual(p.feed(.none), [])
        XCTAssertEqual(p.feed(.none), [])
        XCTAssertEqual(p.feed(.none), [.removed("09090909")])
        XCTAssertEqual(p.feed(.none), [])
        XCTAssertNil(p.present)
    }

    func testSwipeHoldRemoveAndALostChipThroughTheSimulator() {
        let sim = MFRC522Simulator()
        let watch = CardWatch(MFRC522(sim), missesToRemove: 2)
        XCTAssertEqual(watch.poll(), [])
        // A swipe: seen at one look only.
        sim.place([0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(watch.poll(), [.placed("DEADBEEF")])
        sim.remove([0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(watch.poll(), [])
        XCTAssertEqual(watch.poll(), [.removed("DEADBEEF")])
        // Held for many looks: one placement.
        sim.place([0x04, 1, 2, 3, 4, 5, 6])
        XCTAssertEqual(watch.poll(), [.placed("04010203040506")])
        for _ in 0..<20 { XCTAssertEqual(watch.poll(), []) }
        // Torn away mid-read: a failure reported once, then the removal.
        sim.remove([0x04, 1, 2, 3, 4, 5, 6])
        sim.place([0x04, 1, 2, 3, 4, 5, 6]).framesLeft = 2
        let torn = watch.poll()
        XCTAssertEqual(torn.count, 1)
        guard case .problem(let why) = torn.first else { return XCTFail("\(torn)") }
        XCTAssertTrue(why.hasPrefix("card read failed"), why)
        XCTAssertEqual(watch.poll(), [.removed("04010203040506")])
        // The chip goes away with a card on it: reported once, the card counts as removed; it
        // comes back: restarted, and the card is placed again.
        sim.place([0xDE, 0xAD, 0xBE, 0xEF])
        XCTAssertEqual(watch.poll(), [.placed("DEADBEEF")])
        sim.chip = .absent(fill: 0)
        let lost = watch.poll()
        XCTAssertEqual(lost.count, 2)
        XCTAssertEqual(lost.last, .removed("DEADBEEF"))
        XCTAssertEqual(watch.poll(), [], "the same problem is not reported again")
        sim.chip = .working(version: 0x92)
        let back = watch.poll()
        XCTAssertEqual(back.count, 2)
        guard case .recovered = back.first else { return XCTFail("\(back)") }
        XCTAssertEqual(back.last, .placed("DEADBEEF"))
    }
}

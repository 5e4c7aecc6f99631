// SPDX-License-Identifier: MIT

/// What one look for a card found.
public enum CardLook: Equatable, Sendable {
    /// Nothing answered (a clean timeout): no card in the field.
    case none
    /// A card was selected: its UID (4, 7 or 10 bytes).
    case card([UInt8])
    /// Something answered but no UID came of it (a card torn away mid-read, a CRC or framing
    /// error, a collision that could not be resolved): why, for the log and `probe rfid`.
    case failed(String)
}

/// ISO/IEC 14443-3 type A helpers shared by the MFRC522 driver and its simulator.
public enum ISO14443A {
    /// REQA, WUPA (7-bit short frames), HLTA, and the SEL codes of cascade levels 1–3.
    public static let reqa: UInt8 = 0x26, wupa: UInt8 = 0x52, hlta: UInt8 = 0x50
    /// See `reqa`.
    public static let sel: [UInt8] = [0x93, 0x95, 0x97]
    /// The cascade tag that opens a level frame when the UID goes on at the next level.
    public static let cascadeTag: UInt8 = 0x88

    /// CRC_A (ISO/IEC 14443-3 annex B: x^16 + x^12 + x^5 + 1, preset 0x6363), low byte first.
    public static func crc(_ data: [UInt8]) -> [UInt8] {
        var crc: UInt16 = 0x6363
        for byte in data {
            var ch = byte ^ UInt8(truncatingIfNeeded: crc)
            ch ^= ch << 4
            crc = (crc >> 8) ^ (UInt16(ch) << 8) ^ (UInt16(ch) << 3) ^ (UInt16(ch) >> 4)
        }
        return [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8)]
    }

    /// The UID in upper-case hex, as the cards map spells it.
    public static func hex(_ uid: [UInt8]) -> String {
        uid.map { b in
            let digits = String(b, radix: 16, uppercase: true)
            return digits.count < 2 ? "0" + digits : digits
        }.joined()
    }
}

/// The MFRC522 (RC522 boards) over SPI: register access, the chip's Transceive command, and a
/// type A card's UID by WUPA / anticollision / select through cascade levels 1–3 (4-, 7- and
/// 10-byte UIDs). CRC_A is computed here, not by the chip's coprocessor (fewer register round
/// trips). Every wait is bounded by the chip's own timer (about 5 ms per frame), so a look takes
/// a few ms; a chip that never signals anything is an error after `maxIrqReads` register reads,
/// never a hang. Not thread-safe: one owner (the reader's thread).
public final class MFRC522 {
    /// Registers used (datasheet section 9).
    enum Reg: UInt8 {
        case command = 0x01, comIrq = 0x04, divIrq = 0x05, error = 0x06, status2 = 0x08, fifoData = 0x09
        case fifoLevel = 0x0A, control = 0x0C, bitFraming = 0x0D, coll = 0x0E, mode = 0x11
        case txMode = 0x12, rxMode = 0x13, txControl = 0x14, txASK = 0x15
        case tMode = 0x2A, tPrescaler = 0x2B, tReloadH = 0x2C, tReloadL = 0x2D, version = 0x37
    }
    /// Commands (CommandReg).
    enum Cmd: UInt8 { case idle = 0x00, transceive = 0x0C, softReset = 0x0F }

    /// VersionReg values of chips that work: MFRC522 1.0 / 2.0, FM17522 clones and the 0x12
    /// counterfeits sold on many boards.
    public static let knownVersions: Set<UInt8> = [0x88, 0x90, 0x91, 0x92, 0xB2, 0x12]
    /// Register reads spent waiting for one frame's end before the chip counts as hung (its
    /// timer ends every frame within about 5 ms; one read takes 20–100 µs).
    public static let maxIrqReads = 2000

    private let spi: any SPITransport
    /// VersionReg as read by `start()`; nil before.
    public private(set) var version: UInt8?

    /// A driver over `spi` (an `SPIDevice` or `MFRC522Simulator`); nothing is sent until `start()`.
    public init(_ spi: any SPITransport) {
        self.spi = spi
    }

    /// Resets the chip (its VersionReg then in `version`) and sets it up for type A at 106 kbit/s with the antenna on. Throws
    /// `.noDevice` when the version register reads as no known chip (nothing wired: 0x00 or
    /// 0xFF; garbage) and `.failed` when a register does not keep what was written.
    public func start() throws(DeviceError) {
        version = nil
        try write(.command, Cmd.softReset.rawValue)
        // The reset takes ~40 µs after the oscillator starts; PowerDown clears when it is done.
        var settled = false
        for _ in 0..<100 {
            if try read(.command) & 0x10 == 0 { settled = true; break }
        }
        let found = try read(.version)
        guard settled, Self.knownVersions.contains(found) else {
            throw DeviceError(kind: .noDevice, message: "no MFRC522 answers (VersionReg reads 0x\(I2CErrno.hex(found)); check wiring: SDA=CE0, SCK, MOSI, MISO, 3.3 V)")
        }
        // Timer: TAuto (starts at the end of each transmission), prescaler 0xA9 → 40 kHz, reload
        // 200 → 5 ms: far beyond any type A answer (≈ 0.1 ms), short enough to look 10× a second.
        try write(.tMode, 0x80)
        try write(.tPrescaler, 0xA9)
        try write(.tReloadH, 0x00)
        try write(.tReloadL, 0xC8)
        guard try read(.tReloadL) == 0xC8, try read(.tPrescaler) == 0xA9 else {
            throw DeviceError(kind: .failed, message: "MFRC522 does not keep register values (garbage on MISO? check wiring and the 3.3 V supply)")
        }
        try write(.txMode, 0x00)
        try write(.rxMode, 0x00)
        try write(.txASK, 0x40)        // 100 % ASK
        try write(.mode, 0x3D)         // CRC preset 0x6363 (ISO 14443-3)
        try write(.coll, 0x00)         // ValuesAfterColl = 0: bits after a collision read as 0
        let tx = try read(.txControl)
        try write(.txControl, tx | 0x03)  // antenna (TX1, TX2) on
        version = found
    }

    /// Looks once for a card: WUPA (which also wakes a card this driver halted at the previous
    /// look, so a card lying on the reader is read at every look), anticollision and select per
    /// cascade level, HLTA. Two cards at once: the one with the higher bit at each collision is
    /// selected. Throws (`DeviceError`) only for the chip itself: it stopped answering, or answers
    /// garbage (VersionReg is checked first); the caller restarts it.
    public func look() throws(DeviceError) -> CardLook {
        guard let version else { throw DeviceError(kind: .failed, message: "MFRC522 not started") }
        let now = try read(.version)
        guard now == version else {
            throw DeviceError(kind: .noDevice, message: "MFRC522 stopped answering (VersionReg reads 0x\(I2CErrno.hex(now)))")
        }
        switch try transceive([ISO14443A.wupa], txLastBits: 7) {
        case .timeout: return .none
        case .failed(let why): return .failed("ATQA: " + why)
        case .frame(let atqa, let lastBits) where atqa.count != 2 || lastBits != 0:
            return .failed("ATQA: \(atqa.count) bytes (a card torn away?)")
        case .frame, .collision:
            break  // two cards answer ATQA at once; anticollision tells them apart
        }
        var uid: [UInt8] = []
        for level in 0..<3 {
            let sel = ISO14443A.sel[level]
            let frame: [UInt8]
            switch try anticollision(sel) {
            case .success(let f): frame = f
            case .failure(let why): return .failed("cascade level \(level + 1): " + why.message)
            }
            guard frame[0] ^ frame[1] ^ frame[2] ^ frame[3] == frame[4] else {
                return .failed("cascade level \(level + 1): BCC does not match")
            }
            let select = [sel, 0x70] + frame
            let sak: UInt8
            switch try transceive(select + ISO14443A.crc(select), txLastBits: 0) {
            case .timeout: return .failed("cascade level \(level + 1): no SAK (card gone)")
            case .failed(let why): return .failed("cascade level \(level + 1): SAK: " + why)
            case .collision: return .failed("cascade level \(level + 1): collision on SAK")
            case .frame(let answer, let lastBits):
                guard answer.count == 3, lastBits == 0 else {
                    return .failed("cascade level \(level + 1): SAK of \(answer.count) bytes (a card torn away?)")
                }
                guard ISO14443A.crc([answer[0]]) == Array(answer[1...2]) else {
                    return .failed("cascade level \(level + 1): SAK CRC error")
                }
                sak = answer[0]
            }
            if sak & 0x04 != 0 {
                guard frame[0] == ISO14443A.cascadeTag else {
                    return .failed("cascade level \(level + 1): UID incomplete without a cascade tag")
                }
                uid += frame[1...3]
                continue
            }
            uid += frame[0...3]
            // HLTA: the card answers nothing (a timeout is success) and sleeps until the next WUPA.
            let halt = [ISO14443A.hlta, 0x00]
            _ = try transceive(halt + ISO14443A.crc(halt), txLastBits: 0)
            return .card(uid)
        }
        return .failed("UID longer than three cascade levels")
    }

    /// The 5 bytes (UID part or cascade tag, and BCC) of one cascade level, resolving collisions
    /// bit by bit: each collision fixes the bit at its position to 1 and asks again with one more
    /// known bit (at most 32 rounds).
    private func anticollision(_ sel: UInt8) throws(DeviceError) -> Result<[UInt8], LookError> {
        var known = [UInt8](repeating: 0, count: 5)
        var knownBits = 0
        for _ in 0...32 {
            let fullBytes = knownBits / 8, extra = knownBits % 8
            let sent = fullBytes + (extra > 0 ? 1 : 0)
            let nvb = UInt8((2 + fullBytes) << 4 | extra)
            let result = try transceive([sel, nvb] + known[0..<sent], txLastBits: extra, rxAlign: extra)
            let data: [UInt8], lastBits: Int
            var collision: Int?
            switch result {
            case .timeout: return .failure(.init("no answer to anticollision (card gone)"))
            case .failed(let why): return .failure(.init(why))
            case .frame(let d, let l): data = d; lastBits = l
            case .collision(let d, let l, let position):
                guard let position, position > knownBits, position <= 32 else {
                    return .failure(.init("collision at an invalid position"))
                }
                data = d; lastBits = l; collision = position
            }
            // The first byte received shares its low `extra` bits with the last byte sent.
            let lowMask = UInt8((1 << extra) - 1)
            for (i, byte) in data.enumerated() where fullBytes + i < 5 {
                known[fullBytes + i] = i == 0 ? (known[fullBytes] & lowMask) | (byte & ~lowMask) : byte
            }
            if let position = collision {
                knownBits = position
                known[(position - 1) / 8] |= 1 << ((position - 1) % 8)
                continue
            }
            let received = data.count * 8 - extra - (lastBits == 0 ? 0 : 8 - lastBits)
            guard received == 40 - knownBits else {
                return .failure(.init("\(received) bits instead of \(40 - knownBits) (a card torn away?)"))
            }
            return .success(known)
        }
        return .failure(.init("collisions did not resolve"))
    }

    struct LookError: Error { var message: String; init(_ m: String) { message = m } }

    enum Transceived {
        /// Bytes from the FIFO and how many bits of the last one are valid (0 = all 8).
        case frame([UInt8], lastBits: Int)
        /// The same, with a bit collision at `position` (1-based, in the cascade level's 40 bits
        /// as the chip's CollReg gives it; nil when CollPosNotValid).
        case collision([UInt8], lastBits: Int, position: Int?)
        /// The chip's timer ran out: nothing answered.
        case timeout
        /// A protocol, parity or buffer error.
        case failed(String)
    }

    /// One Transceive: `frame` into the FIFO, the last byte's `txLastBits` (0 = 8) sent, received
    /// bits stored from bit `rxAlign` of the first byte.
    func transceive(_ frame: [UInt8], txLastBits: Int, rxAlign: Int = 0) throws(DeviceError) -> Transceived {
        let framing = UInt8(rxAlign << 4 | txLastBits)
        try write(.command, Cmd.idle.rawValue)
        try write(.comIrq, 0x7F)            // clear every request bit
        try write(.fifoLevel, 0x80)         // flush the FIFO
        try write(.fifoData, frame)
        try write(.bitFraming, framing)
        try write(.command, Cmd.transceive.rawValue)
        try write(.bitFraming, 0x80 | framing)  // StartSend
        var irq: UInt8 = 0
        var ended = false
        for _ in 0..<Self.maxIrqReads {
            irq = try read(.comIrq)
            if irq & 0x30 != 0 { ended = true; break }     // RxIRq, IdleIRq
            if irq & 0x01 != 0 { return .timeout }          // TimerIRq
        }
        guard ended else {
            throw DeviceError(kind: .failed, message: "MFRC522 hung: no end of frame after \(Self.maxIrqReads) register reads (ComIrqReg 0x\(I2CErrno.hex(irq)))")
        }
        let error = try read(.error)
        if error & 0x13 != 0 {
            let what = error & 0x10 != 0 ? "FIFO overflow" : error & 0x02 != 0 ? "parity error" : "protocol error"
            return .failed(what)
        }
        let count = Int(try read(.fifoLevel) & 0x7F)
        let data = try readFIFO(count)
        let lastBits = Int(try read(.control) & 0x07)
        if error & 0x08 != 0 {
            let coll = try read(.coll)
            let position: Int? = coll & 0x20 != 0 ? nil : (coll & 0x1F == 0 ? 32 : Int(coll & 0x1F))
            return .collision(data, lastBits: lastBits, position: position)
        }
        return .frame(data, lastBits: lastBits)
    }

    // SPI framing (datasheet 8.1.2): address byte = register << 1, bit 7 set to read; the byte
    // clocked in during the address is meaningless; a write may go on with more data bytes (the
    // FIFO takes them all); a read goes on with the next address.
    func read(_ reg: Reg) throws(DeviceError) -> UInt8 {
        try spi.transfer([0x80 | reg.rawValue << 1, 0])[1]
    }

    func write(_ reg: Reg, _ value: UInt8) throws(DeviceError) {
        _ = try spi.transfer([reg.rawValue << 1, value])
    }

    func write(_ reg: Reg, _ values: [UInt8]) throws(DeviceError) {
        _ = try spi.transfer([reg.rawValue << 1] + values)
    }

    private func readFIFO(_ count: Int) throws(DeviceError) -> [UInt8] {
        guard count > 0 else { return [] }
        let address = 0x80 | Reg.fifoData.rawValue << 1
        return Array(try spi.transfer([UInt8](repeating: address, count: count) + [0]).dropFirst())
    }
}

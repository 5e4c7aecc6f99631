// SPDX-License-Identifier: MIT

/// An MFRC522 and the type A cards in its field, decoding the exact SPI bytes written to it:
/// register reads and writes (burst writes into the FIFO, burst reads of the FIFO), SoftReset,
/// Idle and Transceive with StartSend, BitFramingReg's TxLastBits and RxAlign, ComIrqReg's set and
/// clear, FIFOLevelReg's flush, ErrorReg, CollReg and ControlReg's RxLastBits. A Transceive is
/// answered at once (timing is not modelled): by the cards' ISO/IEC 14443-3 state machines (IDLE,
/// READY per cascade level, ACTIVE, HALT; REQA, WUPA, anticollision with partial bytes, SELECT
/// with CRC_A, HLTA), bit by bit, so two cards collide where their bits differ; silence sets
/// TimerIRq. CollReg's CollPos counts bits of the cascade level's 40-bit frame (known bits sent
/// plus bits received), as the widely used MFRC522 driver reads it.
public final class MFRC522Simulator: SPITransport {
    /// A card in the field.
    public final class Card {
        /// Its UID: 4, 7 or 10 bytes.
        public let uid: [UInt8]
        /// When set, the card answers this many more frames, then sends only the first half of
        /// the next answer and leaves the field (torn away mid-read).
        public var framesLeft: Int?
        fileprivate var state: State = .idle
        fileprivate enum State: Equatable { case idle, ready(level: Int), active, halt }

        /// A card with `uid`.
        public init(uid: [UInt8]) {
            precondition([4, 7, 10].contains(uid.count), "UIDs are 4, 7 or 10 bytes")
            self.uid = uid
        }

        var levels: Int { uid.count == 4 ? 1 : uid.count == 7 ? 2 : 3 }

        /// The 5 bytes of cascade level `level` (0-based): cascade tag + 3 UID bytes, or the
        /// last 4, then the BCC.
        func levelFrame(_ level: Int) -> [UInt8] {
            let part: [UInt8]
            if level < levels - 1 {
                part = [ISO14443A.cascadeTag] + uid[(level * 3)..<(level * 3 + 3)]
            } else {
                part = Array(uid[(level * 3)..<(level * 3 + 4)])
            }
            return part + [part[0] ^ part[1] ^ part[2] ^ part[3]]
        }
    }

    /// What the chip does on the bus.
    public enum Chip: Equatable {
        /// Answers as an MFRC522 with this VersionReg.
        case working(version: UInt8)
        /// Nothing wired: every byte clocked in is `fill` (0x00 with a pull-down, 0xFF floating).
        case absent(fill: UInt8)
        /// Noise on MISO: pseudo-random bytes from `seed`.
        case garbage(seed: UInt64)
    }

    /// How the chip answers; switch it at any time.
    public var chip: Chip {
        didSet { if case .garbage(let seed) = chip { noise = seed | 1 } }
    }
    /// The cards in the field, in the order they were placed.
    public private(set) var cards: [Card] = []
    /// Transfers received (each as sent).
    public private(set) var transfers: [[UInt8]] = []
    /// Transceive commands run (frames sent to the cards).
    public private(set) var frames = 0
    /// When set, transfers throw it (the spidev node went away).
    public var failure: DeviceError?

    private var regs = [UInt8](repeating: 0, count: 64)
    private var fifo: [UInt8] = []
    private var noise: UInt64 = 1

    /// A chip with no card in its field, just powered (its registers at their reset values).
    public init(chip: Chip = .working(version: 0x92)) {
        self.chip = chip
        if case .garbage(let seed) = chip { noise = seed | 1 }
        reset()
    }

    /// Puts a card in the field (it starts IDLE) and returns it.
    @discardableResult
    public func place(_ uid: [UInt8]) -> Card {
        let card = Card(uid: uid)
        cards.append(card)
        return card
    }

    /// Takes the card with `uid` out of the field.
    public func remove(_ uid: [UInt8]) {
        cards.removeAll { $0.uid == uid }
    }

    /// Whether the antenna drivers are on (TxControlReg bits 0–1).
    public var antennaOn: Bool { regs[0x14] & 0x03 == 0x03 }

    public func transfer(_ bytes: [UInt8]) throws(DeviceError) -> [UInt8] {
        if let failure { throw failure }
        transfers.append(bytes)
        switch chip {
        case .absent(let fill): return [UInt8](repeating: fill, count: bytes.count)
        case .garbage:
            return bytes.map { _ in
                noise ^= noise << 13; noise ^= noise >> 7; noise ^= noise << 17
                return UInt8(truncatingIfNeeded: noise >> 24)
            }
        case .working: break
        }
        guard let first = bytes.first else { return [] }
        var out: [UInt8] = [0]
        if first & 0x80 != 0 {
            // A read: each further byte clocked out is the next address (the last is 0, ignored).
            var address = Int(first >> 1 & 0x3F)
            for next in bytes.dropFirst() {
                out.append(readRegister(address))
                address = Int(next >> 1 & 0x3F)
            }
        } else {
            let address = Int(first >> 1 & 0x3F)
            for value in bytes.dropFirst() {
                writeRegister(address, value)
                out.append(0)
            }
        }
        return out
    }

    private func reset() {
        regs = [UInt8](repeating: 0, count: 64)
        regs[0x01] = 0x20   // CommandReg: receiver off, Idle
        regs[0x14] = 0x80   // TxControlReg: antenna off
        regs[0x37] = { if case .working(let v) = chip { return v } else { return 0 } }()
        fifo = []
    }

    private func readRegister(_ address: Int) -> UInt8 {
        switch address {
        case 0x09: return fifo.isEmpty ? 0 : fifo.removeFirst()
        case 0x0A: return UInt8(min(fifo.count, 64))
        default: return regs[address]
        }
    }

    private func writeRegister(_ address: Int, _ value: UInt8) {
        switch address {
        case 0x01:
            regs[0x01] = value & 0x3F
            if value & 0x0F == 0x0F { reset() }
        case 0x04:
            // Set1 (bit 7) sets the marked bits, else clears them.
            if value & 0x80 != 0 { regs[0x04] |= value & 0x7F } else { regs[0x04] &= ~(value & 0x7F) }
        case 0x09: if fifo.count < 64 { fifo.append(value) } else { regs[0x06] |= 0x10 }
        case 0x0A: if value & 0x80 != 0 { fifo = []; regs[0x06] &= ~0x10 }
        case 0x0D:
            regs[0x0D] = value
            if value & 0x80 != 0, regs[0x01] & 0x0F == 0x0C { transceive() }
        case 0x37: break  // read-only
        default: regs[address] = value
        }
    }

    // MARK: the air interface

    private func transceive() {
        frames += 1
        let txLastBits = Int(regs[0x0D] & 0x07), rxAlign = Int(regs[0x0D] >> 4 & 0x07)
        let sent = fifo
        fifo = []
        regs[0x06] = 0
        regs[0x0E] = 0x20
        var bits = Self.bits(sent)
        if txLastBits != 0, !sent.isEmpty { bits.removeLast(8 - txLastBits) }
        var answers: [[Bool]] = []
        var offset = 0  // where the answer starts in the cascade level's frame (for CollPos)
        if antennaOn {
            for card in cards {
                guard var answer = respond(card, to: bits, offset: &offset) else { continue }
                if let left = card.framesLeft {
                    if left == 0 {
                        answer = Array(answer.prefix(answer.count / 2))
                        remove(card.uid)
                    } else {
                        card.framesLeft = left - 1
                    }
                }
                answers.append(answer)
            }
        }
        let length = answers.map(\.count).max() ?? 0
        guard length > 0 else {
            regs[0x04] |= 0x01  // TimerIRq: nothing answered before the timer ran out
            return
        }
        var received: [Bool] = []
        var collision: Int?
        for i in 0..<length {
            let values = answers.compactMap { i < $0.count ? $0[i] : nil }
            if collision == nil, Set(values).count > 1 { collision = i }
            received.append(values.contains(true))
        }
        // Into the FIFO from bit `rxAlign` of the first byte.
        var bytes = [UInt8](repeating: 0, count: (rxAlign + received.count + 7) / 8)
        for (i, bit) in received.enumerated() where bit {
            bytes[(rxAlign + i) / 8] |= 1 << ((rxAlign + i) % 8)
        }
        fifo = bytes
        regs[0x0C] = regs[0x0C] & ~0x07 | UInt8((rxAlign + received.count) % 8)
        if let collision {
            regs[0x06] |= 0x08
            regs[0x0E] = UInt8((offset + collision + 1) % 32)
        }
        regs[0x04] |= 0x30  // RxIRq, IdleIRq
    }

    /// A card's answer to `bits` (nil: silent), moving its state machine.
    private func respond(_ card: Card, to bits: [Bool], offset: inout Int) -> [Bool]? {
        if bits.count == 7 {
            let command = Self.bytes(bits + [false])[0]
            let wakes = command == ISO14443A.wupa ? card.state == .idle || card.state == .halt
                : command == ISO14443A.reqa && card.state == .idle
            guard wakes else {
                if command == ISO14443A.reqa || command == ISO14443A.wupa { card.state = card.state == .halt ? .halt : .idle }
                return nil
            }
            card.state = .ready(level: 0)
            // ATQA: bits 7–6 of the first byte give the UID size; bit 2 the anticollision frame.
            let size: UInt8 = card.levels == 1 ? 0x00 : card.levels == 2 ? 0x40 : 0x80
            return Self.bits([size | 0x04, 0x00])
        }
        guard bits.count >= 16 else { card.state = card.state == .halt ? .halt : .idle; return nil }
        let head = Self.bytes(Array(bits.prefix(16)))
        switch card.state {
        case .ready(let level):
            guard head[0] == ISO14443A.sel[level] else { card.state = .idle; return nil }
            let frame = card.levelFrame(level)
            let frameBits = Self.bits(frame)
            if head[1] == 0x70 {
                let all = Self.bytes(bits)
                guard bits.count == 72, Array(all[2...6]) == frame, Array(all[7...8]) == ISO14443A.crc(Array(all[0...6])) else {
                    return nil  // not this card: it stays READY
                }
                let more = level < card.levels - 1
                card.state = more ? .ready(level: level + 1) : .active
                let sak: UInt8 = more ? 0x04 : card.levels == 1 ? 0x08 : 0x00
                return Self.bits([sak] + ISO14443A.crc([sak]))
            }
            let known = Int(head[1] >> 4) * 8 - 16 + Int(head[1] & 0x0F)
            guard known >= 0, known < 40, bits.count == 16 + known else { card.state = .idle; return nil }
            guard Array(bits[16...]) == Array(frameBits.prefix(known)) else { return nil }
            offset = known
            return Array(frameBits[known...])
        case .active:
            let all = Self.bytes(bits)
            if bits.count == 32, all[0] == ISO14443A.hlta, all[1] == 0, Array(all[2...3]) == ISO14443A.crc([all[0], all[1]]) {
                card.state = .halt
            } else {
                card.state = .idle
            }
            return nil
        case .idle, .halt:
            return nil
        }
    }

    /// LSB first, as type A sends.
    static func bits(_ bytes: [UInt8]) -> [Bool] {
        bytes.flatMap { byte in (0..<8).map { byte & (1 << $0) != 0 } }
    }

    static func bytes(_ bits: [Bool]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
        for (i, bit) in bits.enumerated() where bit { out[i / 8] |= 1 << (i % 8) }
        return out
    }
}

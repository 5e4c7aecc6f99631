// SPDX-License-Identifier: MIT

/// A PN532 on the I2C simulator path, decoding the exact host frames written to it (start code,
/// LEN/LCS, TFI, DCS) and answering as the chip does over I2C: every read starts with the status
/// byte; after a command, an ACK (or a NACK for a frame with a bad checksum), then the response
/// frame once ready (`busyReads` not-ready status reads first). GetFirmwareVersion,
/// SAMConfiguration, RFConfiguration and InListPassiveTarget (type A, 106 kbit/s; with two cards
/// in the field the first placed is listed, as MaxTg = 1 asks); other commands get an error
/// frame. The card protocol under InListPassiveTarget is the chip's own and is not modelled.
public final class PN532Simulator: I2CTransport {
    /// A card in the field.
    public final class Card {
        /// Its UID (4, 7 or 10 bytes).
        public let uid: [UInt8]
        /// When true, the next InListPassiveTarget that finds it answers a frame cut short and
        /// the card leaves the field (torn away mid-read).
        public var tearsAway = false
        init(uid: [UInt8]) { self.uid = uid }
    }

    /// How the chip answers.
    public enum Chip: Equatable {
        case working
        /// Nothing at the address: writes and reads fail with `.noDevice`.
        case absent
        /// Reads return noise from `seed`.
        case garbage(seed: UInt64)
    }

    public let address: UInt8
    /// How it answers; switch it at any time.
    public var chip: Chip { didSet { if case .garbage(let seed) = chip { noise = seed | 1 } } }
    /// Not-ready status reads before each ACK and response.
    public var busyReads = 2
    /// The cards in the field, in the order they were placed.
    public private(set) var cards: [Card] = []
    /// Commands received (their code), in order.
    public private(set) var commands: [UInt8] = []
    /// Whether SAMConfiguration put it in normal mode.
    public private(set) var configured = false

    private var pending: [[UInt8]] = []   // frames to send, the ACK first
    private var busy = 0
    private var noise: UInt64 = 1

    public init(address: UInt8 = 0x24, chip: Chip = .working) {
        self.address = address
        self.chip = chip
        if case .garbage(let seed) = chip { noise = seed | 1 }
    }

    @discardableResult
    public func place(_ uid: [UInt8]) -> Card {
        let card = Card(uid: uid)
        cards.append(card)
        return card
    }

    public func remove(_ uid: [UInt8]) { cards.removeAll { $0.uid == uid } }

    public func write(address: UInt8, bytes: [UInt8]) throws(DeviceError) {
        try answers(address)
        guard case .working = chip else { return }
        // A host frame: 00 00 FF LEN LCS TFI data DCS 00.
        guard bytes.count >= 8, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0xFF, bytes[3] &+ bytes[4] == 0,
              bytes.count >= 5 + Int(bytes[3]) + 1 else { return respond(nack: true) }
        let data = Array(bytes[5..<(5 + Int(bytes[3]))])
        guard data.reduce(UInt8(0), { $0 &+ $1 }) &+ bytes[5 + data.count] == 0, data.count >= 2, data[0] == 0xD4 else {
            return respond(nack: true)
        }
        commands.append(data[1])
        pending = [PN532.ack, answer(data[1], Array(data.dropFirst(2)))]
        busy = busyReads
    }

    public func read(address: UInt8, count: Int) throws(DeviceError) -> [UInt8] {
        try answers(address)
        if case .garbage = chip {
            return (0..<count).map { _ in
                noise ^= noise << 13; noise ^= noise >> 7; noise ^= noise << 17
                return UInt8(truncatingIfNeeded: noise >> 24)
            }
        }
        var out = [UInt8](repeating: 0, count: count)
        guard !pending.isEmpty, busy == 0 else {
            if busy > 0 { busy -= 1 }
            return out
        }
        out[0] = 0x01
        if count > 1 {
            let frame = pending.removeFirst()
            for (i, b) in frame.prefix(count - 1).enumerated() { out[i + 1] = b }
            busy = busyReads
        }
        return out
    }

    private func answers(_ address: UInt8) throws(DeviceError) {
        if chip == .absent || address != self.address {
            throw DeviceError(kind: .noDevice, message: "simulated bus: no device answers at 0x\(I2CErrno.hex(address))")
        }
    }

    private func respond(nack: Bool) {
        pending = [[0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00]]
        busy = busyReads
    }

    private func answer(_ command: UInt8, _ params: [UInt8]) -> [UInt8] {
        switch command {
        case 0x02: return PN532.frame([0xD5, 0x03, 0x32, 0x01, 0x06, 0x07])
        case 0x14:
            configured = params.first == 0x01
            return PN532.frame([0xD5, 0x15])
        case 0x32: return PN532.frame([0xD5, 0x33])
        case 0x4A:
            guard configured, let card = cards.first else { return PN532.frame([0xD5, 0x4B, 0x00]) }
            let size: UInt8 = card.uid.count == 4 ? 0x00 : card.uid.count == 7 ? 0x40 : 0x80
            let sak: UInt8 = card.uid.count == 4 ? 0x08 : 0x00
            let full = PN532.frame([0xD5, 0x4B, 0x01, 0x01, size | 0x04, 0x00, sak, UInt8(card.uid.count)] + card.uid)
            if card.tearsAway {
                remove(card.uid)
                return Array(full.prefix(full.count - 5))
            }
            return full
        default:
            return [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]  // error frame
        }
    }
}

// SPDX-License-Identifier: MIT

/// The PN532 over I2C (address 0x24): its host frames (preamble, start code, LEN and its checksum
/// LCS, TFI 0xD4/0xD5, data, DCS, postamble), the status byte that starts every read (bit 0:
/// ready), the ACK frame after each command, error frames. A look is one InListPassiveTarget
/// (one type A target at 106 kbit/s) with the chip's passive activation retries set to one, so a
/// look with no card answers at once (NbTg = 0) instead of waiting for a card. Waits are bounded
/// by `readyReads` status reads, never a hang. Not thread-safe: one owner (the reader's thread).
public final class PN532: CardLooker {
    /// Commands used.
    enum Cmd: UInt8 { case getFirmwareVersion = 0x02, samConfiguration = 0x14, rfConfiguration = 0x32, inListPassiveTarget = 0x4A }
    /// The ACK frame (after the status byte).
    static let ack: [UInt8] = [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
    /// Bytes read for a response: the status byte and the longest frame a look or start gets
    /// (a target record with a 10-byte UID and an ATS of up to 20 bytes fits; the PN532 pads).
    static let responseLength = 64

    private let bus: any I2CTransport
    /// The 7-bit address (0x24 on every PN532).
    public let address: UInt8
    /// Status reads spent waiting for ready (each ≈ 0.2 ms at 100 kHz) before the chip counts as hung.
    public let readyReads: Int
    /// IC, version, revision as GetFirmwareVersion gave them at `start()`; nil before.
    public private(set) var firmware: [UInt8]?

    /// A driver for the PN532 at `address` on `bus` (an `I2CBus` or `PN532Simulator`).
    public init(_ bus: any I2CTransport, address: UInt8 = 0x24, readyReads: Int = 500) {
        self.bus = bus
        self.address = address
        self.readyReads = readyReads
    }

    /// GetFirmwareVersion (must say IC 0x32), SAMConfiguration (normal mode: the SAM not used),
    /// RFConfiguration MaxRetries (one passive activation per look). Throws `.noDevice` when
    /// nothing acknowledges the address, `.failed` for a chip that answers nonsense.
    public func start() throws(DeviceError) {
        firmware = nil
        let version = try command(.getFirmwareVersion, [])
        guard version.count >= 4, version[0] == 0x32 else {
            throw DeviceError(kind: .noDevice, message: "no PN532 at 0x\(I2CErrno.hex(address)) (firmware answer \(version.map { I2CErrno.hex($0) }.joined(separator: " ")))")
        }
        _ = try command(.samConfiguration, [0x01, 0x14, 0x00])
        _ = try command(.rfConfiguration, [0x05, 0xFF, 0x01, 0x01])
        firmware = Array(version[0..<3])
    }

    /// One InListPassiveTarget. A card torn away mid-read shows as an error frame, a bad
    /// checksum or a target record cut short: `.failed`, not an exception.
    public func look() throws(DeviceError) -> CardLook {
        guard firmware != nil else { throw DeviceError(kind: .failed, message: "PN532 not started") }
        let answer: [UInt8]
        do throws(FrameError) {
            answer = try exchange(.inListPassiveTarget, [0x01, 0x00])
        } catch {
            if case .chip(let e) = error { throw e }
            return .failed(error.text)
        }
        guard let targets = answer.first else { return .failed("empty InListPassiveTarget answer") }
        guard targets > 0 else { return .none }
        // Tg, SENS_RES (2), SEL_RES, NFCIDLength, NFCID1.
        guard answer.count >= 6 else { return .failed("target record of \(answer.count) bytes") }
        let length = Int(answer[5])
        guard [4, 7, 10].contains(length), answer.count >= 6 + length else {
            return .failed("UID of \(length) bytes in a record of \(answer.count)")
        }
        return .card(Array(answer[6..<(6 + length)]))
    }

    enum FrameError: Error {
        case chip(DeviceError)
        case frame(String)
        var text: String {
            switch self {
            case .chip(let e): return e.message
            case .frame(let s): return s
            }
        }
    }

    /// A command whose every failure is the chip's (used while starting).
    private func command(_ cmd: Cmd, _ params: [UInt8]) throws(DeviceError) -> [UInt8] {
        do throws(FrameError) {
            return try exchange(cmd, params)
        } catch {
            switch error {
            case .chip(let e): throw e
            case .frame(let why): throw DeviceError(kind: .failed, message: "PN532 at 0x\(I2CErrno.hex(address)): \(why)")
            }
        }
    }

    /// The host frame for `data` (TFI first).
    static func frame(_ data: [UInt8]) -> [UInt8] {
        let length = UInt8(data.count)
        let sum = data.reduce(UInt8(0)) { $0 &+ $1 }
        return [0x00, 0x00, 0xFF, length, 0 &- length] + data + [0 &- sum, 0x00]
    }

    /// Command out, ACK in, response in; the response's data after TFI and the response code.
    private func exchange(_ cmd: Cmd, _ params: [UInt8]) throws(FrameError) -> [UInt8] {
        do throws(DeviceError) {
            try bus.write(address: address, bytes: Self.frame([0xD4, cmd.rawValue] + params))
            try waitReady()
            let ack = try bus.read(address: address, count: 1 + Self.ack.count)
            guard Array(ack.dropFirst()) == Self.ack else {
                throw DeviceError(kind: .failed, message: "PN532 at 0x\(I2CErrno.hex(address)): no ACK (read \(ack.map { I2CErrno.hex($0) }.joined(separator: " ")))")
            }
            try waitReady()
        } catch {
            throw .chip(error)
        }
        let raw: [UInt8]
        do throws(DeviceError) { raw = try bus.read(address: address, count: Self.responseLength) } catch { throw .chip(error) }
        let f = Array(raw.dropFirst())
        guard f.count >= 6, f[0] == 0, f[1] == 0, f[2] == 0xFF else { throw .frame("no start code in the answer") }
        let length = Int(f[3])
        guard UInt8(length) &+ f[4] == 0 else { throw .frame("length checksum error") }
        if length == 1, f.count >= 7, f[5] == 0x7F { throw .frame("error frame (the card left?)") }
        guard length >= 2, f.count >= 5 + length + 1 else { throw .frame("answer of \(length) bytes cut short") }
        let data = Array(f[5..<(5 + length)])
        guard data.reduce(UInt8(0), { $0 &+ $1 }) &+ f[5 + length] == 0 else { throw .frame("data checksum error") }
        guard data[0] == 0xD5, data[1] == cmd.rawValue + 1 else { throw .frame("answer to another command") }
        return Array(data.dropFirst(2))
    }

    private func waitReady() throws(DeviceError) {
        for _ in 0..<readyReads {
            if try bus.read(address: address, count: 1)[0] & 0x01 != 0 { return }
        }
        throw DeviceError(kind: .failed, message: "PN532 at 0x\(I2CErrno.hex(address)) hung: not ready after \(readyReads) status reads")
    }
}

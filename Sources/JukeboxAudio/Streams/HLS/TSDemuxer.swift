// SPDX-License-Identifier: MIT

/// The audio of an MPEG transport stream (ISO/IEC 13818-1), as HLS segments carry it: PAT → PMT →
/// the first AAC (stream_type 0x0F, ADTS) or MP3 (0x03, 0x04) elementary stream, its PES payloads
/// handed on in order; every other PID (video, timed ID3 metadata, tables) is ignored.
///
/// Hand-written rather than libavformat on purpose: libavformat would map many MB into a box that
/// may only ever play FLAC (issue 29 asks for the RSS of such a box not to grow), while audio-only
/// TS needs only this: 188-byte packets, two tables and the PES header's length. The payload needs
/// no reassembly: ADTS and MP3 frames find their own sync, so PES payloads are passed on as they
/// come (a PES lost in the middle costs the codec one resync). Bounded: it holds at most one
/// packet and one table section; bytes that are not packets are skipped up to the next 0x47 that
/// starts a packet (`resyncs` counts the times). Fuzzed by `TSDemuxerTests`.
public struct TSDemuxer: Sendable {
    /// The audio found, once the PMT named it.
    public enum Audio: Equatable, Sendable {
        /// ADTS AAC (stream_type 0x0F).
        case aac
        /// MPEG-1/2 audio (stream_type 0x03, 0x04).
        case mp3
    }

    static let packetSize = 188
    /// A PSI section is at most 1024 bytes (its 12-bit length, capped at 1021 by the standard).
    static let maxSection = 1024

    /// The audio stream chosen, when the PMT came.
    public private(set) var audio: Audio?
    /// Times bytes that are not a packet were skipped.
    public private(set) var resyncs = 0

    private var carry: [UInt8] = []
    /// The last packet ended where the next begins: a 0x47 there is taken at its word. Out of sync,
    /// a 0x47 counts only with another a packet later (one in 256 random bytes is 0x47).
    private var inSync = true
    private var pmtPID: Int?
    private var audioPID: Int?
    private var section: [UInt8] = []
    private var sectionPID = -1
    /// The PES header of the audio PID is still being read across packets: bytes left to skip.
    private var pesHeaderLeft = 0
    private var pesHeader: [UInt8] = []
    private var inPES = false

    /// A demuxer at the start of a stream.
    public init() {}

    /// Starts again (a discontinuity: a new segment from another encoder may number its PIDs anew).
    public mutating func reset() { self = TSDemuxer() }

    /// Takes the next bytes of the stream; returns the audio elementary stream's bytes they complete.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var data = carry
        data.append(contentsOf: bytes)
        carry = []
        var output: [UInt8] = []
        var offset = 0
        while data.count - offset >= Self.packetSize {
            if data[offset] != 0x47 || !inSync && !nextLooksLikePacket(data, offset) {
                if inSync { resyncs += 1 }
                inSync = false
                offset += 1
                while offset < data.count && data[offset] != 0x47 { offset += 1 }
                continue
            }
            inSync = true
            packet(data[offset..<offset + Self.packetSize], into: &output)
            offset += Self.packetSize
        }
        carry = Array(data[offset...])
        return output
    }

    /// A 0x47 with another 0x47 a packet later (or the data ending before then) starts a packet.
    private func nextLooksLikePacket(_ data: [UInt8], _ offset: Int) -> Bool {
        let next = offset + Self.packetSize
        return next >= data.count || data[next] == 0x47
    }

    private mutating func packet(_ p: ArraySlice<UInt8>, into output: inout [UInt8]) {
        let base = p.startIndex
        let start = p[base + 1] & 0x40 != 0
        let pid = Int(p[base + 1] & 0x1F) << 8 | Int(p[base + 2])
        let control = (p[base + 3] >> 4) & 0x3
        guard control & 0x1 != 0 else { return }  // no payload
        var payload = base + 4
        if control & 0x2 != 0 { payload += 1 + Int(p[base + 4]) }
        guard payload < p.endIndex else { return }
        let body = p[payload...]
        if pid == 0 || pid == pmtPID {
            table(body, pid: pid, start: start)
        } else if pid == audioPID {
            pes(body, start: start, into: &output)
        }
    }

    // MARK: tables

    private mutating func table(_ body: ArraySlice<UInt8>, pid: Int, start: Bool) {
        var bytes = body
        if start {
            let pointer = Int(bytes.first ?? 0)
            bytes = bytes.dropFirst(1 + pointer)
            section = []
            sectionPID = pid
        } else if sectionPID != pid || section.isEmpty {
            return
        }
        section.append(contentsOf: bytes.prefix(Self.maxSection - section.count))
        guard section.count >= 3 else { return }
        let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
        guard section.count >= 3 + length || section.count >= Self.maxSection else { return }
        let whole = Array(section.prefix(min(3 + length, section.count)))
        section = []
        if pid == 0 { readPAT(whole) } else { readPMT(whole) }
    }

    /// The first program's PMT PID (program number 0 is the network PID).
    private mutating func readPAT(_ s: [UInt8]) {
        guard s.count >= 12, s[0] == 0x00 else { return }
        var i = 8
        while i + 4 <= s.count - 4 {
            let program = Int(s[i]) << 8 | Int(s[i + 1])
            let pid = Int(s[i + 2] & 0x1F) << 8 | Int(s[i + 3])
            if program != 0 {
                pmtPID = pid
                return
            }
            i += 4
        }
    }

    /// The first AAC or MP3 elementary stream.
    private mutating func readPMT(_ s: [UInt8]) {
        guard s.count >= 16, s[0] == 0x02, audioPID == nil else { return }
        let programInfo = Int(s[10] & 0x0F) << 8 | Int(s[11])
        var i = 12 + programInfo
        while i + 5 <= s.count - 4 {
            let type = s[i]
            let pid = Int(s[i + 1] & 0x1F) << 8 | Int(s[i + 2])
            let info = Int(s[i + 3] & 0x0F) << 8 | Int(s[i + 4])
            switch type {
            case 0x0F:
                audioPID = pid
                audio = .aac
                return
            case 0x03, 0x04:
                audioPID = pid
                audio = .mp3
                return
            default:
                i += 5 + info
            }
        }
    }

    // MARK: PES

    private mutating func pes(_ body: ArraySlice<UInt8>, start: Bool, into output: inout [UInt8]) {
        var bytes = body
        if start {
            inPES = true
            pesHeader = []
            pesHeaderLeft = 9
        }
        guard inPES else { return }  // joined mid-PES: wait for the next start
        while pesHeaderLeft > 0, let byte = bytes.first {
            pesHeader.append(byte)
            bytes = bytes.dropFirst()
            pesHeaderLeft -= 1
            if pesHeader.count == 9 {
                // 00 00 01, stream id, length (2), flags (2), header data length.
                guard pesHeader[0] == 0, pesHeader[1] == 0, pesHeader[2] == 1 else {
                    inPES = false
                    return
                }
                pesHeaderLeft = Int(pesHeader[8])
            }
        }
        if pesHeaderLeft == 0 { output.append(contentsOf: bytes) }
    }
}

// SPDX-License-Identifier: MIT

/// The audio of an MPEG transport stream (ISO/IEC 13818-1), as HLS segments carry it: PAT → PMT →
/// the first AAC (stream_type 0x0F, ADTS) or MP3 (0x03, 0x04) elementary stream, its PES payloads
/// handed on in order, and the first timed metadata stream's (0x15) ID3 tags kept apart
/// (`takeMetadata`); every other PID (video, tables) is ignored.
///
/// Hand-written rather than libavformat on purpose: libavformat would map many MB into a box that
/// may only ever play FLAC (issue 29 asks for the RSS of such a box not to grow), while audio-only
/// TS needs only this: 188-byte packets, two tables and the PES header's length (`PESReader`).
/// Bounded: it holds at most one packet, one table section and 4 metadata tags of 64 KiB; bytes
/// that are not packets are skipped up to the next 0x47 that starts a packet (`resyncs` counts
/// the times). Fuzzed by `TSDemuxerTests`.
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
    private var audioPES = PESReader()
    /// The timed metadata stream (stream_type 0x15: ID3 tags), when the PMT names one.
    private var metadataPID: Int?
    private var metadataPES = PESReader()
    private var metadata: [UInt8] = []
    private var finishedMetadata: [[UInt8]] = []
    /// Most bytes of one metadata PES kept, and most tags waiting for `takeMetadata`.
    static let maxMetadataBytes = 64 << 10
    static let maxPendingMetadata = 4

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
            // Out of sync, a 0x47 waits for the byte a packet later (so bytes fed in any pieces
            // give the same audio); at the very end of a stream that costs its last packet.
            if data[offset] == 0x47 && !inSync && offset + Self.packetSize >= data.count { break }
            if data[offset] != 0x47 || !inSync && data[offset + Self.packetSize] != 0x47 {
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
            output.append(contentsOf: audioPES.payload(body, start: start))
        } else if pid == metadataPID {
            if start { finishMetadata() }
            let bytes = metadataPES.payload(body, start: start)
            metadata.append(contentsOf: bytes.prefix(Self.maxMetadataBytes - metadata.count))
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

    /// The first AAC or MP3 elementary stream, and the first timed metadata stream.
    private mutating func readPMT(_ s: [UInt8]) {
        guard s.count >= 16, s[0] == 0x02, audioPID == nil else { return }
        let programInfo = Int(s[10] & 0x0F) << 8 | Int(s[11])
        var i = 12 + programInfo
        while i + 5 <= s.count - 4 {
            let type = s[i]
            let pid = Int(s[i + 1] & 0x1F) << 8 | Int(s[i + 2])
            let info = Int(s[i + 3] & 0x0F) << 8 | Int(s[i + 4])
            switch type {
            case 0x0F where audioPID == nil:
                audioPID = pid
                audio = .aac
            case 0x03 where audioPID == nil, 0x04 where audioPID == nil:
                audioPID = pid
                audio = .mp3
            case 0x15 where metadataPID == nil:
                metadataPID = pid
            default:
                break
            }
            i += 5 + info
        }
    }

    /// The timed metadata (ID3 tags) whose PES ended since the last call, in order.
    public mutating func takeMetadata() -> [[UInt8]] {
        defer { finishedMetadata = [] }
        return finishedMetadata
    }

    /// The end of the input so far (a segment's end): a metadata PES held is complete.
    public mutating func flushMetadata() { finishMetadata() }

    private mutating func finishMetadata() {
        if !metadata.isEmpty {
            if finishedMetadata.count >= Self.maxPendingMetadata { finishedMetadata.removeFirst() }
            finishedMetadata.append(metadata)
        }
        metadata = []
    }

}

/// One elementary stream's PES packets: their headers skipped, their payload passed on. The
/// payload needs no reassembly for ADTS and MP3 (their frames find their own sync); a PES joined
/// in its middle is waited out to the next start.
struct PESReader: Sendable {
    /// Bytes of the header still to skip (read across packets).
    private var headerLeft = 0
    private var header: [UInt8] = []
    private var inPES = false
    /// Payload bytes the header's PES_packet_length leaves (nil: 0, unbounded, as video's is).
    private var left: Int?

    /// The payload bytes in a packet's `body`; `start`: the packet starts a PES.
    mutating func payload(_ body: ArraySlice<UInt8>, start: Bool) -> ArraySlice<UInt8> {
        var bytes = body
        if start {
            inPES = true
            header = []
            headerLeft = 9
        }
        guard inPES else { return [] }
        while headerLeft > 0, let byte = bytes.first {
            header.append(byte)
            bytes = bytes.dropFirst()
            headerLeft -= 1
            if header.count == 9 {
                // 00 00 01, stream id, length (2), flags (2), header data length.
                guard header[0] == 0, header[1] == 0, header[2] == 1 else {
                    inPES = false
                    return []
                }
                headerLeft = Int(header[8])
                let length = Int(header[4]) << 8 | Int(header[5])
                left = length == 0 ? nil : max(0, length - 3 - headerLeft)
            }
        }
        guard headerLeft == 0 else { return [] }
        // Past the PES's stated length is stuffing, not payload.
        guard let remaining = left else { return bytes }
        let payload = bytes.prefix(remaining)
        left = remaining - payload.count
        return payload
    }
}

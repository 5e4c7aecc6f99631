// SPDX-License-Identifier: MIT

/// What a fragmented MP4 HLS stream's initialisation section (`EXT-X-MAP`) says about its audio:
/// the sound track's id, its AAC configuration (`moov/trak/mdia/minf/stbl/stsd/mp4a/esds`, read by
/// the same box reader as MP4 files: `MP4Trak`, `MP4AudioTrack.codec`) and the sample size
/// fragments fall back on (`moov/mvex/trex`). Only AAC plays: its access units become ADTS frames
/// (`FMP4Fragment`) for the same AAC codec (libfaad2) as MPEG-TS segments.
public struct FMP4Init: Equatable, Sendable {
    /// The sound track's id (each fragment's `tfhd` names the track its samples belong to).
    public var trackID: UInt32
    /// The AudioSpecificConfig (ISO 14496-3 1.6.2.1).
    public var config: [UInt8]
    /// `trex`'s default sample size (0: none), for fragments that state none.
    public var defaultSampleSize: UInt32
    /// The ADTS header's fixed fields the configuration gives.
    var adts: ADTSFields

    /// The largest init section fetched: a real one is under 1 KiB.
    public static let maxBytes = 1 << 20

    /// Reads an init section; throws with the reason when it holds no AAC track ADTS can carry,
    /// or its boxes are damaged.
    public static func read(_ bytes: [UInt8]) throws(MP4Error) -> FMP4Init {
        let leading: Set<String> = ["ftyp", "moov", "styp", "free", "skip"]
        guard bytes.count >= 8, leading.contains(fourCC(bytes[4..<8])) else { throw MP4Error("not a fragmented MP4 init section") }
        let source = MP4Bytes(bytes)
        let top = try MP4Box.sequence(from: 0, to: source.size, in: source, topLevel: true)
        guard let moov = top.first("moov") else { throw MP4Error("not a fragmented MP4 init section (no 'moov')") }
        let children = try moov.children(in: source)
        var sound: MP4Trak?
        for trak in children where trak.type == "trak" {
            let track = try MP4Trak.read(trak, in: source, withTable: false)
            if track.handler == "soun" {
                sound = track
                break
            }
        }
        guard let sound else { throw MP4Error("no audio track in the fragmented MP4 init section") }
        guard let entry = sound.sampleEntry else { throw MP4Error("damaged init section: the audio track has no sample description") }
        guard case .aac(let config) = try MP4AudioTrack.codec(entry, in: source).codec else {
            throw MP4Error("ALAC in fragmented MP4 HLS segments is not supported (plays: AAC)")
        }
        var defaultSize: UInt32 = 0
        for trex in try children.first("mvex")?.children(in: source) ?? [] where trex.type == "trex" {
            var c = MP4Cursor(try trex.content(in: source, limit: 4096), box: "trex")
            _ = try c.version()
            guard try c.u32() == sound.id else { continue }
            try c.skip(8)  // sample description index, duration
            defaultSize = try c.u32()
        }
        return FMP4Init(trackID: sound.id, config: config, defaultSampleSize: defaultSize, adts: try ADTSFields(config))
    }
}

/// The fixed fields of an ADTS header (ISO 14496-3 1.A.2) for an AudioSpecificConfig: HE-AAC
/// signalled explicitly (object type 5 or 29) is carried as its core (AAC-LC at the core rate),
/// as FFmpeg's ADTS muxer writes it; libfaad2 finds the SBR and PS in the frames (implicit
/// signalling).
struct ADTSFields: Equatable, Sendable {
    /// The object type less one (0 Main, 1 LC, 2 SSR, 3 LTP).
    var profile: UInt8
    var rateIndex: UInt8
    var channels: UInt8

    init(_ config: [UInt8]) throws(MP4Error) {
        var reader = MP4Bits(config)
        func bits(_ n: Int) -> Int? { reader.read(n) }
        func objectType() -> Int? {
            guard let type = bits(5) else { return nil }
            return type == 31 ? bits(6).map { 32 + $0 } : type
        }
        let short = MP4Error("damaged init section: the AAC configuration is cut short")
        guard var type = objectType(), let index = bits(4) else { throw short }
        guard index != 15 else { throw MP4Error("the AAC configuration states its sampling rate outright, which ADTS cannot carry") }
        guard let channels = bits(4) else { throw short }
        if type == 5 || type == 29 {
            // HE-AAC: the extension's rate index (and its explicit rate), then the core's type.
            guard let extensionIndex = bits(4), extensionIndex != 15 || bits(24) != nil, let core = objectType() else { throw short }
            type = core
        }
        guard (1...4).contains(type) else {
            throw MP4Error("AAC object type \(type) is not supported in fragmented MP4 HLS (plays: AAC-LC, HE-AAC v1/v2)")
        }
        guard index <= 12 else { throw MP4Error("damaged init section: AAC sampling rate index \(index)") }
        guard (1...7).contains(channels) else {
            throw MP4Error("AAC channel configuration \(channels) is not supported in fragmented MP4 HLS (plays: 1 to 7)")
        }
        profile = UInt8(type - 1)
        rateIndex = UInt8(index)
        self.channels = UInt8(channels)
    }

    /// The 7-byte header (no CRC, buffer fullness 0x7FF: variable rate) of a frame of `payload` bytes.
    func header(payload: Int) -> [UInt8] {
        let length = payload + 7
        // In typed parts: Swift 6.0.3 gives up on one literal of these expressions.
        let fixed: UInt8 = profile << 6 | rateIndex << 2 | channels >> 2
        let lengthHigh: UInt8 = (channels & 3) << 6 | UInt8(length >> 11 & 3)
        let lengthMiddle = UInt8(length >> 3 & 0xFF)
        let lengthLow: UInt8 = UInt8(length & 7) << 5 | 0x1F
        return [0xFF, 0xF1, fixed, lengthHigh, lengthMiddle, lengthLow, 0xFC]
    }
}

/// A fragmented MP4 media segment's audio: each `moof`'s `traf` for the init section's track,
/// its `trun`s' sample sizes (else `tfhd`'s default, else `trex`'s) cutting the `mdat` into AAC
/// access units, each handed on as one ADTS frame.
///
/// Bounded whatever the segment says: every box is checked against its container (`MP4Box`),
/// at most `maxSamples` samples, each at most an ADTS frame's payload, every run of samples inside
/// one `mdat`, and all the samples together no more bytes than the segment holds (runs that point
/// at the same bytes again cannot multiply it). Fuzzed by the `fmp4` harness.
public enum FMP4Fragment {
    /// Most samples in one segment: a 10 s segment of 48 kHz AAC has 469.
    public static let maxSamples = 1 << 16
    /// The largest access unit an ADTS frame carries (a 13-bit length, the 7-byte header in it).
    public static let maxFrame = 8191 - 7

    /// The ADTS frames of `bytes`' samples, in order; throws with the reason when the segment is
    /// not a fragment or its boxes are damaged.
    public static func adts(_ bytes: [UInt8], init setup: FMP4Init) throws(MP4Error) -> [UInt8] {
        let leading: Set<String> = ["styp", "sidx", "moof", "prft", "emsg", "free", "skip", "ftyp"]
        guard bytes.count >= 8, leading.contains(fourCC(bytes[4..<8])) else { throw MP4Error("not a fragmented MP4 segment") }
        let source = MP4Bytes(bytes)
        let top = try MP4Box.sequence(from: 0, to: source.size, in: source, topLevel: true)
        let mdats = top.filter { $0.type == "mdat" }
        var output: [UInt8] = []
        var samples = 0
        var claimed = 0
        var sawFragment = false
        for moof in top where moof.type == "moof" {
            sawFragment = true
            // Without an explicit base, the first `traf`'s data starts at its `moof`, a later
            // one's where the previous one's ended (ISO 14496-12 8.8.7.1).
            var nextBase = Int(moof.start)
            for traf in try moof.children(in: source) where traf.type == "traf" {
                let parts = try traf.children(in: source)
                guard let tfhd = parts.first("tfhd") else { throw MP4Error("damaged fragment: a 'traf' without its 'tfhd'") }
                var c = MP4Cursor(try tfhd.content(in: source, limit: 4096), box: "tfhd")
                let flags = try c.u32() & 0xFF_FFFF
                let track = try c.u32()
                var base = flags & 0x2_0000 != 0 ? Int(moof.start) : nextBase
                if flags & 0x1 != 0 {
                    let explicit = try c.u64()
                    guard explicit <= source.size else { throw MP4Error("damaged fragment: its data lies past its end") }
                    base = Int(explicit)
                }
                if flags & 0x2 != 0 { try c.skip(4) }
                if flags & 0x8 != 0 { try c.skip(4) }
                let defaultSize = flags & 0x10 != 0 ? try c.u32() : setup.defaultSampleSize
                var offset = base
                for trun in parts where trun.type == "trun" {
                    var t = MP4Cursor(try trun.content(in: source, limit: bytes.count), box: "trun")
                    let runFlags = try t.u32() & 0xFF_FFFF
                    let count = Int(try t.u32())
                    if runFlags & 0x1 != 0 {
                        let moved = base + Int(Int32(bitPattern: try t.u32()))
                        guard moved >= 0, moved <= bytes.count else { throw MP4Error("damaged fragment: its data lies outside it") }
                        offset = moved
                    }
                    if runFlags & 0x4 != 0 { try t.skip(4) }
                    let fields = [0x100, 0x200, 0x400, 0x800].filter { runFlags & $0 != 0 }.count
                    guard count <= maxSamples - samples, count * fields * 4 <= t.remaining else {
                        throw MP4Error("damaged fragment: box 'trun' says it holds \(count) samples")
                    }
                    samples += count
                    let start = offset
                    var sizes: [Int] = []
                    sizes.reserveCapacity(count)
                    for _ in 0..<count {
                        if runFlags & 0x100 != 0 { try t.skip(4) }
                        let size = Int(runFlags & 0x200 != 0 ? try t.u32() : defaultSize)
                        if runFlags & 0x400 != 0 { try t.skip(4) }
                        if runFlags & 0x800 != 0 { try t.skip(4) }
                        guard size <= maxFrame else {
                            throw MP4Error("damaged fragment: an AAC frame of \(size) bytes (at most \(maxFrame) fit ADTS)")
                        }
                        sizes.append(size)
                        offset += size
                    }
                    guard track == setup.trackID else { continue }
                    guard mdats.contains(where: { Int($0.contentStart) <= start && offset <= Int($0.end) }) else {
                        throw MP4Error("damaged fragment: its samples lie outside its 'mdat'")
                    }
                    claimed += offset - start
                    guard claimed <= bytes.count else {
                        throw MP4Error("damaged fragment: its samples claim more bytes than it holds")
                    }
                    var at = start
                    for size in sizes where size > 0 {
                        output += setup.adts.header(payload: size)
                        output += bytes[at..<at + size]
                        at += size
                    }
                }
                nextBase = offset
            }
        }
        guard sawFragment else { throw MP4Error("not a fragmented MP4 segment (no 'moof')") }
        return output
    }
}

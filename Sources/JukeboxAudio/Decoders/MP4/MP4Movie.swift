// SPDX-License-Identifier: MIT

/// What the player needs from an MP4 audio file (`.m4a`, `.m4b`, `.mp4`): its first sound track's
/// codec and sample table, which decoded frames are the audio (the encoder's delay and padding
/// removed), and its chapters. Reads boxes where they are (`MP4ByteSource`); every count and size
/// is checked against the box holding it, so a damaged or crafted file is an `MP4Error`, never a
/// trap or a huge allocation.
public struct MP4Movie: Equatable {
    /// The sound track the player plays.
    public var track: MP4AudioTrack
    /// Chapters in order (empty when the file has none).
    public var chapters: [MP4Chapter]
    /// The ReplayGain freeform items (`----:com.apple.iTunes:replaygain_*`): name upper-cased, value.
    public var replayGain: [String: String] = [:]

    /// Parses `source`.
    public static func read(_ source: MP4ByteSource) throws(MP4Error) -> MP4Movie {
        let top = try topLevel(source)
        guard let moov = top.first("moov") else {
            throw MP4Error(top.first("mdat") != nil ? "damaged file: no 'moov' box (the index of the audio; an unfinished recording or download?)"
                                                   : "not an MP4 file")
        }
        let children = try moov.children(in: source)
        let movieScale = try children.first("mvhd").map { box throws(MP4Error) in try movieTimescale(box, source) } ?? 0
        var tracks: [MP4Trak] = []
        for trak in children where trak.type == "trak" {
            tracks.append(try MP4Trak.read(trak, in: source))
        }
        guard let sound = tracks.first(where: { $0.handler == "soun" }) else { throw MP4Error("no audio track in this MP4 file") }
        guard let entry = sound.sampleEntry else { throw MP4Error("damaged file: the audio track has no sample description") }
        let codec = try MP4AudioTrack.codec(entry, in: source)
        guard let table = sound.table else { throw MP4Error("damaged file: the audio track has no sample table") }
        guard sound.timescale > 0 else { throw MP4Error("damaged file: the audio track has no timescale") }
        let udta = try children.first("udta")?.children(in: source) ?? []
        var track = MP4AudioTrack(codec: codec.codec, channels: codec.channels, sampleRate: codec.sampleRate,
                                  timescale: sound.timescale, table: table,
                                  edit: sound.edit(movieTimescale: movieScale), iTunSMPB: try MP4Tags.iTunSMPB(udta, in: source))
        if track.sampleRate == 0 { track.sampleRate = Int(sound.timescale) }

        var chapters: [MP4Chapter] = []
        if let id = sound.chapterTrack, let text = tracks.first(where: { $0.id == id && $0.handler != "soun" }) {
            chapters = try MP4Chapter.fromTextTrack(text, in: source)
        }
        if chapters.isEmpty, let chpl = udta.first("chpl") {
            chapters = try MP4Chapter.fromNero(chpl, in: source)
        }
        var movie = MP4Movie(track: track, chapters: chapters)
        for item in try MP4Tags.freeform(udta, in: source, wanted: { $0.uppercased().hasPrefix("REPLAYGAIN_") }) {
            movie.replayGain[item.name.uppercased()] = movie.replayGain[item.name.uppercased()] ?? item.value
        }
        return movie
    }

    /// The file's top-level boxes; the first must look like an MP4 box (`ftyp`, or `moov`,
    /// `free`, `wide`, `mdat` in old QuickTime files).
    static func topLevel(_ source: MP4ByteSource) throws(MP4Error) -> [MP4Box] {
        guard source.size >= 8 else { throw MP4Error(source.size == 0 ? "file is empty" : "not an MP4 file") }
        let head = try source.read(at: 4, count: 4)
        guard ["ftyp", "moov", "free", "wide", "mdat", "skip"].contains(fourCC(head)) else { throw MP4Error("not an MP4 file") }
        return try MP4Box.sequence(from: 0, to: source.size, in: source, topLevel: true)
    }

    static func movieTimescale(_ mvhd: MP4Box, _ source: MP4ByteSource) throws(MP4Error) -> UInt32 {
        var c = MP4Cursor(try mvhd.content(in: source, limit: 4096), box: "mvhd")
        try c.skip(try c.version() == 1 ? 16 : 8)
        return try c.u32()
    }
}

/// The codec of the sound track and what it needs to start.
public enum MP4Codec: Equatable, Sendable {
    /// AAC (LC, HE-AAC v1/v2): the AudioSpecificConfig from `esds`, for libfaad's `NeAACDecInit2`.
    case aac(config: [UInt8])
    /// Apple Lossless: the 24-byte ALACSpecificConfig ("magic cookie").
    case alac(cookie: [UInt8])
}

/// A chapter: where it starts (seconds) and its title (text from the file: shown inert).
public struct MP4Chapter: Equatable, Sendable {
    public var start: Double
    public var title: String
    public init(start: Double, title: String) {
        self.start = start
        self.title = title
    }
}

/// The sound track as the decoder needs it.
public struct MP4AudioTrack: Equatable {
    public var codec: MP4Codec
    /// Channels and rate as the sample description says (an HE-AAC file may say the core rate:
    /// the decoder's first frame tells the output rate).
    public var channels: Int
    public var sampleRate: Int
    /// Units per second of the sample table's times.
    public var timescale: UInt32
    public var table: MP4SampleTable
    /// The edit list's first real segment: where the audio starts in the media (the encoder's
    /// delay, in `timescale` units) and how long it lasts (nil: to the end).
    public var edit: MP4Edit?
    /// iTunes' gapless note (`----:com.apple.iTunes:iTunSMPB`), when the file has one.
    public var iTunSMPB: MP4Gapless?

    /// The codec, channels and rate of a sample entry (`mp4a`, `alac`).
    static func codec(_ entry: MP4Box, in source: MP4ByteSource) throws(MP4Error) -> (codec: MP4Codec, channels: Int, sampleRate: Int) {
        guard entry.type == "mp4a" || entry.type == "alac" else {
            throw MP4Error("audio codec '\(entry.type)' in MP4 is not supported (plays: AAC, ALAC)")
        }
        // SampleEntry: 6 reserved + data reference (2); AudioSampleEntry: version (2), revision (2),
        // vendor (4), channels (2), sample size (2), compression id (2), packet size (2), rate 16.16 (4).
        var c = MP4Cursor(try entry.content(in: source, limit: 64 << 10), box: entry.type)
        try c.skip(8)
        let version = try c.u16()
        try c.skip(6)
        let channels = Int(try c.u16())
        try c.skip(6)
        let rate = Int(try c.u32() >> 16)
        // QuickTime sound description versions 1 and 2 carry more fields before the child boxes.
        let fields: UInt64 = 28 + (version == 1 ? 16 : version == 2 ? 36 : 0)
        guard entry.contentSize >= fields else { throw MP4Error("damaged file: box '\(entry.type)' is shorter than its fields") }
        let children = try entry.children(in: source, skipping: fields)
        if entry.type == "alac" {
            guard let alac = children.first("alac") else { throw MP4Error("damaged file: ALAC without its configuration") }
            var cc = MP4Cursor(try alac.content(in: source, limit: 4096), box: "alac")
            _ = try cc.version()
            let cookie = Array(try cc.take(24))
            return (.alac(cookie: cookie), channels, rate)
        }
        // `esds` directly, or inside QuickTime's `wave`.
        var esds = children.first("esds")
        if esds == nil, let wave = children.first("wave") { esds = try wave.children(in: source).first("esds") }
        guard let esds else { throw MP4Error("damaged file: AAC without its configuration ('esds')") }
        var cc = MP4Cursor(try esds.content(in: source, limit: 4096), box: "esds")
        _ = try cc.version()
        let config = try Self.audioSpecificConfig(&cc)
        // The sample entry's channel count is 2 in many writers' AAC files whatever the stream;
        // the AudioSpecificConfig says what the decoder will give.
        let stream = Self.aacRateAndChannels(config)
        return (.aac(config: config), stream?.channels ?? channels, stream?.rate ?? rate)
    }

    /// The sampling rate and channels an AudioSpecificConfig states (ISO 14496-3 1.6.2.1): the
    /// core rate (HE-AAC's SBR doubles it, which the first decoded frame tells); nil when it
    /// names no standard channel layout (0: a program config element decides).
    static func aacRateAndChannels(_ config: [UInt8]) -> (rate: Int, channels: Int)? {
        var reader = MP4Bits(config)
        func bits(_ n: Int) -> Int? { reader.read(n) }
        let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
        guard let objectType = bits(5), objectType != 31 || bits(6) != nil, let index = bits(4) else { return nil }
        let rate = index == 15 ? bits(24) : index < rates.count ? rates[index] : nil
        guard let rate, let layout = bits(4), (1...7).contains(layout) else { return nil }
        return (rate, layout == 7 ? 8 : layout)
    }

    /// The DecoderSpecificInfo of an ES_Descriptor (ISO 14496-1: tag 3 → tag 4 → tag 5), checking
    /// that the stream is MPEG-4 audio (object type 0x40).
    static func audioSpecificConfig(_ c: inout MP4Cursor) throws(MP4Error) -> [UInt8] {
        func descriptor(_ tag: UInt8) throws(MP4Error) -> Int {
            guard try c.u8() == tag else { throw MP4Error("damaged file: box 'esds' is not an MPEG-4 descriptor") }
            var length = 0
            for _ in 0..<4 {
                let b = try c.u8()
                length = length << 7 | Int(b & 0x7f)
                if b & 0x80 == 0 { break }
            }
            return length
        }
        _ = try descriptor(3)
        try c.skip(2)
        let flags = try c.u8()
        if flags & 0x80 != 0 { try c.skip(2) }
        if flags & 0x40 != 0 { try c.skip(Int(try c.u8())) }
        if flags & 0x20 != 0 { try c.skip(2) }
        _ = try descriptor(4)
        let object = try c.u8()
        guard object == 0x40 || object == 0x66 || object == 0x67 || object == 0x68 else {
            throw MP4Error(object == 0x6b || object == 0x69 ? "MP3 inside MP4 is not supported (plays: AAC, ALAC)"
                                                            : "audio object type 0x\(String(object, radix: 16)) in MP4 is not supported (plays: AAC, ALAC)")
        }
        try c.skip(12)
        let length = try descriptor(5)
        guard (2...64).contains(length) else { throw MP4Error("damaged file: the AAC configuration is \(length) bytes") }
        return Array(try c.take(length))
    }
}

/// An edit list's audio segment: the media time it starts at and how long it plays, both in the
/// track's timescale (the movie's timescale converted).
public struct MP4Edit: Equatable, Sendable {
    public var mediaStart: UInt64
    public var duration: UInt64?
}

/// iTunes' gapless numbers: frames of encoder delay at the start, of padding at the end, and the
/// original's length.
public struct MP4Gapless: Equatable, Sendable {
    public var delay: UInt64
    public var padding: UInt64
    public var frames: UInt64
}

extension MP4AudioTrack {
    /// Which decoded frames are the audio, at the decoder's output rate: how many to drop at the
    /// start (the encoder's delay) and how many to play (nil: all the rest). The edit list decides
    /// when it places the audio (FFmpeg and Apple's tools write one); else iTunes' `iTunSMPB`;
    /// else every frame plays.
    public func audioSpan(outputRate: Int) -> (skip: Int64, frames: Int64?) {
        func scaled(_ t: UInt64) -> Int64 {
            let product = t.multipliedFullWidth(by: UInt64(max(0, outputRate)))
            let scale = UInt64(max(1, timescale))
            guard product.high < scale else { return Int64.max }
            return Int64(clamping: scale.dividingFullWidth(product).quotient)
        }
        let length = table.duration
        if let edit, edit.mediaStart > 0 || (edit.duration.map { $0 < length } ?? false) {
            let frames = edit.duration.map(scaled)
            return (scaled(edit.mediaStart), frames)
        }
        if let gapless = iTunSMPB, gapless.frames > 0 {
            return (Int64(clamping: gapless.delay), Int64(clamping: gapless.frames))
        }
        return (0, nil)
    }
}

// SPDX-License-Identifier: MIT

/// A file's ReplayGain tags, read from the tag bytes themselves (TagLib's C API has no property map
/// before TagLib 2): `REPLAYGAIN_TRACK_GAIN`, `…_TRACK_PEAK`, `…_ALBUM_GAIN`, `…_ALBUM_PEAK` (any
/// case) from an MP3's ID3v2 `TXXX` frames (`ID3Chapters.frames`), FLAC and Ogg Vorbis comments
/// (`VorbisChapters`), an MP4's `----:com.apple.iTunes:replaygain_*` items (`MP4Movie`); Opus's
/// `R128_TRACK_GAIN`/`R128_ALBUM_GAIN` (Q7.8 dB relative to −23 LUFS, moved to ReplayGain's −18 LUFS
/// reference by adding 5 dB). R128 and ReplayGain gains are relative to the audio with the Opus
/// header's output gain applied, and libsndfile (which decodes Opus files) applies it
/// (`FileLoudnessTests.testTheOpusHeaderOutputGainIsAppliedByTheDecoder`).
///
/// Values are parsed strictly (`gain(_:)`, `peak(_:)`): anything malformed, not finite or out of
/// range is left out (no gain), never a failure.
public enum FileLoudness {
    /// The gains a tag may give (dB): ReplayGain scanners stay well inside this.
    public static let gainRange: ClosedRange<Double> = -60...30
    /// The peaks a tag may give (linear): floating-point files can go past 1.
    public static let peakRange: ClosedRange<Double> = 0...10

    /// The ReplayGain values of the file at `path`; nil when it has none that read, or cannot be read.
    public static func read(path: String) -> ReplayGainTags? {
        guard let file = try? MP4File(path: path), let fields = try? fields(file) else { return nil }
        return loudness(fields)
    }

    /// The loudness fields (key upper-cased → value text) of the bytes behind `source`, by its
    /// first bytes: ID3v2, FLAC, Ogg, else MP4.
    static func fields(_ source: MP4ByteSource) throws(MP4Error) -> [String: String] {
        guard source.size >= 8 else { return [:] }
        let head = try source.read(at: 0, count: 8)
        var found: [String: String] = [:]
        func add(_ key: String, _ value: String) {
            let key = key.uppercased()
            if found[key] == nil { found[key] = value }
        }
        let prefixes = ["REPLAYGAIN_", "R128_"]
        if head.starts(with: "ID3".utf8) {
            try ID3Chapters.frames(source, wanted: { $0 == "TXXX" }) { _, body, _ in
                if let (description, value) = userText(body) { add(description, value) }
            }
        } else if head.starts(with: "fLaC".utf8) {
            for c in try VorbisChapters.flacComments(source, prefixes: prefixes) { add(c.key, String(decoding: c.value, as: UTF8.self)) }
        } else if head.starts(with: "OggS".utf8) {
            for c in try VorbisChapters.oggComments(source, prefixes: prefixes) { add(c.key, String(decoding: c.value, as: UTF8.self)) }
        } else if head[4..<8].elementsEqual("ftyp".utf8) {
            for (key, value) in try MP4Movie.read(source).replayGain { add(key, value) }
        }
        return found
    }

    /// The values among `fields`; nil when none reads. A ReplayGain gain wins over an R128 one.
    static func loudness(_ fields: [String: String]) -> ReplayGainTags? {
        let r128Track = fields["R128_TRACK_GAIN"].flatMap(r128)
        let r128Album = fields["R128_ALBUM_GAIN"].flatMap(r128)
        let result = ReplayGainTags(trackGain: fields["REPLAYGAIN_TRACK_GAIN"].flatMap(gain) ?? r128Track,
                              trackPeak: fields["REPLAYGAIN_TRACK_PEAK"].flatMap(peak),
                              albumGain: fields["REPLAYGAIN_ALBUM_GAIN"].flatMap(gain) ?? r128Album,
                              albumPeak: fields["REPLAYGAIN_ALBUM_PEAK"].flatMap(peak))
        return result == ReplayGainTags() ? nil : result
    }

    /// A ReplayGain gain: `-7.23 dB`, `+1.5 dB`, `-7.23` (the unit's case and the spaces free);
    /// nil when malformed or outside `gainRange`.
    public static func gain(_ text: String) -> Double? {
        var body = Substring(text.trimmingASCIIWhitespace())
        if body.lowercased().hasSuffix("db") { body = body.dropLast(2) }
        guard let value = decimal(String(body).trimmingASCIIWhitespace()), gainRange.contains(value) else { return nil }
        return value
    }

    /// A ReplayGain peak: `0.988`, `1.2` (linear); nil when malformed or outside `peakRange`.
    public static func peak(_ text: String) -> Double? {
        guard let value = decimal(text.trimmingASCIIWhitespace()), peakRange.contains(value) else { return nil }
        return value
    }

    /// An Opus R128 gain: a signed integer in 1/256 dB relative to −23 LUFS, as a ReplayGain gain
    /// (+5 dB); nil when malformed or outside `gainRange` once moved.
    public static func r128(_ text: String) -> Double? {
        let t = text.trimmingASCIIWhitespace()
        let digits = t.first == "-" || t.first == "+" ? t.dropFirst() : Substring(t)
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let q78 = Int(t.first == "+" ? String(digits) : t) else { return nil }
        let value = Double(q78) / 256 + 5
        return gainRange.contains(value) ? value : nil
    }

    /// A plain decimal: optional sign, digits, at most one point with digits on some side; no
    /// exponent, no `nan`/`inf`, at most 32 characters.
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 32 else { return nil }
        let unsigned = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
        guard unsigned.contains(where: { $0.isASCII && $0.isNumber }),
              unsigned.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }),
              unsigned.filter({ $0 == "." }).count <= 1,
              let value = Double(text.first == "+" ? String(unsigned) : text), value.isFinite else { return nil }
        return value
    }

    /// A `TXXX` frame's description and value: the encoding byte, the description up to its
    /// terminator (one zero, two in UTF-16), the value up to its own.
    static func userText(_ body: [UInt8]) -> (String, String)? {
        guard let encoding = body.first, encoding <= 3 else { return nil }
        let wide = encoding == 1 || encoding == 2
        var i = 1
        while i < body.count {
            if wide {
                if i + 1 < body.count, body[i] == 0, body[i + 1] == 0 { break }
                i += 2
            } else {
                if body[i] == 0 { break }
                i += 1
            }
        }
        guard i < body.count else { return nil }
        let description = ID3Chapters.decodeText([encoding] + body[1..<i])
        let valueStart = min(body.count, i + (wide ? 2 : 1))
        let value = ID3Chapters.decodeText([encoding] + body[valueStart...])
        return (description, value)
    }
}

/// A file's ReplayGain values as `FileLoudness` read them: gains in dB at ReplayGain's reference,
/// peaks linear (1.0 full scale); nil when absent or malformed.
public struct ReplayGainTags: Equatable, Sendable {
    public var trackGain: Double?
    public var trackPeak: Double?
    public var albumGain: Double?
    public var albumPeak: Double?

    /// Creates values; all default to nil.
    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }
}

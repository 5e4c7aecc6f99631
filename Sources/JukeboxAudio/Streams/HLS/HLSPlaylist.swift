// SPDX-License-Identifier: MIT

/// An HLS playlist (RFC 8216) as read from its bytes: a master playlist's variants or a media
/// playlist's segments. Pure and bounded whatever the server sends: `HLSLimits`.
public enum HLSPlaylist: Equatable, Sendable {
    /// A master playlist: the variants (`EXT-X-STREAM-INF`) and audio renditions (`EXT-X-MEDIA`).
    case master(HLSMaster)
    /// A media playlist: segments.
    case media(HLSMediaPlaylist)

    /// Why bytes are not an HLS playlist.
    public enum Failure: Error, Equatable, Sendable {
        /// The first line is not `#EXTM3U`.
        case notHLS
        /// A master playlist without a variant, or a media playlist without `EXT-X-TARGETDURATION`.
        case empty(String)
    }

    /// Reads `bytes`, fetched from `url` (the URIs inside are resolved against it).
    public static func parse(_ bytes: some Collection<UInt8>, url: String, limits: HLSLimits = HLSLimits()) -> Result<HLSPlaylist, Failure> {
        let truncated = bytes.count > limits.maxBytes
        var reader = HLSLineReader(bytes: Array(bytes.prefix(limits.maxBytes)), maxLineBytes: limits.maxLineBytes,
                                   dropsUnterminated: truncated)
        guard let first = reader.next(), first.text == "#EXTM3U" else { return .failure(.notHLS) }
        let base = URIReference.split(url)
        var master = HLSMaster()
        var media = HLSMediaPlaylist()
        var pendingVariant: HLSVariant?
        var pendingDuration: Double?
        var pendingTitle: String?
        var pendingDiscontinuity = false
        var key = HLSKeyMethod.none
        var map: String?
        var sequence = 0
        var sawSequence = false
        var isMaster = false
        while let line = reader.next() {
            if line.tooLong { media.skippedLines += 1; continue }
            let text = line.text
            if text.isEmpty { continue }
            if !text.hasPrefix("#") {
                let uri = URIReference.resolve(text, against: base)
                if var variant = pendingVariant {
                    variant.uri = uri
                    // Only http(s) playlists are followed (libcurl is limited to them anyway).
                    if master.variants.count < limits.maxVariants, Self.isHTTP(uri) { master.variants.append(variant) }
                    pendingVariant = nil
                } else if let duration = pendingDuration {
                    if !sawSequence { sawSequence = true }
                    let segment = HLSSegment(sequence: sequence, duration: duration, uri: uri, title: pendingTitle,
                                             discontinuity: pendingDiscontinuity, key: key, map: map)
                    media.append(segment, keeping: limits.maxSegments)
                    sequence += 1
                    pendingDuration = nil
                    pendingTitle = nil
                    pendingDiscontinuity = false
                }
                continue
            }
            let (tag, value) = Self.tag(text)
            switch tag {
            case "#EXT-X-STREAM-INF":
                isMaster = true
                let attributes = HLSAttributes(value)
                pendingVariant = HLSVariant(uri: "", bandwidth: attributes.integer("BANDWIDTH"),
                                            codecs: attributes.list("CODECS"), audioGroup: attributes["AUDIO"])
            case "#EXT-X-MEDIA":
                isMaster = true
                let attributes = HLSAttributes(value)
                if attributes["TYPE"] == "AUDIO", let group = attributes["GROUP-ID"], let uri = attributes["URI"],
                   master.audio.count < limits.maxVariants, case let resolved = URIReference.resolve(uri, against: base),
                   Self.isHTTP(resolved) {
                    master.audio.append(HLSRendition(group: group, uri: resolved, isDefault: attributes["DEFAULT"] == "YES"))
                }
            case "#EXT-X-TARGETDURATION":
                media.targetDuration = Int(value).map { max(1, min($0, limits.maxTargetDuration)) }
            case "#EXT-X-MEDIA-SEQUENCE":
                if let first = Int(value), first >= 0, media.segments.isEmpty, media.dropped == 0 {
                    sequence = first
                    media.firstSequence = first
                }
            case "#EXTINF":
                let number = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
                let duration = Double(number.first ?? "") ?? 0
                pendingDuration = duration.isFinite ? max(0, min(duration, Double(limits.maxTargetDuration))) : 0
                if number.count > 1, !number[1].isEmpty { pendingTitle = TagText.clean(number[1].prefix(200)) }
            case "#EXT-X-DISCONTINUITY":
                pendingDiscontinuity = true
            case "#EXT-X-ENDLIST":
                media.ended = true
            case "#EXT-X-KEY":
                let attributes = HLSAttributes(value)
                let method = attributes["METHOD"] ?? "NONE"
                key = method == "NONE" ? .none : .encrypted(method == "AES-128" ? "AES-128 without a usable key URI or IV" : String(method.prefix(20)))
                // AES-128 plays when it names its key and, if any, an IV of at most 16 bytes.
                if method == "AES-128", let uri = attributes["URI"], !uri.isEmpty {
                    let iv = attributes["IV"].map(HLSKeyMethod.initialisationVector)
                    if iv != .some(nil) { key = .aes128(uri: URIReference.resolve(uri, against: base), iv: iv ?? nil) }
                }
            case "#EXT-X-MAP":
                let attributes = HLSAttributes(value)
                map = attributes["URI"].map { URIReference.resolve($0, against: base) }
                if attributes["BYTERANGE"] != nil { media.byteRanges = true }
            case "#EXT-X-BYTERANGE":
                media.byteRanges = true
            default:
                break
            }
        }
        if isMaster {
            return master.variants.isEmpty && master.audio.isEmpty
                ? .failure(.empty("the master playlist names no variant")) : .success(.master(master))
        }
        guard media.targetDuration != nil else { return .failure(.empty("the playlist has no EXT-X-TARGETDURATION")) }
        media.truncated = truncated
        return .success(.media(media))
    }

    /// An `http://` or `https://` URL (any case).
    static func isHTTP(_ uri: String) -> Bool {
        let head = uri.prefix(8).lowercased()
        return head.hasPrefix("http://") || head.hasPrefix("https://")
    }

    /// `#TAG:value` split at the first colon.
    private static func tag(_ line: String) -> (Substring, Substring) {
        guard let colon = line.firstIndex(of: ":") else { return (Substring(line), "") }
        return (line[..<colon], line[line.index(after: colon)...])
    }
}

/// The bounds on reading a playlist.
public struct HLSLimits: Sendable, Equatable {
    /// The most bytes of one playlist read (a 9-hour on-demand playlist of 2 s segments is ~0.7 MiB).
    public var maxBytes = 2 << 20
    /// A longer line is skipped (counted in `HLSMediaPlaylist.skippedLines`).
    public var maxLineBytes = 4096
    /// Segments kept: a longer playlist keeps its last ones (where a live edge is).
    public var maxSegments = 20_000
    /// Variants and renditions kept from a master playlist.
    public var maxVariants = 64
    /// The longest target (and segment) duration believed, in seconds.
    public var maxTargetDuration = 60

    /// The defaults above.
    public init() {}
}

/// A variant stream of a master playlist.
public struct HLSVariant: Equatable, Sendable {
    /// Its media playlist.
    public var uri: String
    /// `BANDWIDTH` in bit/s, when given.
    public var bandwidth: Int?
    /// `CODECS`, each lowercased ("mp4a.40.2", "avc1.4d401f").
    public var codecs: [String]
    /// `AUDIO`: the group of its audio renditions, when it has separate ones.
    public var audioGroup: String?

    /// Creates a variant.
    public init(uri: String, bandwidth: Int?, codecs: [String], audioGroup: String? = nil) {
        self.uri = uri
        self.bandwidth = bandwidth
        self.codecs = codecs
        self.audioGroup = audioGroup
    }

    /// Every codec named is an audio codec jukebox decodes (AAC `mp4a.40.*`, MP3 `mp4a.40.34`,
    /// `mp4a.69`, `mp4a.6b`, `mp3`); false when no codec is named.
    public var isAudioOnly: Bool {
        !codecs.isEmpty && codecs.allSatisfy(Self.isPlayableAudio)
    }

    /// Whether one `CODECS` entry is audio jukebox decodes.
    static func isPlayableAudio(_ codec: String) -> Bool {
        codec.hasPrefix("mp4a.40.") || codec == "mp4a.69" || codec == "mp4a.6b" || codec == "mp3"
    }
}

/// An audio rendition (`EXT-X-MEDIA:TYPE=AUDIO` with a URI).
public struct HLSRendition: Equatable, Sendable {
    /// `GROUP-ID`.
    public var group: String
    /// Its media playlist.
    public var uri: String
    /// `DEFAULT=YES`.
    public var isDefault: Bool
}

/// What a master playlist offers.
public struct HLSMaster: Equatable, Sendable {
    /// The variants, in the playlist's order.
    public var variants: [HLSVariant] = []
    /// The audio renditions with their own playlist.
    public var audio: [HLSRendition] = []
}

/// Whether a segment is encrypted (`EXT-X-KEY`).
public enum HLSKeyMethod: Equatable, Sendable {
    /// In the clear.
    case none
    /// AES-128 (CBC, PKCS#7 padding) with the 16-byte key at `uri`, and the IV the tag gives
    /// (nil: the segment's media sequence number, big-endian, RFC 8216 5.2).
    case aes128(uri: String, iv: [UInt8]?)
    /// Encrypted with this method (`SAMPLE-AES`, an AES-128 tag without its key): not played.
    case encrypted(String)

    /// An `IV` attribute's 16 bytes (`0x` and up to 32 hex digits, zeros in front), nil when it is none.
    static func initialisationVector(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        let digits = Array(text.dropFirst(2))
        guard !digits.isEmpty, digits.count <= 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        let padded = [Character](repeating: "0", count: 32 - digits.count) + digits
        return (0..<16).map { UInt8(String(padded[2 * $0...2 * $0 + 1]), radix: 16) ?? 0 }
    }

    /// The IV of a segment numbered `sequence` without one in its tag.
    static func initialisationVector(sequence: Int) -> [UInt8] {
        let number = UInt64(clamping: max(0, sequence))
        return [UInt8](repeating: 0, count: 8) + (0..<8).map { UInt8(truncatingIfNeeded: number >> (56 - 8 * UInt64($0))) }
    }
}

/// One media segment.
public struct HLSSegment: Equatable, Sendable {
    /// Its media sequence number.
    public var sequence: Int
    /// `EXTINF` seconds.
    public var duration: Double
    /// Its URL, resolved.
    public var uri: String
    /// The `EXTINF` title, cleaned, when given.
    public var title: String?
    /// An `EXT-X-DISCONTINUITY` precedes it: the decoder starts afresh.
    public var discontinuity: Bool
    /// Its encryption.
    public var key: HLSKeyMethod
    /// Its `EXT-X-MAP` (a fragmented MP4 initialisation section), when it has one.
    public var map: String?

    /// Creates a segment.
    public init(sequence: Int, duration: Double, uri: String, title: String? = nil, discontinuity: Bool = false,
                key: HLSKeyMethod = .none, map: String? = nil) {
        self.sequence = sequence
        self.duration = duration
        self.uri = uri
        self.title = title
        self.discontinuity = discontinuity
        self.key = key
        self.map = map
    }
}

/// A media playlist.
public struct HLSMediaPlaylist: Equatable, Sendable {
    /// `EXT-X-TARGETDURATION`, seconds.
    public var targetDuration: Int?
    /// `EXT-X-MEDIA-SEQUENCE` (0 when absent).
    public var firstSequence = 0
    /// The segments kept, in order (the last `HLSLimits.maxSegments`).
    public var segments: [HLSSegment] = []
    /// Segments left out at the front to stay within `HLSLimits.maxSegments`.
    public var dropped = 0
    /// `EXT-X-ENDLIST`: no more segments will come (on demand, or a live event that ended).
    public var ended = false
    /// `EXT-X-BYTERANGE` was used (segments as parts of a file: not played).
    public var byteRanges = false
    /// Lines skipped for being longer than `HLSLimits.maxLineBytes`.
    public var skippedLines = 0
    /// The playlist was longer than `HLSLimits.maxBytes` and read only that far.
    public var truncated = false

    /// The last segment's sequence number, or nil when there is none.
    public var lastSequence: Int? { segments.last?.sequence }

    /// Keeps the last `limit` segments: a ring would save the shifts, but a live playlist is a few
    /// dozen entries and only a hostile one reaches the limit, once.
    mutating func append(_ segment: HLSSegment, keeping limit: Int) {
        if segments.count >= limit {
            let excess = max(1, segments.count / 2)
            segments.removeFirst(excess)
            dropped += excess
        }
        segments.append(segment)
    }
}

/// A playlist's lines, bounded: a line longer than the bound is returned as `tooLong` (its text
/// not kept), CR LF and LF both end a line, a UTF-8 BOM before `#EXTM3U` is skipped.
struct HLSLineReader {
    let bytes: [UInt8]
    let maxLineBytes: Int
    /// The bytes were cut at a bound: a last line without its newline is a part of a line, left out.
    let dropsUnterminated: Bool
    private var index: Int

    init(bytes: [UInt8], maxLineBytes: Int, dropsUnterminated: Bool) {
        self.bytes = bytes
        self.maxLineBytes = maxLineBytes
        self.dropsUnterminated = dropsUnterminated
        var start = bytes.startIndex
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        if bytes.starts(with: bom) { start = bytes.index(start, offsetBy: 3) }
        index = start
    }

    mutating func next() -> (text: String, tooLong: Bool)? {
        guard index != bytes.endIndex else { return nil }
        let start = index
        var length = 0
        while index != bytes.endIndex && bytes[index] != UInt8(ascii: "\n") {
            index = bytes.index(after: index)
            length += 1
        }
        let end = index
        if index == bytes.endIndex {
            if dropsUnterminated { return nil }
        } else {
            index = bytes.index(after: index)
        }
        if length > maxLineBytes { return ("", true) }
        var line = bytes[start..<end]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        var text = Substring(String(decoding: line, as: UTF8.self))
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        return (String(text), false)
    }
}

/// An attribute list (`NAME=value,NAME="quoted, value"`), section 4.2. Bounded by its line.
struct HLSAttributes {
    private var values: [String: String] = [:]

    init(_ text: Substring) {
        var rest = text
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingSpaces()
            rest = rest[rest.index(after: equals)...]
            var value: Substring
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let close = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = rest[..<close]
                rest = close == rest.endIndex ? rest[close...] : rest[rest.index(after: close)...]
                if let comma = rest.firstIndex(of: ",") { rest = rest[rest.index(after: comma)...] } else { rest = "" }
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = comma == rest.endIndex ? "" : rest[rest.index(after: comma)...]
            }
            if values[String(name)] == nil { values[String(name)] = String(value.trimmingSpaces()) }
        }
    }

    subscript(name: String) -> String? { values[name] }

    func integer(_ name: String) -> Int? {
        values[name].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// A comma-separated quoted list, lowercased (`CODECS="mp4a.40.2,avc1.4d401f"`).
    func list(_ name: String) -> [String] {
        guard let text = values[name] else { return [] }
        return text.split(separator: ",").map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

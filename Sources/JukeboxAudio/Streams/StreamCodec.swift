// SPDX-License-Identifier: MIT

/// One audio codec of a network stream: bytes go in as they arrive, 32-bit float interleaved PCM
/// comes out. Push-style on purpose: the network's pace stays in `StreamDecoder` (which waits with a
/// timeout and says "pending"), never inside a library's read callback. Not thread-safe: the
/// engine's decoder thread alone uses one.
protocol StreamCodec: AnyObject {
    /// Hands over the next bytes of the stream; the codec copies what it keeps.
    func feed(_ bytes: UnsafeRawBufferPointer)
    /// Decodes up to `frames` frames into `buffer` (interleaved `Float`, in the format last
    /// reported). A format is reported (`.format`) before the first frames and again whenever it
    /// changes; the caller decides what a change means.
    func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult
    /// Frees the library's state. Called once; nothing is called after it.
    func close()
    /// The stream ended: nothing more will be fed. A codec that holds bytes back until a whole
    /// frame surely arrived (FLAC) decodes the rest with the next `decode` calls.
    func endOfInput()
    /// Bytes read as the format's own headers (tags, pictures) so far: not counted against
    /// `StreamDecoder.syncLimit`, since a 1 MB cover ahead of the audio is no sign of garbage.
    var headerBytes: Int { get }
    /// A title the stream itself carries (an Ogg link's comment header), once, cleaned as an ICY
    /// `StreamTitle`; nil when no new one came since the last call. Polled after each `decode`.
    func takeTitle() -> String?
    /// The bitrate (kbit/s) the stream's own header names, for sizing the buffer when the server
    /// sent no `icy-br`; nil when unknown.
    var nominalBitrate: Int? { get }
    /// Whether `nominalBitrate` is still unknown but would come from more bytes fed (Opus: its
    /// header names no bitrate, its pages' granule positions tell it). The start-up buffer then
    /// feeds the codec what arrives rather than waiting in the ring at a guessed rate.
    var measuresBitrate: Bool { get }
    /// Where to fetch a file from to start at `seconds` (called once, after the first format):
    /// the byte to ask for and the second it lands at, the codec then expecting its bytes from
    /// there. `length` is the file's, when known. nil when the format cannot tell (it then plays
    /// from its beginning).
    func startingPoint(seconds: Double, length: Int?) -> (byte: Int, seconds: Double)?
}

extension StreamCodec {
    /// Nothing to do for a codec that decodes every frame as soon as it is whole.
    func endOfInput() {}
    /// None: the codec has no headers worth telling apart from garbage.
    var headerBytes: Int { 0 }
    /// None: the format carries no titles (or they are not read).
    func takeTitle() -> String? { nil }
    /// Unknown.
    var nominalBitrate: Int? { nil }
    /// Nothing to measure.
    var measuresBitrate: Bool { false }
    /// Not known: from the beginning.
    func startingPoint(seconds: Double, length: Int?) -> (byte: Int, seconds: Double)? { nil }
}

/// What one `StreamCodec.decode` call produced.
enum StreamCodecResult: Equatable {
    /// `n` > 0 frames were written.
    case frames(Int)
    /// Nothing can be decoded from what was fed so far: feed more.
    case needMore
    /// The PCM shape from here on (sample is always `.float32`). Nothing was written.
    case format(AudioFormat)
    /// The stream said it is over (an end-of-stream marker).
    case ended
    /// The bytes cannot be decoded; the reason names the format.
    case failed(String)
}

/// The stream formats and how one is recognised: by the response's Content-Type, else (no type,
/// or `application/octet-stream`) by the first bytes.
enum StreamCodecKind: String, CaseIterable, Sendable {
    case mp3 = "MP3"
    /// Ogg Vorbis or Ogg Opus (the codec tells them apart by the first packet).
    case ogg = "Ogg Vorbis/Opus"
    case aac = "AAC"
    case flac = "FLAC"

    /// The kind a Content-Type names; nil when the type says nothing (absent, octet-stream) or is
    /// not an audio format this player knows.
    static func named(contentType: String) -> StreamCodecKind? {
        switch contentType {
        case "audio/mpeg", "audio/mp3", "audio/x-mpeg", "audio/mpeg3", "audio/x-mp3", "audio/mpg": .mp3
        case "audio/ogg", "application/ogg", "audio/vorbis", "audio/opus", "audio/x-ogg", "application/x-ogg": .ogg
        case "audio/aac", "audio/aacp", "audio/x-aac": .aac
        case "audio/flac", "audio/x-flac": .flac
        default: nil
        }
    }

    /// Content-Types of audio formats that have no codec here yet (refused with "not supported").
    static let knownUnsupported: Set<String> = ["video/mp2t"]

    /// The kind the first bytes of a stream look like; MP3 when nothing else matches (libmpg123
    /// then searches for a frame sync and refuses the stream after `StreamDecoder.syncLimit`).
    static func sniff(_ head: UnsafeRawBufferPointer) -> StreamCodecKind {
        // An Ogg stream starts at a page: its capture pattern "OggS".
        if head.starts(with: [0x4F, 0x67, 0x67, 0x53]) { return .ogg }
        if FLACStreamCodec.looksLikeFLAC(head) { return .flac }
        if AACStreamCodec.looksLikeADTS(head) { return .aac }
        return .mp3
    }

    /// "an MP3" and the like, for messages.
    var article: String {
        switch self {
        case .mp3: "an MP3"
        case .ogg: "an Ogg Vorbis or Opus"
        case .aac: "an AAC"
        case .flac: "a FLAC"
        }
    }

    /// The formats there is a codec for, for messages ("MP3, Ogg Vorbis").
    static var supported: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// A fresh codec of this kind.
    func makeCodec() throws(StreamCodecError) -> any StreamCodec {
        switch self {
        case .mp3: try MP3StreamCodec()
        case .ogg: OggStreamCodec()
        case .aac: try AACStreamCodec()
        case .flac: try FLACStreamCodec()
        }
    }
}

/// A codec could not be started (its library refused).
struct StreamCodecError: Error {
    var reason: String
}

// SPDX-License-Identifier: MIT

/// A Snapcast pipe stream to play into (the config's `"output": {"type": "snapcast", …}`): the
/// FIFO snapserver reads and the sample format it reads it as. The shell's: the audio adapter
/// gets them from the wiring.
public struct SnapcastSettings: Equatable, Sendable {
    /// The FIFO (snapserver.conf's `source = pipe://PATH?…`).
    public var pipe = "/run/snapserver/jukebox"
    /// Frames per second of the stream.
    public var rate = 44100
    /// Bits per sample: 16, 24 or 32.
    public var bits = 16
    /// Channels.
    public var channels = 2

    /// The defaults: `/run/snapserver/jukebox` at 44100:16:2 (CD audio: most music plays without
    /// a refusal; snapserver's own default, 48000:16:2, must then be overridden in its source line).
    public init() {}

    /// `RATE:BITS:CHANNELS`, as snapserver writes it.
    public var sampleFormat: String { "\(rate):\(bits):\(channels)" }

    /// Reads `RATE:BITS:CHANNELS` (rate 8000 to 384000, bits 16, 24 or 32, 1 to 8 channels); nil
    /// when it is not one.
    public static func parseSampleFormat(_ text: String) -> (rate: Int, bits: Int, channels: Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let rate = Int(parts[0]), let bits = Int(parts[1]), let channels = Int(parts[2]),
              (8000...384_000).contains(rate), [16, 24, 32].contains(bits), (1...8).contains(channels) else { return nil }
        return (rate, bits, channels)
    }
}

/// The `"output"` object as written; `Config.parse` checks it.
struct RawOutput: Decodable {
    var type: String?
    var pipe: String?
    var sampleFormat: String?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey, CaseIterable { case type, pipe, sampleFormat }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        pipe = try c.decodeIfPresent(String.self, forKey: .pipe)
        sampleFormat = try c.decodeIfPresent(String.self, forKey: .sampleFormat)
    }

    /// The output kind and, for Snapcast, its settings; or the first key that is wrong.
    func settings() -> Result<(Config.AudioKind, SnapcastSettings?), OutputKeyError> {
        switch type {
        case "alsa"?, "null"?:
            guard pipe == nil, sampleFormat == nil else { return .failure(OutputKeyError(key: pipe != nil ? "pipe" : "sampleFormat")) }
            return .success((type == "alsa" ? .alsa : .null, nil))
        case "snapcast"?:
            var s = SnapcastSettings()
            if let pipe {
                guard pipe.hasPrefix("/"), pipe.utf8.count < 4096, !pipe.contains(where: { $0.isNewline || $0 == "\0" }) else {
                    return .failure(OutputKeyError(key: "pipe"))
                }
                s.pipe = pipe
            }
            if let sampleFormat {
                guard let f = SnapcastSettings.parseSampleFormat(sampleFormat) else { return .failure(OutputKeyError(key: "sampleFormat")) }
                (s.rate, s.bits, s.channels) = f
            }
            return .success((.snapcast, s))
        default:
            return .failure(OutputKeyError(key: "type"))
        }
    }

    /// What a key of the `"output"` object must be.
    static func expectation(_ key: String) -> String {
        switch key {
        case "type": return "must be \"alsa\", \"null\" or \"snapcast\""
        case "pipe": return "must be the absolute path of snapserver's pipe (\"/run/snapserver/jukebox\"), for type \"snapcast\" only"
        case "sampleFormat": return "must be RATE:BITS:CHANNELS as in snapserver.conf (\"44100:16:2\"; bits 16, 24 or 32), for type \"snapcast\" only"
        default: return "must be an object such as {\"type\": \"snapcast\", \"pipe\": \"/run/snapserver/jukebox\"}"
        }
    }
}

/// Which key of the `"output"` object is wrong.
struct OutputKeyError: Error, Equatable {
    var key: String
}

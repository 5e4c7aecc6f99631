// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `loudness`: which ReplayGain value a play uses, the preamps, clipping prevention.
struct RawLoudness: Decodable {
    var mode: String?
    var preamp: Double?
    var untaggedPreamp: Double?
    var preventClipping: Bool?
    var scan: Bool?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    /// The preamps a user may set (dB).
    static let preampRange: ClosedRange<Double> = -30...15

    static let expectation = "must be {\"mode\": \"off\", \"track\", \"album\" or \"auto\", \"preamp\": dB from -30 to 15, "
        + "\"untaggedPreamp\": dB from -30 to 15, \"preventClipping\": true or false, \"scan\": true or false}"

    private enum Keys: String, CodingKey { case mode, preamp, untaggedPreamp, preventClipping, scan }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        mode = try c.decodeIfPresent(String.self, forKey: .mode)
        preamp = try c.decodeIfPresent(Double.self, forKey: .preamp)
        untaggedPreamp = try c.decodeIfPresent(Double.self, forKey: .untaggedPreamp)
        preventClipping = try c.decodeIfPresent(Bool.self, forKey: .preventClipping)
        scan = try c.decodeIfPresent(Bool.self, forKey: .scan)
    }

    /// The settings it says, or nil when a value is wrong (`expectation` says how).
    func settings() -> LoudnessSettings? {
        var s = LoudnessSettings()
        if let v = mode {
            guard let mode = LoudnessMode(rawValue: v) else { return nil }
            s.mode = mode
        }
        if let v = preamp {
            guard Self.preampRange.contains(v) else { return nil }
            s.preamp = v
        }
        if let v = untaggedPreamp {
            guard Self.preampRange.contains(v) else { return nil }
            s.untaggedPreamp = v
        }
        if let v = preventClipping { s.preventClipping = v }
        if let v = scan { s.scan = v }
        return s
    }
}

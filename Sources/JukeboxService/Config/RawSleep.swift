// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `sleep`: how long the sleep timer fades the sound out, and what follows (`pause`,
/// or `poweroff`: `powerCommand` runs, as for idle power-off).
struct RawSleep: Decodable {
    var fadeSeconds: Double?
    var then: String?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    static let expectation = "must be {\"fadeSeconds\": seconds from 0 to 600, \"then\": \"pause\" or \"poweroff\"}"

    private enum Keys: String, CodingKey { case fadeSeconds, then }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        fadeSeconds = try c.decodeIfPresent(Double.self, forKey: .fadeSeconds)
        then = try c.decodeIfPresent(String.self, forKey: .then)
    }

    /// The settings it says, or that it is wrong (`expectation` says how).
    func settings() -> Result<SleepSettings, RawSleepProblem> {
        var s = SleepSettings()
        if let v = fadeSeconds {
            guard v >= 0, v <= 600 else { return .failure(RawSleepProblem()) }
            s.fadeSeconds = v
        }
        if let v = then {
            guard let then = SleepThen(rawValue: v) else { return .failure(RawSleepProblem()) }
            s.then = then
        }
        return .success(s)
    }
}

struct RawSleepProblem: Error {}

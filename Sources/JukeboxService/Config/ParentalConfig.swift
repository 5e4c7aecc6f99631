// SPDX-License-Identifier: MIT
import JukeboxCore

/// The config's `parental`: quiet hours, the daily listening limit and volume caps by time of day
/// (`ParentalSettings`; the rules are the core's, `Reduce+Parental.swift`). See docs/CONFIGURATION.md
/// "parental" and docs/BOX.md "Parental rules".
struct RawParental: Decodable {
    var quietHours: RawQuietHours?
    var dailyLimitMinutes: Double?
    var warnMinutes: Double?
    var resetAt: String?
    var caps: [RawCap]?
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey { case quietHours, dailyLimitMinutes, warnMinutes, resetAt, caps }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        quietHours = try c.decodeIfPresent(RawQuietHours.self, forKey: .quietHours)
        dailyLimitMinutes = try c.decodeIfPresent(Double.self, forKey: .dailyLimitMinutes)
        warnMinutes = try c.decodeIfPresent(Double.self, forKey: .warnMinutes)
        resetAt = try c.decodeIfPresent(String.self, forKey: .resetAt)
        caps = try c.decodeIfPresent([RawCap].self, forKey: .caps)
    }

    static let expectation = "must be {\"quietHours\": {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"folders\": [absolute folder paths], "
        + "\"volumeMax\": 0-100}, \"dailyLimitMinutes\": 1 to 1440, \"warnMinutes\": 0 to 120, \"resetAt\": \"HH:MM\", "
        + "\"caps\": [{\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"volumeMax\": 0-100, \"output\": \"speaker\" or \"headphones\"}, at most 24]}"

    /// The rules, or nil when a value is out of its range (`expectation` says how).
    func settings() -> ParentalSettings? {
        var s = ParentalSettings()
        if let q = quietHours {
            guard let from = Self.minute(q.from), let to = Self.minute(q.to) else { return nil }
            let folders = q.folders ?? []
            guard folders.count <= 100, folders.allSatisfy({ $0.hasPrefix("/") && $0.utf8.count <= Bookmark.maxPathBytes }),
                  q.volumeMax.map({ (0...100).contains($0) }) ?? true else { return nil }
            s.quietHours = QuietHours(window: DayWindow(from: from, to: to), folders: folders, volumeMax: q.volumeMax)
        }
        if let v = dailyLimitMinutes {
            guard v >= 1, v <= 1440 else { return nil }
            s.dailyLimit = v * 60
        }
        if let v = warnMinutes {
            guard v >= 0, v <= 120 else { return nil }
            s.warnBefore = v * 60
        }
        if let v = resetAt {
            guard let minute = Self.minute(v) else { return nil }
            s.resetAt = minute
        }
        for cap in caps ?? [] {
            guard let from = Self.minute(cap.from), let to = Self.minute(cap.to), (0...100).contains(cap.volumeMax ?? -1) else { return nil }
            var output: CapOutput?
            if let name = cap.output {
                guard let o = CapOutput(rawValue: name) else { return nil }
                output = o
            }
            s.caps.append(VolumeCap(window: DayWindow(from: from, to: to), volumeMax: cap.volumeMax ?? 0, output: output))
        }
        guard s.caps.count <= 24 else { return nil }
        return s
    }

    /// `HH:MM` (or `H:MM`), 00:00 to 23:59, as minutes of the day; nil for anything else.
    static func minute(_ text: String?) -> Int? {
        guard let text else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]), h < 24, m < 60 else { return nil }
        return h * 60 + m
    }
}

struct RawQuietHours: Decodable {
    var from: String?
    var to: String?
    var folders: [String]?
    var volumeMax: Int?
}

struct RawCap: Decodable {
    var from: String?
    var to: String?
    var volumeMax: Int?
    var output: String?
}

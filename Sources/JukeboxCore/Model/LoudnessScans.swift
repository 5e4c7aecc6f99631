// SPDX-License-Identifier: MIT

/// Untagged files' loudness as the shell measured it (`Command.measureLoudness`,
/// `Event.loudnessMeasured`), by path: what came back, what is awaited, what could not be measured.
/// Bounded: past `limit` entries the oldest half of the answers is forgotten (asked again when
/// needed: the shell's cache answers without a scan).
public struct LoudnessScans: Equatable, Sendable {
    /// Measured track gain and peak by path (a `Loudness` with `trackGain` and `trackPeak`).
    public var measured: [String: Loudness] = [:]
    /// Paths asked for and not answered yet (never asked twice meanwhile).
    public var pending: Set<String> = []
    /// Paths that could not be measured (not asked again while the player runs).
    public var failed: Set<String> = []
    /// Answers in the order they came, to forget the oldest first.
    public var arrival: [String] = []

    /// The most answers kept (measured and failed together).
    public static let limit = 2048
    /// How many tracks after the current one are asked for ahead.
    public static let lookahead = 4

    /// Nothing asked yet.
    public init() {}

    /// Whether `path` is neither measured, nor awaited, nor known to fail.
    public func needs(_ path: String) -> Bool {
        measured[path] == nil && !pending.contains(path) && !failed.contains(path)
    }

    /// Keeps the answer for `path` (nil: it could not be measured).
    mutating func answer(_ path: String, _ loudness: Loudness?) {
        pending.remove(path)
        measured[path] = nil
        failed.remove(path)
        arrival.removeAll { $0 == path }
        if let loudness { measured[path] = loudness } else { failed.insert(path) }
        arrival.append(path)
        if arrival.count > Self.limit {
            let dropped = arrival.prefix(Self.limit / 2)
            for old in dropped {
                measured[old] = nil
                failed.remove(old)
            }
            arrival.removeFirst(dropped.count)
        }
    }
}

// SPDX-License-Identifier: MIT

extension State {
    /// Asks the shell to measure the tracks about to play (the current one and the next
    /// `LoudnessScans.lookahead` in play order, from the first when there is no current one, and
    /// the gapless successor) when they have no gain tags and were not measured yet, while a
    /// loudness mode is on and `scan` allows it. Streams are never measured. A file is asked for
    /// once: its answer is kept (`loudnessScans`), and a failure is not asked again. Asking ahead
    /// lets a queue loaded while stopped be measured before it plays, and each successor before
    /// it is handed.
    mutating func followLoudness(_ step: inout Step) {
        let rules = settings.loudness
        guard rules.mode != .off, rules.scan, !order.isEmpty else { return }
        let first = cursor ?? 0
        var indices = Array(first..<min(order.count, first + 1 + LoudnessScans.lookahead))
        if let next = autoAdvanceTarget(), !indices.contains(next) { indices.append(next) }
        for index in indices where order.indices.contains(index) {
            guard let info = track(id: order[index])?.info, !info.hasGainTags, !Library.isStreamURL(info.path),
                  loudnessScans.needs(info.path) else { continue }
            loudnessScans.pending.insert(info.path)
            step.commands.append(.measureLoudness(path: info.path))
        }
    }

    /// A measurement came back. A track playing keeps the gain it started with (no jump in the
    /// middle); the gapless successor already handed is handed again (`syncNext`) so that it
    /// starts with its measured gain.
    mutating func loudnessMeasured(path: String, _ loudness: Loudness?) {
        // Only a gain in the range a tag may carry is used (the shell checked; trust no input).
        let usable = loudness.flatMap { l -> Loudness? in
            guard let gain = l.trackGain, gain.isFinite, (-60...30).contains(gain) else { return nil }
            let peak = l.trackPeak.flatMap { $0.isFinite && $0 > 0 && $0 <= 10 ? $0 : nil }
            return Loudness(trackGain: gain, trackPeak: peak)
        }
        loudnessScans.answer(path, usable)
        if usable != nil, let next = handedNext, track(id: next.trackID)?.info.path == path { handNextAgain() }
    }
}

extension TrackInfo {
    /// Whether its tags carry a track or album gain (then it is never measured).
    public var hasGainTags: Bool { loudness?.trackGain != nil || loudness?.albumGain != nil }
}

// SPDX-License-Identifier: MIT

/// A file's ReplayGain values, read from its tags by the shell: gains in dB relative to ReplayGain's
/// reference (Opus R128 gains already moved there), peaks as linear sample amplitude (1.0 full
/// scale). A value the file does not carry, or carries malformed, is nil.
public struct Loudness: Equatable, Hashable, Sendable, Codable {
    /// Gain making this track play at the reference loudness (dB).
    public var trackGain: Double?
    /// The track's highest sample (linear).
    public var trackPeak: Double?
    /// Gain making the whole album play at the reference loudness (dB).
    public var albumGain: Double?
    /// The album's highest sample (linear).
    public var albumPeak: Double?

    /// Creates loudness values (the shell checked them: `FileLoudness` in the audio adapter).
    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }

    /// `10^(dB/20)`, the linear factor of a gain in dB. The core has no libm: e^x by range
    /// reduction (x = k·ln 2 + r, |r| ≤ ln 2 / 2) and a Taylor series, exact to a few ulp.
    public static func linear(decibels: Double) -> Double {
        let x = decibels * 0.11512925464970229 // ln(10) / 20
        let ln2 = 0.6931471805599453
        let k = (x / ln2).rounded()
        let r = x - k * ln2
        var term = 1.0
        var sum = 1.0
        for n in 1...20 {
            term *= r / Double(n)
            sum += term
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }
}

/// Which ReplayGain value a play uses (config `loudness.mode`).
public enum LoudnessMode: String, Equatable, Sendable, CaseIterable {
    /// No gain: samples pass bit-exact.
    case off
    /// The track's gain (the album's when the file has only that).
    case track
    /// The album's gain (the track's when the file has only that).
    case album
    /// The album's gain while an album plays in order (queue not shuffled and the neighbouring
    /// track of the same album), else the track's.
    case auto
}

/// The loudness rules (config `loudness`).
public struct LoudnessSettings: Equatable, Sendable {
    /// Which gain a play uses.
    public var mode: LoudnessMode = .off
    /// dB added to every tagged file's gain.
    public var preamp: Double = 0
    /// dB applied to a file without gain tags (streams included).
    public var untaggedPreamp: Double = 0
    /// Whether the gain is held down so that the tagged peak times the gain stays at most 1 (no clipping).
    public var preventClipping = true
    /// Whether files without gain tags are measured (libebur128, off the loop) and then played
    /// with their measured track gain (and `preamp`) like tagged files. Only while `mode` is not off.
    public var scan = true

    /// Default rules: off.
    public init(mode: LoudnessMode = .off, preamp: Double = 0, untaggedPreamp: Double = 0, preventClipping: Bool = true,
                scan: Bool = true) {
        self.mode = mode
        self.preamp = preamp
        self.untaggedPreamp = untaggedPreamp
        self.preventClipping = preventClipping
        self.scan = scan
    }
}

extension State {
    /// The linear gain for playing the track at order index `index` under `settings.loudness`;
    /// nil when samples must pass untouched (mode off, or a gain of exactly 1). A file without
    /// gain tags uses its measured track gain when there is one (`loudnessScans`, with `scan`
    /// on): album and auto modes fall back to it, as for a file tagged with a track gain only.
    public func playGain(at index: Int) -> Double? {
        let rules = settings.loudness
        guard rules.mode != .off, order.indices.contains(index), let track = track(id: order[index]) else { return nil }
        var tags = track.info.loudness ?? Loudness()
        if !track.info.hasGainTags, rules.scan, let measured = loudnessScans.measured[track.info.path] { tags = measured }
        let useAlbum: Bool
        switch rules.mode {
        case .off, .track: useAlbum = false
        case .album: useAlbum = true
        case .auto: useAlbum = !shuffle && albumNeighbour(at: index)
        }
        var factor: Double
        var peak: Double?
        if let gain = useAlbum ? (tags.albumGain ?? tags.trackGain) : (tags.trackGain ?? tags.albumGain) {
            factor = Loudness.linear(decibels: gain + rules.preamp)
            let albumFirst = useAlbum ? tags.albumGain != nil : tags.trackGain == nil
            peak = albumFirst ? tags.albumPeak : tags.trackPeak
        } else {
            factor = Loudness.linear(decibels: rules.untaggedPreamp)
        }
        if rules.preventClipping, let peak, peak > 0 { factor = min(factor, 1 / peak) }
        return factor == 1 ? nil : factor
    }

    /// Whether the track before or after `index` in play order is of the same (named) album.
    func albumNeighbour(at index: Int) -> Bool {
        guard let album = track(id: order[index]).flatMap({ $0.info.album }) else { return false }
        for i in [index - 1, index + 1] where order.indices.contains(i) {
            if track(id: order[i])?.info.album == album { return true }
        }
        return false
    }
}

// SPDX-License-Identifier: MIT

extension TestAudio {
    /// The lag `l` in `lags` for which recorded frames `at..<at+length` (channel 0 of `channels`)
    /// best match the test signal's frames `sourceAt-l...`, by normalised cross-correlation: a
    /// positive lag means the recording is late. Frames outside the recording count as silence.
    public static func bestLag(_ recorded: [Float], channels: Int, sampleRate: Int, at: Int, sourceAt: Int,
                               length: Int, lags: ClosedRange<Int>) -> Int {
        let frames = recorded.count / channels
        let x = (0..<length).map { at + $0 < frames && at + $0 >= 0 ? Double(recorded[(at + $0) * channels]) : 0 }
        // source[j] is the signal at frame sourceAt - lags.upperBound + j.
        let origin = sourceAt - lags.upperBound
        let source = (0..<(length + lags.count)).map {
            Double(signal(frame: origin + $0, channel: 0, sampleRate: sampleRate))
        }
        var best = (lag: 0, score: -Double.infinity)
        for lag in lags {
            var dot = 0.0, energy = 0.0
            let offset = lags.upperBound - lag
            for i in 0..<length {
                let s = source[offset + i]
                dot += x[i] * s
                energy += s * s
            }
            let score = energy > 0 ? dot / energy.squareRoot() : 0
            if score > best.score { best = (lag, score) }
        }
        return best.lag
    }
}

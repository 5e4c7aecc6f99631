// SPDX-License-Identifier: MIT

/// A set of repeated measurements, summarised the way the report prints them.
struct Samples {
    /// The values, in the order measured.
    var values: [Double]

    init(_ values: [Double]) { self.values = values }

    /// The middle value (mean of the two middle ones for an even count); NaN when empty.
    var median: Double { quantile(0.5) }
    /// The smallest value; NaN when empty.
    var min: Double { values.min() ?? .nan }
    /// The largest value; NaN when empty.
    var max: Double { values.max() ?? .nan }
    /// The 95th percentile (linear interpolation); NaN when empty.
    var p95: Double { quantile(0.95) }
    /// The 99th percentile (linear interpolation); NaN when empty.
    var p99: Double { quantile(0.99) }

    /// The `q` quantile (0...1) with linear interpolation between ranks.
    func quantile(_ q: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = q * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }

    /// `{"median", "min", "max", "p95", "runs"}` scaled by `scale` (e.g. 1000 for milliseconds).
    func json(scale: Double = 1, digits: Int = 3) -> [String: Any] {
        ["median": round(median * scale, digits), "min": round(min * scale, digits),
         "max": round(max * scale, digits), "p95": round(p95 * scale, digits), "runs": values.count]
    }
}

/// `value` rounded to `digits` decimals (for JSON that a person also reads).
func round(_ value: Double, _ digits: Int) -> Double {
    guard value.isFinite else { return value }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return (value * scale).rounded() / scale
}

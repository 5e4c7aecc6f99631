// SPDX-License-Identifier: MIT

/// How times are written for people: on the status line, the console and displays.
public enum TimeFormat {
    /// `m:ss` below an hour, `h:mm:ss` from an hour, `--:--` when unknown, not finite or past `Int.max` s.
    /// Seconds are truncated, so 59.9 s shows as 0:59 until a full minute is heard.
    public static func clock(_ seconds: Double?) -> String {
        // Int(exactly:), not Int(_:): a time past Int.max (a hand-edited state file, `seek 1e20`
        // on a track of unknown length) would trap.
        guard let seconds, seconds.isFinite, seconds >= 0, let total = Int(exactly: seconds.rounded(.towardZero)) else {
            return "--:--"
        }
        let h = total / 3600, m = (total % 3600) / 60, s = total % 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }

    /// Parses `[+|-]SS`, `[+|-]M:SS` or `[+|-]H:MM:SS` (fractions allowed in the last field).
    /// Returns the seconds and whether it was relative (signed); nil when malformed.
    /// A wait for people: "45 s" under a minute, else whole minutes ("30 min").
    public static func minutes(_ seconds: Double) -> String {
        seconds < 59.5 ? "\(Int(seconds.rounded())) s" : "\(Int((seconds / 60).rounded())) min"
    }

    public static func parse(_ text: String) -> (seconds: Double, relative: Bool)? {
        var body = Substring(text)
        var sign = 1.0, relative = false
        if body.first == "+" || body.first == "-" {
            relative = true
            if body.first == "-" { sign = -1 }
            body = body.dropFirst()
        }
        let fields = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var total = 0.0
        for (i, field) in fields.enumerated() {
            let isLast = i == fields.count - 1
            guard !field.isEmpty, field.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                  let value = Double(field), value.isFinite else { return nil }
            if i > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        return (sign * total, relative)
    }
}

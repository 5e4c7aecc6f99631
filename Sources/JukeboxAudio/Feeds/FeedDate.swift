// SPDX-License-Identifier: MIT

/// The dates feeds carry, read by hand into seconds since the epoch (UTC): RSS's RFC 822
/// (`Wed, 02 Oct 2002 13:00:00 GMT`, as servers really write it: no weekday, no seconds, two-digit
/// years, zones as names or offsets) and Atom's RFC 3339 (`2003-12-13T18:30:02.25+01:00`).
/// Pure: no locale, no clock, no Foundation. A date that does not read is nil (the episode keeps
/// its place in the feed's own order), never a guess.
public enum FeedDate {
    /// `text` as RFC 822 / RFC 2822, or nil.
    public static func rfc822(_ text: String) -> Int64? {
        // Words split on spaces and commas: [weekday] day month year time [zone].
        var words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
        guard words.count >= 4, words.count <= 8 else { return nil }
        if Int(words[0]) == nil { words.removeFirst() }  // the weekday, which says nothing more
        guard words.count >= 4, let day = Int(words[0]), (1...31).contains(day),
              let month = month(words[1]), var year = Int(words[2]), year >= 0 else { return nil }
        // RFC 2822 section 4.3: two digits are 19xx from 50, 20xx below; three digits add 1900.
        if words[2].count <= 2 { year += year < 50 ? 2000 : 1900 } else if words[2].count == 3 { year += 1900 }
        guard (1970...9999).contains(year), let seconds = clock(words[3]) else { return nil }
        let zone = words.count > 4 ? zoneOffset(words[4]) : 0
        guard let offset = zone, day <= daysIn(month, of: year) else { return nil }
        return days(year: year, month: month, day: day) * 86_400 + seconds - offset
    }

    /// `text` as RFC 3339 (ISO 8601's profile Atom uses), or nil. A date without a time is
    /// taken as midnight UTC (some feeds write `2024-03-01`).
    public static func rfc3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes.count <= 40, bytes[4] == 0x2D, bytes[7] == 0x2D,
              let year = digits(bytes, 0, 4), let month = digits(bytes, 5, 2), let day = digits(bytes, 8, 2),
              (1970...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(month, of: year) else { return nil }
        let date = days(year: year, month: month, day: day) * 86_400
        if bytes.count == 10 { return date }
        guard bytes.count >= 19, bytes[10] == 0x54 || bytes[10] == 0x74 || bytes[10] == 0x20,
              bytes[13] == 0x3A, bytes[16] == 0x3A, let hour = digits(bytes, 11, 2), let minute = digits(bytes, 14, 2),
              let second = digits(bytes, 17, 2), hour < 24, minute < 60, second <= 60 else { return nil }
        var i = 19
        if i < bytes.count, bytes[i] == 0x2E {  // fractions of a second: read, dropped
            i += 1
            let start = i
            while i < bytes.count, (0x30...0x39).contains(bytes[i]) { i += 1 }
            guard i > start else { return nil }
        }
        var offset: Int64 = 0
        if i < bytes.count {
            switch bytes[i] {
            case 0x5A, 0x7A: i += 1  // Z
            case 0x2B, 0x2D:
                guard bytes.count - i == 6, bytes[i + 3] == 0x3A, let h = digits(bytes, i + 1, 2), let m = digits(bytes, i + 4, 2),
                      h < 24, m < 60 else { return nil }
                offset = Int64(h * 3600 + m * 60) * (bytes[i] == 0x2D ? -1 : 1)
                i += 6
            default: return nil
            }
        }
        guard i == bytes.count else { return nil }
        return date + Int64(hour * 3600 + minute * 60 + second) - offset
    }

    /// Either form: RFC 3339 when it starts with four digits and a dash, else RFC 822.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = FeedText.collapsed(text)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 64 else { return nil }
        if let head = trimmed.utf8.prefix(5).last, head == 0x2D, trimmed.utf8.prefix(4).allSatisfy({ (0x30...0x39).contains($0) }) {
            return rfc3339(trimmed)
        }
        return rfc822(trimmed)
    }

    /// Days from 1970-01-01 to the date (proleptic Gregorian; Howard Hinnant's days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func month(_ word: String) -> Int? {
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        // Full names ("March") and the odd "Sept" are written too: the first three letters decide.
        guard word.count >= 3, word.count <= 9 else { return nil }
        return names.firstIndex(of: String(word.lowercased().prefix(3))).map { $0 + 1 }
    }

    /// `HH:MM[:SS]` as seconds into the day.
    static func clock(_ word: String) -> Int64? {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ (1...2).contains($0.count) }),
              let h = Int(parts[0]), let m = Int(parts[1]), h < 24, m < 60 else { return nil }
        let s = parts.count == 3 ? Int(parts[2]) : 0
        guard let s, s >= 0, s <= 60, h >= 0, m >= 0 else { return nil }
        return Int64(h * 3600 + m * 60 + s)
    }

    /// A zone (`+0200`, `-0500`, `GMT`, `UT`, `Z`, `EST`...) as seconds east of UTC; an unknown
    /// name is UTC, as RFC 2822 section 4.3 says of the military zones.
    static func zoneOffset(_ word: String) -> Int64? {
        let bytes = Array(word.utf8)
        if bytes.count == 5, bytes[0] == 0x2B || bytes[0] == 0x2D, let h = digits(bytes, 1, 2), let m = digits(bytes, 3, 2), m < 60 {
            return Int64(h * 3600 + m * 60) * (bytes[0] == 0x2D ? -1 : 1)
        }
        let hours: [String: Int64] = ["EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7]
        guard bytes.count <= 5, bytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        return (hours[word.uppercased()] ?? 0) * 3600
    }

    /// `count` ASCII digits at `start`, or nil.
    static func digits(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start >= 0, start + count <= bytes.count else { return nil }
        var value = 0
        for b in bytes[start..<(start + count)] {
            guard (0x30...0x39).contains(b) else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return value
    }
}

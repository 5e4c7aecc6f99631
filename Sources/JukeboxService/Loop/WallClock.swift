// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore

/// The wall clock as the parental rules need it (`Event.wallClock`): the local date and minute of
/// the day, converted here with `localtime_r` (so the time zone, `TZ` and daylight saving time are
/// the system's, and the core never converts), and whether the kernel holds the clock
/// synchronised. Both are facts; what they mean is the core's (`Reduce+Parental.swift`).
public enum WallClock {
    /// `seconds` since the epoch as the local date (days since 1970-01-01) and minute of the day.
    public static func local(at seconds: Int) -> LocalTime {
        var t = time_t(seconds)
        var parts = tm()
        localtime_r(&t, &parts)
        let day = daysFromCivil(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
        return LocalTime(day: day, minute: Int(parts.tm_hour) * 60 + Int(parts.tm_min))
    }

    /// Whether the kernel says the wall clock is synchronised: `adjtimex(2)` with no mode bits
    /// only reads (any user may), and `STA_UNSYNC` is clear once NTP (systemd-timesyncd, chrony)
    /// or an RTC read at boot by a synchronising daemon set it. A failed call: not synchronised.
    public static func synchronized() -> Bool {
        var t = timex()
        guard adjtimex(&t) >= 0 else { return false }
        return t.status & STA_UNSYNC == 0
    }

    /// Now, as the event carries it.
    public static func read() -> (time: LocalTime, synchronized: Bool) {
        (local(at: Int(time(nil))), synchronized())
    }

    /// Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

// SPDX-License-Identifier: MIT
import Glibc

/// Seconds on CLOCK_MONOTONIC (never jumps with the wall clock): the one clock for intervals,
/// deadlines and time stamps compared across threads and modules.
public func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Seconds since the epoch on CLOCK_REALTIME: for time stamps people read, never for intervals.
public func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// `seconds` since the epoch as local time, `2026-12-01 04:47:43` (`dateAndTime`) or `04:47:43.250`
/// (time of day with milliseconds).
public func wallClockText(_ seconds: Double, dateAndTime: Bool = true) -> String {
    var t = time_t(seconds.rounded(.down))
    var parts = tm()
    localtime_r(&t, &parts)
    func pad(_ v: Int32, _ width: Int = 2) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
    let time = pad(parts.tm_hour) + ":" + pad(parts.tm_min) + ":" + pad(parts.tm_sec)
    guard dateAndTime else {
        return time + "." + pad(Int32((seconds - seconds.rounded(.down)) * 1000), 3)
    }
    return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1) + "-" + pad(parts.tm_mday) + " " + time
}

/// Sleeps at least `seconds` (restarting after signals); does nothing for 0 or less.
public func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

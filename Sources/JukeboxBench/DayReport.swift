// SPDX-License-Identifier: MIT
import Foundation

/// The day section as it goes into the report's table and JSON.
extension DayRun {
    private static func mib(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }

    /// The table's lines.
    var table: [String] {
        var lines: [String] = []
        let audioPerHour = hourSeconds * speed
        lines.append(String(format: "Two days compressed: `jukebox run` on the test device at %.0fx real time, the same day twice, 48 \"hours\" of %.0f s (at most %.0f s of audio each, 1/%.0f of an hour); the player's own clock is not accelerated",
                            speed, hourSeconds, audioPerHour, 3600 / audioPerHour))
        let w = [5, 8, 9, 9, 10, 6, 8, 9, 9, 8, 9, 9, 9]
        func row(_ cells: [String]) -> String {
            zip(cells, w).map { $0.count >= $1 ? $0 + " " : $0 + String(repeating: " ", count: $1 - $0.count) }.joined()
                .trimmingCharacters(in: .whitespaces)
        }
        lines.append("  " + row(["hour", "plan", "RSS MiB", "max MiB", "anon MiB", "fds", "max fds", "threads", "max thr", "CPU s",
                                 "play B", "quiet B", "cmd B"]))
        for h in hours {
            let cells: [String] = [String(h.hour), h.plan, Self.mib(h.rssKiB), Self.mib(h.maxRssKiB), Self.mib(h.anonKiB), String(h.fds),
                                   String(h.maxFds), String(h.threads), String(h.maxThreads), String(format: "%.3f", h.cpu),
                                   String(h.playingBytes), String(h.quietBytes), String(h.commandBytes)]
            lines.append("  " + row(cells))
        }
        let rss = settled.map(\.rssKiB), anon = settled.map(\.anonKiB), fds = settled.map(\.fds), threads = settled.map(\.threads)
        let from = settled.first?.hour ?? 0, to = settled.last?.hour ?? 0
        lines.append(String(format: "  the second day (hours %d-%d, after a whole day played), at the hours' ends: RSS %@-%@ MiB, slope %+.1f KiB/h; RssAnon %@-%@ MiB, slope %+.1f KiB/h,",
                            from, to, Self.mib(rss.min() ?? 0), Self.mib(rss.max() ?? 0), rssSlopeKiBPerHour,
                            Self.mib(anon.min() ?? 0), Self.mib(anon.max() ?? 0), anonSlopeKiBPerHour))
        let firstEnd = endOfFirstDay?.anonKiB ?? 0, lastEnd = hours.last?.anonKiB ?? 0
        lines.append(String(format: "    RssAnon at the first day's end %d KiB, at the second's %d KiB: %+.1f KiB/h;", firstEnd, lastEnd, anonDayGrowthKiBPerHour))
        lines.append(String(format: "    fds %d-%d, slope %+.2f/h; threads %d-%d, slope %+.2f/h: ", fds.min() ?? 0, fds.max() ?? 0, fdsSlope,
                            threads.min() ?? 0, threads.max() ?? 0, threadsSlope) + (flat ? "flat" : "NOT flat"))
        lines.append(String(format: "  disk writes (/proc/PID/io write_bytes, 4 KiB pages as the kernel counts them): playing %d B in %.0f s = %.0f KiB per hour of play (place saves follow the wall clock; track changes come %.0fx as often as at real time: an upper bound)",
                            playingBytes, playingSeconds, playingBytesPerHour / 1024, speed)
                     + (playingMeasured ? "" : "; under a minute of steady play: too few periodic saves for a rate, the design figure below is judged"))
        lines.append(String(format: "    paused or stopped %d B in %.0f s; the commands' own saves (first %.2f s after each step) %d B for %d commands (%.1f KiB each); log to stderr %d B (the journal's, not counted)",
                            quietBytes, quietSeconds, min(1.0, hourSeconds / 8), commandBytes, commands,
                            commands > 0 ? Double(commandBytes) / Double(commands) / 1024 : 0, logBytes))
        lines.append(String(format: "    by design: %.0f place saves per hour of play, each %.1f KiB of write_bytes here (a 512-byte slot and its fdatasync, measured): %.0f KiB/h (the 512-byte records alone: %.0f KiB/h); a folder's bookmarks file is not rewritten with them (only at a pause, a new track, a seek, another source)",
                            placeSavesPerHour, placeSaveBytes / 1024, placeSavesPerHour * placeSaveBytes / 1024, placeSavesPerHour * 0.5))
        let quietCPU = hours.map(\.cpu).reduce(0, +) - hours.map(\.playingCPU).reduce(0, +)
        lines.append(String(format: "  CPU: %.3f s per hour of audio while playing (measured at %.0fx); both compressed days %.2f s, of it %.2f s outside the steady playing windows (commands, pauses, stops)",
                            playingCPUPerAudioHour, speed, hours.map(\.cpu).reduce(0, +), quietCPU))
        lines.append("  target: \(Report.targets["dayFlat"]!)")
        lines.append("  target: \(Report.targets["dayQuietWrites"]!)")
        lines.append("  target: \(Report.targets["dayPlayingWrites"]!)")
        lines.append("")
        return lines
    }

    /// The JSON object.
    var json: [String: Any] {
        let perHour: [[String: Any]] = hours.map { h -> [String: Any] in
            ["hour": h.hour, "plan": h.plan, "rssKiB": h.rssKiB, "maxRssKiB": h.maxRssKiB, "anonKiB": h.anonKiB, "fds": h.fds, "maxFds": h.maxFds,
             "threads": h.threads, "maxThreads": h.maxThreads, "cpuSeconds": round(h.cpu, 3), "playingCpuSeconds": round(h.playingCPU, 3),
             "playingSeconds": round(h.playingSeconds, 2), "quietSeconds": round(h.quietSeconds, 2),
             "playingWriteBytes": h.playingBytes, "quietWriteBytes": h.quietBytes, "commandWriteBytes": h.commandBytes, "commands": h.commands]
        }
        let summary: [String: Any] = [
            "hourSeconds": hourSeconds, "speed": speed, "flat": flat,
            "rssSlopeKiBPerHour": round(rssSlopeKiBPerHour, 1), "anonSlopeKiBPerHour": round(anonSlopeKiBPerHour, 1),
            "anonDayGrowthKiBPerHour": round(anonDayGrowthKiBPerHour, 1),
            "settledFromHour": settled.first?.hour ?? 0, "fdsSlopePerHour": round(fdsSlope, 3), "threadsSlopePerHour": round(threadsSlope, 3),
            "playingWriteBytesPerHour": round(playingBytesPerHour, 0), "playingRateMeasured": playingMeasured, "quietWriteBytes": quietBytes, "commandWriteBytes": commandBytes,
            "placeSavesPerHour": round(placeSavesPerHour, 0), "placeSaveWriteBytes": round(placeSaveBytes, 0), "cpuSecondsPerAudioHourPlaying": round(playingCPUPerAudioHour, 3),
            "logBytes": logBytes, "commands": commands,
        ]
        var out = summary
        out["hours"] = perHour
        return out
    }
}

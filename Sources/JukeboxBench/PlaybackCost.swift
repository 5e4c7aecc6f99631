// SPDX-License-Identifier: MIT
import CSndfile
import Foundation
import Glibc
import JukeboxService
import JukeboxSystem

/// Memory and CPU of the real binary playing one format, next to libsndfile's bare decode cost.
struct PlaybackCost {
    /// The format measured.
    var format: BenchFormat
    /// Median VmRSS (KiB) sampled every 50 ms while playing in real time, from the first second to
    /// the track's end (`PlaybackPlan.rssSeconds` after the process started; exit left out).
    var rssKiB: Int
    /// The highest of those VmRSS samples (KiB): what the RSS target is checked against.
    var playingMaxRssKiB: Int
    /// Median RssAnon (KiB) over the same samples: the process's own memory, without mapped files.
    var anonKiB: Int
    /// Median PSS (KiB) over the same samples: shared library pages counted as this process's
    /// share of them (/proc/PID/smaps_rollup).
    var pssKiB: Int
    /// VmHWM (KiB): the highest resident size the process ever had, read at the last sample. It is
    /// reached in the first ~60 ms, while the loader maps and relocates the shared libraries and
    /// start-up code runs, before `ColdPages` gives those pages back (docs/TESTING.md, "Memory"):
    /// a figure of its own, not the target's "while playing".
    var peakRssKiB: Int
    /// Whether the process mapped a shared Swift runtime (libswiftCore.so): false for a
    /// `--static-swift-stdlib` build, unless the test device plugin itself needs it (see `Workspace`).
    var sharedSwiftRuntime: Bool
    /// CPU seconds (user + system) the player spends per minute of audio: the difference between a
    /// long and a short run (start-up and exit cancel out), per 60 s of the length difference.
    var cpuPerAudioMinute: Double
    /// CPU seconds of one short run (start, play `shortSeconds`, exit): the fixed cost.
    var startupCpu: Double
    /// CPU seconds per minute of audio of libsndfile alone decoding the same file, in the sample
    /// type the player uses, on one thread (CLOCK_THREAD_CPUTIME_ID): the floor.
    var decodeOnlyPerAudioMinute: Double

    /// The ratio of the player's cost to the bare decode.
    var overDecode: Double { cpuPerAudioMinute / decodeOnlyPerAudioMinute }
}

/// How long the runs are.
struct PlaybackPlan {
    /// Seconds of audio played in real time for the memory samples.
    var rssSeconds: Double
    /// Lengths of the two unpaced runs whose CPU difference is the per-minute cost.
    var shortSeconds: Double, longSeconds: Double
    /// Runs of each (the least CPU is kept: interference from other processes only adds).
    var repeats: Int
}

enum PlaybackBench {
    /// Measures `format`: a real-time run on the test device for memory, unpaced runs to the `file`
    /// PCM for CPU, an in-process libsndfile decode for the floor.
    static func measure(_ format: BenchFormat, plan: PlaybackPlan, in ws: Workspace) throws -> PlaybackCost {
        let rssFile = try ws.audio(format, seconds: plan.rssSeconds)
        let child = try ws.start(["play", "--device", ws.realTimeDevice, "--socket", "", "--volume", "100", rssFile])
        var rss: [Int] = [], anon: [Int] = [], pss: [Int] = [], peak = 0, shared = false, checkedMaps = false
        while !child.poll() {
            if let m = child.memory() {
                // While the track plays: after start-up, and before the player's exit, whose
                // teardown faults in code (~2 MiB of RssFile for a few ms) that playing never runs.
                let age = monotonicNow() - child.spawnedAt
                if age >= 1, age < plan.rssSeconds {
                    rss.append(m.rss)
                    anon.append(m.anon)
                    if let p = child.pss() { pss.append(p) }
                }
                peak = max(peak, m.peak)
                if !checkedMaps, monotonicNow() - child.spawnedAt >= 0.5,
                   let maps = try? String(contentsOfFile: "/proc/\(child.pid)/maps", encoding: .utf8) {
                    shared = maps.contains("libswiftCore.so")
                    checkedMaps = true
                }
            }
            usleep(50_000)  // the sampling period, not a wait for anything
        }
        guard child.status == 0, !rss.isEmpty else {
            throw BenchError("\(format.label): real-time play exited \(child.status ?? -1): \(child.stderr.suffix(600))")
        }

        let short = try ws.audio(format, seconds: plan.shortSeconds)
        let long = try ws.audio(format, seconds: plan.longSeconds)
        func cpu(_ file: String) throws -> Double {
            var best = Double.infinity
            for _ in 0..<plan.repeats {
                let run = try ws.start(["play", "--device", ws.unpacedDevice(), "--socket", "", "--volume", "100", file])
                let status = try run.wait(timeout: 120)
                guard status == 0, let seconds = run.cpuSeconds else {
                    throw BenchError("\(format.label): play \(file) exited \(status): \(run.stderr.suffix(600))")
                }
                best = min(best, seconds)
            }
            return best
        }
        let shortCPU = try cpu(short)
        let longCPU = try cpu(long)
        var decode = Double.infinity
        for _ in 0..<plan.repeats { decode = min(decode, try decodeOnlyCPU(long)) }
        let minutes = (plan.longSeconds - plan.shortSeconds) / 60
        return PlaybackCost(format: format, rssKiB: Int(Samples(rss.map(Double.init)).median), playingMaxRssKiB: rss.max() ?? 0,
                            anonKiB: Int(Samples(anon.map(Double.init)).median),
                            pssKiB: pss.isEmpty ? 0 : Int(Samples(pss.map(Double.init)).median), peakRssKiB: peak,
                            sharedSwiftRuntime: shared, cpuPerAudioMinute: (longCPU - shortCPU) / minutes,
                            startupCpu: shortCPU, decodeOnlyPerAudioMinute: decode / (plan.longSeconds / 60))
    }

    /// CPU seconds this thread spends decoding all of `path` with libsndfile in the player's sample
    /// type (16-bit PCM as int16, lossy codecs as float), 4096 frames at a time.
    static func decodeOnlyCPU(_ path: String) throws -> Double {
        let start = threadCPU()
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw BenchError("\(path): " + String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let subtype = Int(info.format) & SF_FORMAT_SUBMASK
        let block = 4096, channels = Int(info.channels)
        var shorts = [Int16](repeating: 0, count: block * channels)
        var floats = [Float](repeating: 0, count: block * channels)
        var frames = 0
        while true {
            let got = subtype == SF_FORMAT_PCM_16
                ? Int(sf_readf_short(file, &shorts, sf_count_t(block)))
                : Int(sf_readf_float(file, &floats, sf_count_t(block)))
            if got <= 0 { break }
            frames += got
        }
        guard frames > 0 else { throw BenchError("\(path): nothing decoded") }
        return threadCPU() - start
    }
}

/// CPU seconds the calling thread has used.
func threadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// How `AlsaOutput` refills the device when the device's descriptor wakes it with less than
/// `avail_min` free (under `plug`, `avail_min` is half the buffer while the test device's timer
/// ticks once a period, as dmix's slave timer does): at that wake, with the room there is, not
/// after another sleep (a 5 ms retry before: two wakes of the writer for every refill).
final class AlsaRefillTests: ScratchCase {
    /// Writes 3.5 s of audio in blocks of 16384 frames, as the engine joins its chunks, through
    /// `plug` over the test device at real time (`avail_min` half the buffer, the timer ticking
    /// every third of it) while another thread watches the recording grow every millisecond: the
    /// refills, and the time between them; and the writing thread's voluntary context switches
    /// (each a sleep that ended): one per refill, not two.
    func testTheWriterWakesOncePerRefill() throws {
        let pcm = try TestPCM(directory: scratch.path("device"), speed: 1)
        let output = AlsaOutput(device: pcm.plugName, configText: pcm.configText)
        let rate = 44100
        try output.open(format: AudioFormat(sampleRate: rate, channels: 2, sample: .int16))
        defer { output.close() }
        let buffer = output.bufferFrames
        XCTAssertGreaterThan(buffer, 0)
        let frames = rate * 7 / 2
        let bytes = [UInt8](repeating: 0, count: frames * 4)

        // (seconds, frames recorded) every millisecond, from a thread of its own.
        let samples = Locked<[(Double, Int)]>([])
        let stop = Locked(false)
        let watcher = Thread {
            while !stop.value {
                let size = (try? FileManager.default.attributesOfItem(atPath: pcm.recordPath)[.size] as? Int) ?? 0
                samples.change { $0.append((monotonicSeconds(), size / 4)) }
                usleep(1000)
            }
        }
        watcher.start()
        let switchesBefore = voluntarySwitches()
        let waitsBefore = output.roomWaits
        var done = 0
        while done < frames {
            let count = min(16384, frames - done)
            done += try bytes.withUnsafeBytes { try output.write($0.baseAddress! + done * 4, frames: count) }
        }
        let switches = voluntarySwitches() - switchesBefore
        let waits = output.roomWaits - waitsBefore
        stop.value = true
        let seen = samples.value

        // A refill starts where the recording grows after standing still for 30 ms and ends where it
        // stands still again; the room it found is the audio played meanwhile, read as the time
        // since the previous refill ended (the device consumes at `rate`).
        var rooms: [Double] = []
        var lastGrowth: Double?, refillEnd: Double?
        var previous = seen.first?.1 ?? 0
        for (t, recorded) in seen {
            defer { previous = recorded }
            guard recorded > previous else { continue }
            if let last = lastGrowth, t - last > 0.03 {
                if let end = refillEnd { rooms.append(t - end) }
                refillEnd = nil
            }
            lastGrowth = t
            refillEnd = t
        }
        let bufferSeconds = Double(buffer) / Double(rate)
        let sorted = rooms.sorted()
        print("AlsaRefill: buffer \(String(format: "%.3f", bufferSeconds)) s; \(waits) waits for room, \(switches) voluntary switches of the writer; seconds between refills: "
              + rooms.map { String(format: "%.3f", $0) }.joined(separator: ", "))
        XCTAssertGreaterThanOrEqual(rooms.count, 3, "too few refills seen: \(rooms)")
        // A refill at each tick, a third of the buffer after the last one (0.33 s of 1 s), not
        // later; the writer woken once for it (with the 5 ms retry: twice). The first refill
        // and the start are counted with the rest, hence the margin.
        let median = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        XCTAssertLessThan(median, bufferSeconds * 0.5, "refills \(rooms)")
        XCTAssertLessThan(Double(waits), Double(rooms.count + 1) * 1.5 + 1, "\(waits) waits for room for \(rooms.count + 1) refills")
        // The kernel's count of the thread's sleeps says the same, natively. Under qemu-user (the
        // arm64 suite) it also counts the emulator's own lock waits between this thread and the
        // watcher: 25 for 7 refills that came exactly 0.333 s apart (5 December 2026).
        if ProcessInfo.processInfo.environment["JUKEBOX_QEMU_USER"] != "1" {
            XCTAssertLessThan(Double(switches), Double(rooms.count + 1) * 1.5 + 1, "\(switches) sleeps for \(rooms.count + 1) refills")
        }
        XCTAssertEqual([output.counters.stalls, output.counters.lost], [0, 0])
    }
}

/// Voluntary context switches of the calling thread so far.
private func voluntarySwitches() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
        return Int(line.dropFirst("voluntary_ctxt_switches:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
}

private func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A value shared between two threads behind a lock.
private final class Locked<T>: @unchecked Sendable {
    private var stored: T
    private let lock = NSLock()
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
    func change(_ body: (inout T) -> Void) { lock.lock(); defer { lock.unlock() }; body(&stored) }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxAudio
import JukeboxBoard
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import Synchronization

/// Time from a button edge entering the program to the command reaching the audio engine's port.
///
/// As on a board, minus the chip: the kernel's own edge records are written into pipes that the
/// real read path (`GPIOEventFeed`, libgpiod's record parser with libgpiod 1.6) hands to a
/// `GPIOSource` in a real `Runtime` loop; the loop runs the core and calls `AudioPort.play` for the
/// skip. The clock starts just before the release record is written (`next` acts on release,
/// because holding it seeks) and stops inside `play`, on the loop thread. The audio port records
/// the call and, with `engineFile` nil, does no audio.
///
/// With `engineFile`, the port forwards to a real `AudioEngine` (a paced silent output with its
/// ~100 ms virtual buffer, which drops what it holds at once, as a sound card does; every queue
/// entry that file), and a second clock stops when the engine's writer thread reports `.started`
/// for the new track: its first frames handed to the device, after the old track's were dropped
/// and the new file opened and decoded.
enum ButtonBench {
    /// Seconds from edge to engine port, and (with `engineFile`) to the new track's first frames, one per press.
    static func measure(presses: Int, engineFile: String? = nil) throws -> (port: Samples, started: Samples?) {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO27")])
        let source = GPIOSource(lines: feed.lines, roles: [.button(.next)], log: Log(level: .error))
        let mailbox = Mailbox()
        let started = Mutex<[UInt64: Double]>([:])
        let engine = engineFile.map { _ in
            AudioEngine(makeOutput: { SilentOutput() }) { report in
                if case .started(let id) = report {
                    let now = monotonicNow()
                    started.withLock { $0[id] = now }
                }
                if let event = AudioWiring.event(for: report) { mailbox.post(event) }
            }
        }
        let audio = TimedAudioPort(forwardingTo: engine)
        let tracks = (1...(presses + 2)).map { TrackInfo(path: engineFile ?? "/music/album/\($0).flac", title: "\($0)", duration: 240) }
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: SilentStatus(), log: Log(level: .error),
                              mailbox: mailbox, sources: [source])
        let loop = LoopThread(runtime, initial: [.replaceQueue(tracks)])
        defer { loop.quit(waiting: 5) }
        guard waitFor(5, { audio.count == 1 && (engine == nil || started.withLock { !$0.isEmpty }) }) else {
            throw BenchError("button: the first track never started")
        }
        var latencies: [Double] = [], toStarted: [Double] = []
        for press in 1...presses {
            let t = UInt64(monotonicNow() * 1e9)
            try feed.feed([(0, false, t)])
            // The person holds the button for 60 ms (longer than the 20 ms debounce, shorter than a hold).
            Thread.sleep(forTimeInterval: 0.06)
            let releasedAt = monotonicNow()
            try feed.feed([(0, true, UInt64(releasedAt * 1e9))])
            guard waitFor(5, { audio.count == press + 1 }) else { throw BenchError("button: press \(press) did not skip") }
            latencies.append(audio.lastAt - releasedAt)
            if engine != nil {
                let id = audio.lastID
                guard waitFor(5, { started.withLock { $0[id] != nil } }) else { throw BenchError("button: press \(press): the engine never started it") }
                toStarted.append(started.withLock { $0[id]! } - releasedAt)
            }
            // Ready for the next press: well past the debounce window of this release.
            Thread.sleep(forTimeInterval: 0.03)
        }
        // The deferred quit ends the loop, which shuts the engine down.
        return (Samples(latencies), engine == nil ? nil : Samples(toStarted))
    }
}

/// An audio port that notes when `play` was called (before forwarding it to the engine, if any).
private final class TimedAudioPort: AudioPort, @unchecked Sendable {
    private let plays = Mutex<[(id: UInt64, at: Double)]>([])
    private let engine: AudioEngine?
    init(forwardingTo engine: AudioEngine?) { self.engine = engine }
    var count: Int { plays.withLock { $0.count } }
    var lastAt: Double { plays.withLock { $0.last?.at ?? .nan } }
    var lastID: UInt64 { plays.withLock { $0.last?.id ?? 0 } }
    func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        let now = monotonicNow()
        plays.withLock { $0.append((id, now)) }
        engine?.play(id: id, path: path, from: seconds, paused: paused, next: next)
    }
    func setNext(id: UInt64, path: String) { engine?.setNext(id: id, path: path) }
    func clearNext() { engine?.clearNext() }
    func pause() { engine?.pause() }
    func resume() { engine?.resume() }
    func stop() { engine?.stop() }
    func release(token: UInt64) { engine?.release(token: token) }
    func probe() { engine?.probe() }
    func seek(to seconds: Double) { engine?.seek(to: seconds) }
    func setVolume(_ percent: Int) { engine?.setVolume(percent) }
    func position() -> (id: UInt64, seconds: Double)? { engine?.position() }
    func shutdown() { engine?.shutdown() }
}

/// A status sink that shows nothing.
final class SilentStatus: StatusSink {
    func render(_ view: StatusView) {}
    func report(_ message: String) {}
}

/// A runtime running its loop on a thread of its own, as the benchmarks drive it (the runtime is
/// used on that thread only, until `quit`; its mailbox is thread-safe).
final class LoopThread: @unchecked Sendable {
    private let runtime: Runtime
    private let done = DispatchSemaphore(value: 0)

    /// Starts `runtime.run(initial:)` on a new thread.
    init(_ runtime: Runtime, initial: [Event]) {
        self.runtime = runtime
        Thread { [self] in
            _ = self.runtime.run(initial: initial)
            done.signal()
        }.start()
    }

    /// Posts `.quit` and waits for the loop to end, at most `seconds`.
    func quit(waiting seconds: Double) {
        runtime.mailbox.post(.quit)
        _ = done.wait(timeout: .now() + seconds)
    }
}

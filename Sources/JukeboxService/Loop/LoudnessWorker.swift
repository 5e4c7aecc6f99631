// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// The thread that answers `Command.measureLoudness` (`jukebox-loudness`, at the lowest CPU
/// priority, nice 19): it reads the cache file first, answers from it when the file's path, size
/// and time match, else measures the file with `measure` (the audio adapter's libebur128 scanner,
/// plugged in by the wiring), and posts `Event.loudnessMeasured` to the mailbox. A file that
/// cannot be measured is answered with nil and its reason logged. The cache is written whole
/// (atomically) when the queue of files runs empty after a new measurement, and at `finish`.
/// Never on the loop: a scan decodes the whole file.
public final class LoudnessWorker: @unchecked Sendable {
    /// Measures the file at `path`: its track gain (dB against ReplayGain's -18 LUFS) and peak, or
    /// why not. `stop` is true once the worker is finishing (a long scan gives up early).
    public typealias Measure = @Sendable (_ path: String, _ stop: () -> Bool) -> Result<Loudness, LoudnessFailure>

    /// The most files waiting; more are answered at once with no gain (asked again only after a restart).
    public static let queueLimit = 256

    private let monitor = Monitor()
    private var queue: [String] = []
    private var stopping = false
    private var thread: NativeThread?
    private let mailbox: Mailbox
    private let cachePath: String?
    private let measure: Measure

    /// Starts the thread. `cachePath`: the cache file (nil: none, every file is scanned).
    public init(mailbox: Mailbox, cachePath: String?, measure: @escaping Measure) {
        self.mailbox = mailbox
        self.cachePath = cachePath
        self.measure = measure
        thread = NativeThread(name: "jukebox-loudness") { [self] in run() }
    }

    /// Queues `path` (from the loop; returns at once).
    public func submit(_ path: String) {
        let refused: Bool = monitor.withLock {
            guard !stopping, queue.count < Self.queueLimit else { return true }
            queue.append(path)
            monitor.broadcast()
            return false
        }
        if refused { mailbox.post(.loudnessMeasured(path: path, nil)) }
    }

    /// Stops the scan in hand (the scanner asks between chunks) and drops the queue; the thread
    /// writes the cache if a measurement is new and ends. `waiting` for that (joined), or not
    /// (the player quitting: a read stalled on a dead share must not hold up its exit; the
    /// cache was written when the queue last ran empty).
    public func finish(waiting: Bool = true) {
        monitor.withLock {
            stopping = true
            queue.removeAll()
            monitor.broadcast()
        }
        if waiting { thread?.join() } else { thread?.detach() }
        thread = nil
    }

    private func run() {
        // The lowest priority: a scan must never take the decoder's or the loop's CPU. On Linux
        // the nice value is the thread's own, and `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        var cache = LoudnessCache()
        if let cachePath {
            let read = LoudnessCache.read(cachePath)
            cache = read.cache
            if let problem = read.problem { mailbox.postLog(.warning, "loudness cache \(problem)") }
        }
        var dirty = false
        while true {
            let next: String? = monitor.withLock {
                while queue.isEmpty && !stopping { monitor.wait() }
                return stopping ? nil : queue.removeFirst()
            }
            guard let path = next else { break }
            let key = LoudnessCache.Key.of(path)
            if let key, let known = cache[key] {
                mailbox.post(.loudnessMeasured(path: path, known))
                continue
            }
            switch measure(path, { [monitor] in monitor.withLock { self.stopping } }) {
            case .success(let loudness):
                if let key {
                    cache.insert(loudness, for: key)
                    dirty = true
                }
                mailbox.post(.loudnessMeasured(path: path, loudness))
            case .failure(let error):
                if monitor.withLock({ stopping }) { break }
                mailbox.postLog(.info, "loudness: \(DisplayText.inert(path)): \(error.reason); no gain")
                mailbox.post(.loudnessMeasured(path: path, nil))
            }
            if dirty, monitor.withLock({ queue.isEmpty }) {
                save(cache)
                dirty = false
            }
        }
        if dirty { save(cache) }
    }

    private func save(_ cache: LoudnessCache) {
        guard let cachePath else { return }
        do { try cache.write(to: cachePath) } catch {
            mailbox.postLog(.warning, "loudness cache \(cachePath): \(error); not saved")
        }
    }
}

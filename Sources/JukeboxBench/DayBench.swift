// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// One "hour" of the compressed day (issue 33, target 4): what the player did and what it held.
struct DayHour {
    /// 0-23.
    var hour: Int
    /// What the hour's script did (e.g. "card: 2 skips, pause").
    var plan: String
    /// VmRSS and RssAnon (KiB), open descriptors and threads at the hour's end (always stopped
    /// then, so every hour ends in the same state), and the highest sample during the hour.
    var rssKiB: Int, maxRssKiB: Int, anonKiB: Int
    var fds: Int, maxFds: Int
    var threads: Int, maxThreads: Int
    /// CPU seconds (user + system) during the hour's window, and of them those of the steady
    /// playing windows.
    var cpu: Double, playingCPU: Double
    /// Wall seconds of the steady windows (after each command's settling time).
    var playingSeconds: Double, quietSeconds: Double
    /// `/proc/PID/io` write_bytes during the steady playing windows, the steady paused or stopped
    /// ones, and the settling time after each command (a command's own save).
    var playingBytes: Int, quietBytes: Int, commandBytes: Int
    /// Control commands sent in the hour.
    var commands: Int
}

/// The day's figures and how it was compressed.
struct DayRun {
    var hours: [DayHour]
    /// Wall seconds per "hour" and the test device's speed: each hour plays at most
    /// `hourSeconds * speed` seconds of audio.
    var hourSeconds: Double, speed: Double
    /// Bytes the player logged to stderr (under systemd they go to the journal, not counted here).
    var logBytes: Int
    /// Place saves per hour of play at real time the core orders (3600 / placeSaveSpacing).
    var placeSavesPerHour: Double
    /// write_bytes of one place save on the state folder's file system, measured by this program
    /// doing what `StateStore.savePlace` does (512 bytes into a slot, `fdatasync`) eight times.
    var placeSaveBytes: Double

    /// Least-squares slope per hour of `values` over the hours.
    static func slope(_ values: [Double]) -> Double {
        let n = Double(values.count)
        guard n > 1 else { return 0 }
        let xs = (0..<values.count).map(Double.init)
        let mx = xs.reduce(0, +) / n, my = values.reduce(0, +) / n
        let sxy = zip(xs, values).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
        let sxx = xs.map { ($0 - mx) * ($0 - mx) }.reduce(0, +)
        return sxy / sxx
    }

    /// The second day's hours: the first day played every kind of hour (the first station loads
    /// libcurl and starts the HTTP thread, each format's decoder library is paged in, the
    /// allocator's arenas and the bounded caches fill), so what the second day still adds is what
    /// the player keeps adding; growth is judged there. (Judged from the hour after every kind had
    /// played once, a late first use at hour 15 of one day read as a slope: a step to a plateau.)
    var settled: [DayHour] {
        let second = hours.filter { $0.hour >= DayBench.Kind.day.count }
        return second.count >= 3 ? second : hours
    }
    /// The last hour of the first day (nil without a second day).
    var endOfFirstDay: DayHour? { hours.count > DayBench.Kind.day.count ? hours[DayBench.Kind.day.count - 1] : nil }
    /// RssAnon (KiB) the second day added, from the first day's end to its own, per hour.
    var anonDayGrowthKiBPerHour: Double {
        guard let first = endOfFirstDay, let last = hours.last else { return 0 }
        return Double(last.anonKiB - first.anonKiB) / Double(hours.count - DayBench.Kind.day.count)
    }
    var rssSlopeKiBPerHour: Double { Self.slope(settled.map { Double($0.rssKiB) }) }
    var anonSlopeKiBPerHour: Double { Self.slope(settled.map { Double($0.anonKiB) }) }
    var fdsSlope: Double { Self.slope(settled.map { Double($0.fds) }) }
    var threadsSlope: Double { Self.slope(settled.map { Double($0.threads) }) }
    var playingSeconds: Double { hours.map(\.playingSeconds).reduce(0, +) }
    var quietSeconds: Double { hours.map(\.quietSeconds).reduce(0, +) }
    var playingBytes: Int { hours.map(\.playingBytes).reduce(0, +) }
    var quietBytes: Int { hours.map(\.quietBytes).reduce(0, +) }
    var commandBytes: Int { hours.map(\.commandBytes).reduce(0, +) }
    var commands: Int { hours.map(\.commands).reduce(0, +) }
    /// write_bytes per wall hour while playing steadily. The place saves follow the wall clock
    /// (the player's clock is not accelerated), so this is their real cost per hour of play; track
    /// changes come `speed` times as often as at real time, so it is an upper bound.
    var playingBytesPerHour: Double { playingSeconds > 0 ? Double(playingBytes) / playingSeconds * 3600 : 0 }
    /// Under a minute of steady play (the quick run) holds too few periodic saves for a rate: the
    /// design figure (a page per place save) stands for it then.
    var playingMeasured: Bool { playingSeconds >= 60 }
    /// The figure the target is judged on: measured, or the design figure when too short.
    var playingBytesPerHourJudged: Double { playingMeasured ? playingBytesPerHour : placeSavesPerHour * placeSaveBytes }
    /// CPU per hour of audio while playing (the decoding follows the audio, not the wall clock).
    var playingCPUPerAudioHour: Double {
        let audio = playingSeconds * speed
        return audio > 0 ? hours.map(\.playingCPU).reduce(0, +) / audio * 3600 : 0
    }

    /// Flat: over the second day, RssAnon (heap and stacks: what a leak grows; VmRSS also moves
    /// with the library pages the last hour's format touched) grows less than 32 KiB an hour, both
    /// as its least-squares slope over the day's hour ends and from the first day's end to the
    /// second's, and descriptors and threads at the end of each hour are the same.
    var flat: Bool {
        Set(settled.map(\.fds)).count == 1 && Set(settled.map(\.threads)).count == 1 && anonSlopeKiBPerHour < 32
            && anonDayGrowthKiBPerHour < 32
    }
}

enum DayBench {
    /// The test device's speed (`bench_fast`): the player's decoder keeps up with it on a busy
    /// 2-core machine, a stream's server too.
    static let speed = 20.0

    /// What an hour does: a list of steps, each commands then a share of the hour's window.
    enum Kind: String {
        case idle, card, album, radio, paused

        /// The hours of the day: a night of nothing, a radio morning, cards and albums in the
        /// afternoon and evening, a long pause.
        static let day: [Kind] = [.idle, .idle, .idle, .idle, .idle, .idle, .radio, .card, .paused, .idle, .album, .idle,
                                  .card, .idle, .radio, .album, .card, .paused, .card, .radio, .album, .idle, .idle, .idle]
    }

    struct Step {
        var commands: [String]
        /// Share of the hour's window.
        var share: Double
        /// What the player does once the commands have settled.
        var playing: Bool
    }

    static func steps(_ kind: Kind, cardFolder: String, albumFolder: String, station: String) -> [Step] {
        switch kind {
        case .idle: return [Step(commands: [], share: 1, playing: false)]
        // A card's swipe loads its folder and plays it (the control socket cannot read a card: the
        // swipe is stood in for by what it orders).
        case .card: return [Step(commands: ["load \(cardFolder)", "play"], share: 0.3, playing: true),
                            Step(commands: ["next"], share: 0.2, playing: true), Step(commands: ["next"], share: 0.15, playing: true),
                            Step(commands: ["pause"], share: 0.2, playing: false), Step(commands: ["stop"], share: 0.15, playing: false)]
        case .album: return [Step(commands: ["load \(albumFolder)", "play"], share: 0.35, playing: true),
                             Step(commands: ["pause"], share: 0.15, playing: false), Step(commands: ["play"], share: 0.3, playing: true),
                             Step(commands: ["stop"], share: 0.2, playing: false)]
        case .radio: return [Step(commands: ["clear", "add \(station)", "play"], share: 0.6, playing: true),
                             Step(commands: ["stop"], share: 0.4, playing: false)]
        case .paused: return [Step(commands: ["load \(albumFolder)", "play"], share: 0.2, playing: true),
                              Step(commands: ["pause"], share: 0.7, playing: false), Step(commands: ["stop"], share: 0.1, playing: false)]
        }
    }

    /// `jukebox run` on `bench_fast` (the test device at `speed` times real time), two days of 24
    /// "hours" of `hourSeconds` wall seconds each, driven through the control socket.
    static func measure(hourSeconds: Double, in ws: Workspace) throws -> DayRun {
        let stateFolder = ws.path("day-state"), socket = ws.path("day.sock"), config = ws.path("day.config.json")
        try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true)
        // Tracks of 60 s: at 20x a track change every 3 s of wall time (3:45 at real time).
        var folders: [String] = []
        for (name, format) in [("card", BenchFormat.flac), ("album", BenchFormat.ogg)] {
            let folder = ws.path("day-\(name)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let file = try ws.audio(format, seconds: 60)
            for i in 1...4 {
                try FileManager.default.copyItem(atPath: file, toPath: folder + "/0\(i) Track.\(format.kind.fileExtension)")
            }
            folders.append(folder)
        }
        let mp3 = try ws.audio(.mp3, seconds: 30)
        let server = try RadioServer(mp3: mp3, folder: ws.root)
        try """
        {"device": "\(ws.fastDevice)", "state": "\(stateFolder)/state.json", "socket": "\(socket)", "releaseDelay": 1}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        // The log goes to memory (/dev/shm), not the disk: under systemd it goes to the journal,
        // and here it would count in the player's write_bytes.
        let logBase = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : ws.root + "/") + "jukebox-day-\(getpid())"
        let child = try Child(binary: ws.binary, args: ["run", "--config", config], environment: ["HOME": ws.home], outputBase: logBase)
        defer {
            child.send(SIGTERM)
            _ = try? child.wait(timeout: 10)
        }
        func command(_ line: String) throws { try controlCommand(line, socket: socket, section: "day") }
        try command("status")
        let settle = min(1.0, hourSeconds / 8)
        var hours: [DayHour] = []
        for (hour, kind) in (Kind.day + Kind.day).enumerated() {
            var h = DayHour(hour: hour, plan: kind.rawValue, rssKiB: 0, maxRssKiB: 0, anonKiB: 0, fds: 0, maxFds: 0, threads: 0, maxThreads: 0,
                            cpu: 0, playingCPU: 0, playingSeconds: 0, quietSeconds: 0, playingBytes: 0, quietBytes: 0, commandBytes: 0,
                            commands: 0)
            let cpuStart = child.cpuNow() ?? 0
            func sample() {
                let now = ProcessSample(child.pid)
                h.maxRssKiB = max(h.maxRssKiB, now.rssKiB)
                h.maxFds = max(h.maxFds, now.fds)
                h.maxThreads = max(h.maxThreads, now.threads)
            }
            /// Sleeps `seconds`, sampling every 0.25 s.
            func watch(_ seconds: Double) {
                let end = monotonicNow() + seconds
                while true {
                    sample()
                    let left = end - monotonicNow()
                    if left <= 0 { break }
                    usleep(useconds_t(min(0.25, left) * 1_000_000))
                }
            }
            for step in steps(kind, cardFolder: folders[0], albumFolder: folders[1], station: server.url("/icy?metaint=8192")) {
                let window = step.share * hourSeconds
                var steady = window
                if !step.commands.isEmpty {
                    let w0 = writeBytes(child.pid)
                    for c in step.commands { try command(c) }
                    h.commands += step.commands.count
                    watch(settle)
                    h.commandBytes += writeBytes(child.pid) - w0
                    steady = max(0, window - settle)
                }
                let w0 = writeBytes(child.pid), c0 = child.cpuNow() ?? 0, t0 = monotonicNow()
                watch(steady)
                let bytes = writeBytes(child.pid) - w0, wall = monotonicNow() - t0
                if step.playing {
                    h.playingBytes += bytes
                    h.playingSeconds += wall
                    h.playingCPU += (child.cpuNow() ?? 0) - c0
                } else {
                    h.quietBytes += bytes
                    h.quietSeconds += wall
                }
            }
            let end = ProcessSample(child.pid)
            guard end.rssKiB > 0 else { throw BenchError("day: the player exited in hour \(hour): \(child.stderr.suffix(600))") }
            h.rssKiB = end.rssKiB
            h.anonKiB = end.anonKiB
            h.fds = end.fds
            h.threads = end.threads
            h.cpu = (child.cpuNow() ?? 0) - cpuStart
            hours.append(h)
        }
        let logBytes = child.stderr.utf8.count
        withExtendedLifetime(server) {}
        return DayRun(hours: hours, hourSeconds: hourSeconds, speed: speed, logBytes: logBytes,
                      placeSavesPerHour: 3600 / Settings().placeSaveSpacing, placeSaveBytes: slotSaveBytes(in: stateFolder))
    }

    /// write_bytes of one 512-byte slot write and its `fdatasync` in `folder` (the mean of eight,
    /// in alternate slots of an 8 KiB file, as `PlaceSlots`): what a place save costs there as the
    /// kernel counts it (a page, and on ext4 more).
    static func slotSaveBytes(in folder: String) -> Double {
        let path = folder + "/slot-cost.test"
        defer { unlink(path) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return 4096 }
        let zeros = [UInt8](repeating: 0, count: 8192), record = [UInt8](repeating: 0x7B, count: 512)
        _ = zeros.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = fsync(fd)
        close(fd)
        let before = writeBytes(getpid())
        for i in 0..<8 {
            let slot = open(path, O_RDWR | O_CLOEXEC)
            guard slot >= 0 else { return 4096 }
            _ = record.withUnsafeBytes { pwrite(slot, $0.baseAddress, $0.count, off_t(4096 * (i % 2))) }
            _ = fdatasync(slot)
            close(slot)
        }
        return Double(writeBytes(getpid()) - before) / 8
    }

    /// `write_bytes` of /proc/PID/io: bytes the process caused to be sent to a block device,
    /// counted when a page of the page cache first becomes dirty (so a 512-byte overwrite counts
    /// 4 KiB, a page rewritten before it was written back counts once; file system metadata and
    /// the journal are the kernel's, not counted). 0 once gone.
    static func writeBytes(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
            return Int(line.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}

/// VmRSS, open descriptors and threads of a process now (zeros once gone).
struct ProcessSample {
    var rssKiB = 0, anonKiB = 0, fds = 0, threads = 0

    init(_ pid: pid_t) {
        let memory = ProcessMemory.of(pid)
        rssKiB = memory?.rss ?? 0
        anonKiB = memory?.anon ?? 0
        fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? 0
        threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"))?.count ?? 0
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// State file writes during one hour of uninterrupted playback, and the most position a power cut
/// could lose.
///
/// Why simulated: an hour of real playback does not fit in a benchmark of a few minutes, and what
/// decides a write is the core alone (`reduce`: a change of track, phase or mode, or `placeSaveSpacing`
/// seconds of playing). So the core is driven with a manual clock exactly as the runtime loop
/// drives it while playing (`heard` then `tick` every 0.25 s; `trackFinished`/`trackStarted` at
/// each gapless boundary; `saved` after each write), and every save it orders is written with
/// the real `StateStore` (the queue file: temp file, fsync, rename, folder fsync; the place: one
/// slot of the sidecar overwritten, fdatasync) to a real file, whose size is
/// counted: `persist` rewrites the queue file, `persistPlace` only the place sidecar beside it, as
/// `StateWriter` does. `singleFile` writes the whole state at every save instead, as the layout
/// before the sidecar did (the "before" figure). The queue: tracks of 3:45 with realistic paths and tags (an album of 16, or a whole
/// library of 2,000 queued from a folder), default settings.
struct StateWrites {
    /// Tracks in the queue.
    var queueLength: Int
    /// Whether every save rewrote the whole state (the layout before the place sidecar).
    var singleFile = false
    /// Hours of playback simulated.
    var hours: Double
    /// `StateStore.save` calls.
    var writes: Int
    /// Bytes written (a queue save replaces the whole queue file; a place save overwrites the
    /// 512-byte record area of one slot of the sidecar).
    var bytes: Int
    /// The same writes counted in 4 KiB pages (what a flash translation layer writes at least per
    /// file write, before the file system's own metadata).
    var pages: Int
    /// The largest stretch of audio (seconds) between two writes while playing: what a power cut at
    /// the worst moment loses.
    var maxPositionLost: Double
    /// CPU seconds this thread spent in `StateStore.save` (encoding and writing).
    var saveCPU: Double
    /// Wall seconds of each save (a queue save: encoding, write, two fsyncs, rename; a place
    /// save: one slot written, `fdatasync`): how long the state writer's thread is busy with one
    /// save on this machine's disk.
    var saveWall: Samples

    var writesPerHour: Double { Double(writes) / hours }
    var bytesPerHour: Double { Double(bytes) / hours }
}

enum StateWritesBench {
    static func measure(queueLength: Int, singleFile: Bool = false, in ws: Workspace) throws -> StateWrites {
        let store = StateStore(path: ws.path("state-hour-\(queueLength)\(singleFile ? "-single" : "")/state.json"))
        var queueHash: UInt64?
        let trackSeconds = 225.0, step = 0.25
        let tracks = (0..<queueLength).map { (i: Int) -> TrackInfo in
            let album = "An Album With A Longer Name \(i / 16)", number = i % 16 + 1
            return TrackInfo(path: "/srv/music/Some Artist/\(album)/\(number < 10 ? "0" : "")\(number) A Song Title Number \(i).flac",
                             title: "A Song Title Number \(i)", artist: "Some Artist", album: album,
                             trackNumber: number, discNumber: 1, duration: trackSeconds)
        }
        var saveCPU = 0.0
        var saveWall: [Double] = []
        var state = State()
        var now = 1000.0
        state.now = now
        var playID: UInt64?, nextID: UInt64?
        var writes = 0, bytes = 0, pages = 0
        var audioTime = 0.0, lastSaveAt = 0.0, maxGap = 0.0
        var position = 0.0
        var pending: [Event] = [.replaceQueue(tracks)]
        func run(_ events: [Event]) throws {
            var queue = events
            while !queue.isEmpty {
                let event = queue.removeFirst()
                for command in reduce(&state, event) {
                    switch command {
                    case .startTrack(let id, _, let at, _, let next, _, _):
                        playID = id
                        nextID = next?.playID
                        position = at
                        queue.append(.trackStarted(playID: id))
                    case .setNext(let id, _, _, _): nextID = id
                    case .clearNext: nextID = nil
                    case .persist(let snapshot), .persistPlace(let snapshot):
                        let before = threadCPU(), started = monotonicNow()
                        var written = store.path
                        do {
                            if case .persistPlace = command, !singleFile, let queueHash {
                                try store.savePlace(snapshot, queueHash: queueHash)
                                written = store.placePath
                            } else {
                                queueHash = try store.save(snapshot)
                            }
                        } catch { throw BenchError("state store: \(error)") }
                        saveWall.append(monotonicNow() - started)
                        saveCPU += threadCPU() - before
                        writes += 1
                        // A place save overwrites the 512-byte record area of one slot of the
                        // sidecar (`PlaceSlots`); a queue save replaces the whole file.
                        let size = written == store.placePath ? 512
                            : (try? FileManager.default.attributesOfItem(atPath: written)[.size] as? Int) ?? 0
                        bytes += size
                        pages += (size + 4095) / 4096
                        if state.phase == .playing { maxGap = max(maxGap, audioTime - lastSaveAt) }
                        lastSaveAt = audioTime
                        queue.append(.saved(error: nil))
                    default: break
                    }
                }
            }
        }
        try run(pending)
        let hour = 3600.0
        while audioTime < hour {
            now += step
            audioTime += step
            position += step
            pending = []
            if position >= trackSeconds, let current = playID {
                position -= trackSeconds
                pending.append(.trackFinished(playID: current, next: nextID))
                if let next = nextID {
                    playID = next
                    nextID = nil
                    pending.append(.trackStarted(playID: next))
                }
            }
            if let id = playID { pending.append(.heard(playID: id, seconds: position)) }
            pending.append(.tick(now: now))
            try run(pending)
        }
        maxGap = max(maxGap, audioTime - lastSaveAt)
        return StateWrites(queueLength: queueLength, singleFile: singleFile, hours: audioTime / hour, writes: writes, bytes: bytes, pages: pages,
                           maxPositionLost: maxGap, saveCPU: saveCPU, saveWall: Samples(saveWall))
    }
}

/// The real binary's state file writes during a short real-time play, watched with inotify: a
/// check that the runtime carries out the core's saves as the simulation assumes (one write per
/// change of track or phase, then one every `placeSaveSpacing` = 4 s while playing), not more.
struct LiveStateWrites {
    /// Seconds of audio played.
    var seconds: Double
    /// Complete writes: renames onto the state file or its place sidecar, and the sidecar's
    /// in-place overwrites (closed after writing).
    var writes: Int
    /// Seconds after the process started at which each write landed.
    var times: [Double]
    /// Size of the state file at the end, in bytes.
    var finalBytes: Int
}

extension StateWritesBench {
    static func live(seconds: Double, in ws: Workspace) throws -> LiveStateWrites {
        let folder = ws.path("state-live")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let statePath = folder + "/state.json"
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw BenchError("inotify_init1: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard inotify_add_watch(fd, folder, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0 else {
            throw BenchError("inotify_add_watch \(folder): \(String(cString: strerror(errno)))")
        }
        let file = try ws.audio(.flac, seconds: seconds)
        let child = try ws.start(["play", "--device", ws.realTimeDevice, "--socket", "", "--volume", "100",
                                  "--state", statePath, file])
        var times: [Double] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func drain() {
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { return }
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= n {
                    let (mask, nameLength) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (event.mask, Int(event.len))
                    }
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let name = String(decoding: buffer[nameStart..<(nameStart + nameLength)].prefix { $0 != 0 }, as: UTF8.self)
                    let renamed = mask & UInt32(IN_MOVED_TO) != 0 && (name == "state.json" || name == "state.json.place")
                    let overwritten = mask & UInt32(IN_CLOSE_WRITE) != 0 && name == "state.json.place"
                    if renamed || overwritten {
                        times.append(monotonicNow() - child.spawnedAt)
                    }
                    offset = nameStart + nameLength
                }
            }
        }
        // Polled every 20 ms: the times need no more precision than that, the count is exact.
        _ = waitFor(seconds + 20) {
            drain()
            return child.poll()
        }
        drain()
        guard child.status == 0 else {
            throw BenchError("live state writes: play exited \(child.status.map(String.init) ?? "late"): \(child.stderr.suffix(600))")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: statePath)[.size] as? Int) ?? 0
        return LiveStateWrites(seconds: seconds, writes: times.count, times: times, finalBytes: size)
    }
}

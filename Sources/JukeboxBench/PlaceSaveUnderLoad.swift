// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// How long one place save takes while another program fills the same file system with data
/// (a download, a log, a copy to the card): the time a power cut can lose beyond the save
/// interval. Both ways of writing the ~150-byte place are measured in the same run, in turns:
/// a temp file, `fsync`, rename, folder `fsync` (the sidecar's first layout: two journal
/// commits, each waiting for the other program's dirty data in ext4's ordered mode), and the
/// slotted sidecar's overwrite of one slot's 512-byte record with `fdatasync` (`PlaceSlots`).
struct PlaceSaveUnderLoad {
    /// Saves measured per way.
    var saves: Int
    /// MiB the other program wrote meanwhile.
    var otherMiB: Double
    /// Wall seconds of each save: rename layout, then slotted.
    var renamed: Samples
    var slotted: Samples
}

enum PlaceSaveUnderLoadBench {
    static func measure(saves: Int, in ws: Workspace) throws -> PlaceSaveUnderLoad {
        let folder = ws.path("place-under-load")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = StateStore(path: folder + "/state.json")
        let tracks = (1...16).map { TrackInfo(path: "/srv/music/Album/\($0).flac", title: "Track \($0)", duration: 225) }
        let hash = try store.save(Snapshot(tracks: tracks, current: 0))
        let oldLayout = folder + "/old.place"
        // The other program: 1 MiB every 10 ms (a fast card's speed) into a file it truncates
        // every 256 MiB, never syncing (the kernel's writeback and the commits carry its data).
        let stop = Flag()
        let other = Thread {
            let path = folder + "/other.bin"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return }
            defer { close(fd); unlink(path) }
            let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
            var inFile = 0
            while !stop.isSet {
                if inFile >= 256 { ftruncate(fd, 0); lseek(fd, 0, SEEK_SET); inFile = 0 }
                guard chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == chunk.count else { return }
                inFile += 1
                stop.count()
                usleep(10_000)
            }
        }
        other.start()
        defer { stop.set() }
        // Let it build up dirty data first.
        usleep(300_000)
        var renamed: [Double] = [], slotted: [Double] = []
        for i in 0..<saves {
            let snapshot = Snapshot(tracks: tracks, current: 1, position: Double(i) * 5, phase: .playing)
            var started = monotonicNow()
            // The first layout's bytes: the same one-line record (`PlaceFile.bytes`).
            let line = "{\"current\":1,\"phase\":\"playing\",\"position\":\(snapshot.position),\"queue\":\"\(String(hash, radix: 16))\","
                + "\"repeat\":\"off\",\"version\":1,\"volume\":\(snapshot.volume)}\n"
            do { try writeAtomically(Array(line.utf8), to: oldLayout) } catch { throw BenchError("\(error)") }
            renamed.append(monotonicNow() - started)
            started = monotonicNow()
            do { try store.savePlace(snapshot, queueHash: hash) } catch { throw BenchError("\(error)") }
            slotted.append(monotonicNow() - started)
            usleep(100_000)
        }
        stop.set()
        while !other.isFinished { usleep(10_000) }
        return PlaceSaveUnderLoad(saves: saves, otherMiB: Double(stop.counted), renamed: Samples(renamed), slotted: Samples(slotted))
    }
}

/// A flag one thread sets and another reads, and what the other counted.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    private var total = 0
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    var counted: Int { lock.lock(); defer { lock.unlock() }; return total }
    func set() { lock.lock(); value = true; lock.unlock() }
    func count() { lock.lock(); total += 1; lock.unlock() }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The loudness cache file (round trip, bounds, a damaged file ignored) and the worker that
/// answers `measureLoudness` from it or with a scan (a fake scan here: the real one is the audio
/// adapter's, `LoudnessScannerTests`, and runs through the binary in `LoudnessBinaryTests`).
final class LoudnessCacheTests: XCTestCase {
    func testWrittenThenReadGivesTheSameEntriesAndLeavesNoTemporaryFile() throws {
        let dir = TempDir()
        var cache = LoudnessCache()
        let a = LoudnessCache.Key(path: "/music/a b/ü.flac", size: 1234, mtime: 1_700_000_000_123_456_789)
        let b = LoudnessCache.Key(path: "/music/b.mp3", size: 0, mtime: -5)
        cache.insert(Loudness(trackGain: -7.25, trackPeak: 0.98), for: a)
        cache.insert(Loudness(trackGain: 3.5), for: b)
        cache.insert(Loudness(trackGain: 1), for: LoudnessCache.Key(path: "/music/tab\there", size: 1, mtime: 1))
        try cache.write(to: dir.file("state.json.loudness"))
        XCTAssertEqual(dir.list(), ["state.json.loudness"])
        let read = LoudnessCache.read(dir.file("state.json.loudness"))
        XCTAssertNil(read.problem)
        XCTAssertEqual(read.cache, cache)
        XCTAssertEqual(read.cache[a], Loudness(trackGain: -7.25, trackPeak: 0.98))
        XCTAssertEqual(read.cache[b], Loudness(trackGain: 3.5))
        XCTAssertEqual(read.cache.entries.count, 2, "a path with a tab is not kept")
        // The same path changed (another size or time) is another key: the old entry goes.
        var changed = read.cache
        changed.insert(Loudness(trackGain: 0), for: LoudnessCache.Key(path: a.path, size: 99, mtime: a.mtime))
        XCTAssertNil(changed[a])
        XCTAssertEqual(changed.entries.count, 2)
    }

    func testTheOldestAreDroppedPastTheLimit() {
        var cache = LoudnessCache(capacity: 3)
        for i in 1...5 { cache.insert(Loudness(trackGain: Double(i)), for: LoudnessCache.Key(path: "/m/\(i)", size: 1, mtime: 1)) }
        XCTAssertEqual(Set(cache.entries.keys.map(\.path)), ["/m/3", "/m/4", "/m/5"])
        XCTAssertEqual(LoudnessCache.limit, 20_000)
    }

    func testAbsentIsEmptyAndDamagedIsIgnoredWithAReason() {
        let dir = TempDir()
        let absent = LoudnessCache.read(dir.file("none"))
        XCTAssertEqual(absent.cache, LoudnessCache())
        XCTAssertNil(absent.problem)
        let damaged = ["garbage\n", "jukebox-loudness 1\n-3\t0.5\t12\n",
                       "jukebox-loudness 1\nnan\t0.5\t1\t1\t/a\n", "jukebox-loudness 1\n-3\t0.5\t1\t1\trelative\n",
                       "jukebox-loudness 1\n-300\t0.5\t1\t1\t/a\n", "\u{0}\u{1}\u{2}"]
        for text in damaged {
            dir.write("c", text)
            let read = LoudnessCache.read(dir.file("c"))
            XCTAssertEqual(read.cache, LoudnessCache(), text)
            XCTAssertTrue(read.problem?.hasSuffix("ignored") == true, read.problem ?? "no problem for \(text.debugDescription)")
        }
    }

    /// Drains the mailbox until `count` measurements came.
    private func answers(_ mailbox: Mailbox, _ count: Int) -> [Event] {
        var got: [Event] = []
        XCTAssertTrue(waitFor(20) {
            got += mailbox.drain()
            return got.count >= count
        }, "\(got)")
        return got
    }

    func testTheWorkerScansOnceAndAnswersFromTheCacheAfterARestart() throws {
        let dir = TempDir()
        let song = dir.write("song.flac", "not audio: the fake scan does not read it")
        let broken = dir.write("broken.flac", "x")
        let scans = Counter()
        let measure: LoudnessWorker.Measure = { path, _ in
            scans.add()
            return path.hasSuffix("broken.flac") ? .failure(LoudnessFailure(reason: "cannot decode")) : .success(Loudness(trackGain: -4, trackPeak: 0.5))
        }
        let cachePath = dir.file("state.json.loudness")
        let mailbox = Mailbox()
        var worker = LoudnessWorker(mailbox: mailbox, cachePath: cachePath, measure: measure)
        worker.submit(song)
        worker.submit(broken)
        XCTAssertEqual(answers(mailbox, 2), [.loudnessMeasured(path: song, Loudness(trackGain: -4, trackPeak: 0.5)),
                                             .loudnessMeasured(path: broken, nil)])
        XCTAssertTrue(mailbox.drainLog().contains { $0.1.contains("cannot decode; no gain") })
        worker.finish()
        XCTAssertEqual(scans.value, 2)
        XCTAssertEqual(LoudnessCache.read(cachePath).cache.entries.count, 1, "only the measured file is kept")

        // A new player: the cache answers without a scan; a file changed since is scanned again.
        worker = LoudnessWorker(mailbox: mailbox, cachePath: cachePath, measure: measure)
        worker.submit(song)
        XCTAssertEqual(answers(mailbox, 1), [.loudnessMeasured(path: song, Loudness(trackGain: -4, trackPeak: 0.5))])
        XCTAssertEqual(scans.value, 2)
        dir.write("song.flac", "changed: another size")
        worker.submit(song)
        XCTAssertEqual(answers(mailbox, 1).count, 1)
        XCTAssertEqual(scans.value, 3)
        worker.finish()
    }

    func testADamagedCacheIsLoggedAndTheWorkerGoesOn() {
        let dir = TempDir()
        let cachePath = dir.write("state.json.loudness", "jukebox-loudness 1\nbroken line\n")
        let song = dir.write("song.flac", "x")
        let mailbox = Mailbox()
        let worker = LoudnessWorker(mailbox: mailbox, cachePath: cachePath) { _, _ in .success(Loudness(trackGain: 2)) }
        worker.submit(song)
        XCTAssertEqual(answers(mailbox, 1), [.loudnessMeasured(path: song, Loudness(trackGain: 2))])
        XCTAssertTrue(mailbox.drainLog().contains { $0.0 == .warning && $0.1.contains("line 2 is damaged; ignored") })
        worker.finish()
        XCTAssertNil(LoudnessCache.read(cachePath).problem, "written anew")
    }
}

/// A count shared with a worker thread.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

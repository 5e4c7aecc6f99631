// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The two-file layout: the queue file rewritten only with the queue, the place in a small
/// sidecar tied to it; an old single-file state still loads, and a sidecar that is missing,
/// stale or damaged never costs more than the place saved with the queue.
final class PlaceFileTests: XCTestCase {
    let tracks = (1...3).map { TrackInfo(path: "/m/\($0).flac", title: "T\($0)", duration: 200) }

    func testThePlaceIsSavedSmallBesideTheQueueAndWinsWhenItBelongsToIt() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let queued = Snapshot(tracks: tracks, current: 0, position: 1, phase: .playing, volume: 70)
        let hash = try store.save(queued)
        let queueBytes = dir.read("state.json")
        var later = queued
        later.current = 2
        later.position = 123.25
        later.phase = .paused
        later.repeatMode = .all
        later.volume = 40
        try store.savePlace(later, queueHash: hash)
        XCTAssertEqual(dir.read("state.json"), queueBytes, "the queue file is not touched by a place save")
        let place = try XCTUnwrap(FileManager.default.contents(atPath: dir.file("state.json.place")))
        XCTAssertEqual(place.count, 8192, "two 4 KiB slots")
        XCTAssertLessThan(try XCTUnwrap(place.firstIndex(of: 0x0A)), 200, "a record of one short line")
        XCTAssertEqual(store.load().snapshot, later)
        XCTAssertEqual(dir.list(), ["state.json", "state.json.place"])
        XCTAssertTrue(queueBytes?.contains("\"writeID\" : ") == true, queueBytes ?? "")
    }

    /// The sidecar is written by hand (JSONEncoder's code would stay resident): it must say what
    /// JSONEncoder said, for any place.
    func testTheHandWrittenPlaceSaysWhatJSONEncoderSaid() throws {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_PLACE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("PlaceFileTests seed \(seed) (JUKEBOX_PLACE_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        let phases = ["playing", "paused", "stopped", "odd \"quoted\" \\ phase\u{01}\n", "é♪"]
        let positions: [Double] = [0, 1, 61.5, 123.25, 1e-7, .leastNonzeroMagnitude, 1e20, 3600.000001, .greatestFiniteMagnitude]
        for i in 0..<200 {
            var snapshot = Snapshot(tracks: tracks)
            snapshot.current = i % 7 == 0 ? nil : Int(rng.next() % 5000)
            snapshot.position = i < positions.count ? positions[i] : Double(rng.next() % 10_000_000) / 1000
            let phase = phases[Int(rng.next() % UInt64(phases.count))]
            snapshot.repeatMode = RepeatMode.allCases[Int(rng.next() % 3)]
            snapshot.volume = Int(rng.next() % 101)
            var place = PlaceFile(snapshot, queueHash: rng.next())
            // The sidecar's text, odd ones too (a hand-edited file): quoted as JSONEncoder quotes.
            place.phase = phase
            place.sequence = i % 3 == 0 ? nil : rng.next() >> (rng.next() % 64)
            let bytes = place.bytes()
            XCTAssertEqual(bytes.last, 0x0A)
            XCTAssertEqual(PlaceFile.decode(bytes), place, String(decoding: bytes, as: UTF8.self))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let ours = try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary
            let theirs = try JSONSerialization.jsonObject(with: encoder.encode(place)) as? NSDictionary
            XCTAssertEqual(ours, theirs, String(decoding: bytes, as: UTF8.self))
        }
        var broken = PlaceFile(Snapshot(tracks: tracks), queueHash: 1)
        broken.position = .nan
        XCTAssertEqual(broken.bytes(), [0x0A], "as JSONEncoder, which refuses it")
        XCTAssertNil(PlaceFile.decode(broken.bytes()))
    }

    func testAPlaceFromAnotherQueueFileIsIgnoredAndTheQueueFilesOwnPlaceUsed() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let first = Snapshot(tracks: tracks, current: 0, position: 50, phase: .playing)
        try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 99, phase: .playing), queueHash: try store.save(first))
        // The same queue and place written again (a power cut then lands between the two writes):
        // a new write of the queue file never matches the old sidecar, even with equal content.
        try store.save(first)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, first)
        XCTAssertEqual(loaded.messages, [], "a stale sidecar is the normal trace of a cut between two writes")
    }

    // MARK: The two slots

    /// Each place save overwrites the slot that does not hold the newest record, in the same file
    /// (no rename: no journal commit), numbered one after it.
    func testPlaceSavesTakeTurnsInTheTwoSlotsOfOneFile() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let hash = try store.save(Snapshot(tracks: tracks, current: 0))
        var inode: UInt64?
        for i in 1...5 {
            try store.savePlace(Snapshot(tracks: tracks, current: 1, position: Double(i), phase: .playing), queueHash: hash)
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: dir.file("state.json.place")).map(Array.init))
            let records = PlaceSlots.records(bytes)
            XCTAssertEqual(records.map(\.slot), i == 1 ? [0] : [0, 1], "after save \(i)")
            let newest = try XCTUnwrap(PlaceSlots.newest(records))
            XCTAssertEqual(newest.sequence, UInt64(i))
            XCTAssertEqual(newest.slot, (i - 1) % 2, "slots in turn")
            XCTAssertEqual(newest.place.position, Double(i))
            XCTAssertEqual(store.load().snapshot?.position, Double(i))
            let now = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir.file("state.json.place"))[.systemFileNumber] as? UInt64)
            if let inode { XCTAssertEqual(now, inode, "overwritten in place, not replaced") }
            inode = now
        }
        XCTAssertEqual(dir.list(), ["state.json", "state.json.place"])
    }

    /// A power cut in the middle of a slot's write leaves that slot torn, however it tears: the
    /// other slot's record (the save before) is used, and nothing is called damaged.
    func testATornSlotFallsBackToTheOtherWithoutAWord() throws {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_PLACE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("PlaceFileTests torn-slot seed \(seed) (JUKEBOX_PLACE_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let hash = try store.save(Snapshot(tracks: tracks, current: 0))
        let path = dir.file("state.json.place")
        var tears = 0
        for trial in 0..<100 {
            try store.savePlace(Snapshot(tracks: tracks, current: 1, position: 10, phase: .playing), queueHash: hash)
            let before = try XCTUnwrap(FileManager.default.contents(atPath: path).map(Array.init))
            try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 20, phase: .paused), queueHash: hash)
            let written = try XCTUnwrap(FileManager.default.contents(atPath: path).map(Array.init))
            var torn = written
            let slot = try XCTUnwrap(PlaceSlots.newest(PlaceSlots.records(torn))).slot
            // Torn: the new record's bytes up to a point, the old one's after it; or garbage
            // sectors; or a few bytes flipped.
            // The record: its line and its hash line (what follows is never looked at, below).
            let start = slot * 4096
            let newlines = written[start...].indices.filter { written[$0] == 0x0A }.prefix(2)
            let range = start..<(try XCTUnwrap(newlines.last) + 1)
            switch trial % 3 {
            case 0:
                let cut = Int.random(in: range, using: &rng)
                torn.replaceSubrange(cut..<range.upperBound, with: before[cut..<range.upperBound])
            case 1:
                for i in range where rng.next() % 4 == 0 { torn[i] = UInt8(truncatingIfNeeded: rng.next()) }
            default:
                torn[Int.random(in: range, using: &rng)] ^= UInt8(1 << (rng.next() % 8))
            }
            // Bytes that happen to be the same tear nothing.
            guard Array(torn[range]) != Array(written[range]) else { continue }
            tears += 1
            _ = FileManager.default.createFile(atPath: path, contents: Data(torn))
            let loaded = store.load()
            XCTAssertEqual(loaded.snapshot?.position, 10, "trial \(trial): the save before the torn one")
            XCTAssertEqual(loaded.snapshot?.current, 1, "trial \(trial)")
            XCTAssertEqual(loaded.messages, [], "trial \(trial)")
            XCTAssertEqual(dir.list(), ["state.json", "state.json.place"], "trial \(trial)")
            // A torn page may leave garbage after the record area too: the slot is written again
            // all the same, and then read.
            for i in (slot * 4096 + 512)..<((slot + 1) * 4096) where rng.next() % 8 == 0 { torn[i] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = FileManager.default.createFile(atPath: path, contents: Data(torn))
            try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 30, phase: .paused), queueHash: hash)
            XCTAssertEqual(store.load().snapshot?.position, 30, "trial \(trial): the slot written again")
        }
        XCTAssertGreaterThan(tears, 50, "most trials tear something")
    }

    /// Both slots torn (or a file of the right size that is not a sidecar): moved aside as any
    /// damaged sidecar; the next save creates a new one.
    func testASidecarWithNoIntactSlotIsDamaged() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: .playing)
        let hash = try store.save(saved)
        _ = FileManager.default.createFile(atPath: dir.file("state.json.place"), contents: Data(repeating: 0x41, count: 8192))
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, saved)
        XCTAssertTrue(loaded.messages.first?.contains("state.json.place.damaged-1") == true, "\(loaded.messages)")
        var later = saved
        later.position = 30
        try store.savePlace(later, queueHash: hash)
        XCTAssertEqual(store.load().snapshot, later)
    }

    /// A sidecar of the first layout (one JSON line, no `seq`) is read, and the next save turns it
    /// into the slotted one; a symlink in its place is replaced, never written through.
    func testAOneLineSidecarIsReadAndReplacedBySlotsAndASymlinkIsNotFollowed() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let hash = try store.save(Snapshot(tracks: tracks, current: 0))
        let old = PlaceFile(Snapshot(tracks: tracks, current: 2, position: 42.5, phase: .paused), queueHash: hash)
        _ = FileManager.default.createFile(atPath: dir.file("state.json.place"), contents: Data(old.bytes()))
        XCTAssertEqual(store.load().snapshot?.position, 42.5)
        try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 50, phase: .playing), queueHash: hash)
        XCTAssertEqual(FileManager.default.contents(atPath: dir.file("state.json.place"))?.count, 8192)
        XCTAssertEqual(store.load().snapshot?.position, 50)

        let target = dir.file("elsewhere")
        _ = FileManager.default.createFile(atPath: target, contents: Data(repeating: 0, count: 8192))
        try FileManager.default.removeItem(atPath: dir.file("state.json.place"))
        symlink(target, dir.file("state.json.place"))
        try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 60, phase: .playing), queueHash: hash)
        XCTAssertEqual(FileManager.default.contents(atPath: target), Data(repeating: 0, count: 8192), "not written through")
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: dir.file("state.json.place")))
        XCTAssertEqual(store.load().snapshot?.position, 60)
    }

    func testAStateFileFromTheOldLayoutLoadsAsItIs() {
        let dir = TempDir()
        // Written by the single-file layout: no writeID, no sidecar.
        let old = """
        {
          "current" : 1,
          "phase" : "paused",
          "position" : 42.5,
          "repeat" : "one",
          "shuffle" : false,
          "shuffleSeed" : 0,
          "tracks" : [
            { "path" : "/m/1.flac", "title" : "T1" },
            { "path" : "/m/2.flac", "title" : "T2" }
          ],
          "version" : 1,
          "volume" : 55
        }
        """
        dir.write("state.json", old)
        let loaded = StateStore(path: dir.file("state.json")).load()
        XCTAssertEqual(loaded.snapshot, Snapshot(tracks: [TrackInfo(path: "/m/1.flac", title: "T1"), TrackInfo(path: "/m/2.flac", title: "T2")],
                                                 current: 1, position: 42.5, phase: .paused, repeatMode: .one, volume: 55))
        XCTAssertEqual(loaded.messages, [])
        XCTAssertEqual(dir.read("state.json"), old, "loading writes nothing")
    }

    func testADamagedPlaceIsMovedAsideAndTheQueueFilesPlaceUsed() throws {
        for damage in ["{\"queue\": \"", "", "out of range"] {
            let dir = TempDir()
            let store = StateStore(path: dir.file("state.json"))
            let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: .playing)
            let hash = String(try store.save(saved), radix: 16)
            let outOfRange = "{\"version\":1,\"queue\":\"\(String(repeating: "0", count: 16 - hash.count) + hash)\",\"current\":7,"
                + "\"position\":1,\"phase\":\"playing\",\"repeat\":\"off\",\"volume\":5}"
            let damage = damage == "out of range" ? outOfRange : damage
            dir.write("state.json.place", damage)
            let loaded = store.load()
            XCTAssertEqual(loaded.snapshot, saved, damage)
            XCTAssertEqual(loaded.messages.count, 1, damage)
            XCTAssertTrue(loaded.messages.first?.contains("state.json.place.damaged-1") == true, "\(loaded.messages)")
            XCTAssertEqual(dir.read("state.json.place.damaged-1"), damage, "kept for a person to look at")
            XCTAssertEqual(dir.list(), ["state.json", "state.json.place.damaged-1"])
        }
    }

    func testAPlaceThatCannotBeReadIsKeptAsideNotWrittenOver() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: .playing)
        try store.save(saved)
        // Reading /proc/self/mem from its start fails with EIO, even for root.
        symlink("/proc/self/mem", dir.file("state.json.place"))
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, saved)
        XCTAssertTrue(loaded.messages.first?.contains("cannot read the place file") == true, "\(loaded.messages)")
        XCTAssertEqual(dir.list(), ["state.json", "state.json.place.damaged-1"])
    }

    func testAStalePlaceFromALongerQueueIsNoDamage() throws {
        // A power cut after the queue file shrank and before the next place save: the sidecar
        // still points at track 3 of the old queue, which this queue does not have.
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 10), queueHash: try store.save(Snapshot(tracks: tracks)))
        let shorter = Snapshot(tracks: Array(tracks.prefix(1)), current: 0, position: 4, phase: .paused)
        try store.save(shorter)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, shorter)
        XCTAssertEqual(loaded.messages, [])
        XCTAssertEqual(dir.list(), ["state.json", "state.json.place"])
    }

    func testAQueueFileThatIsGoneTakesNothingWithIt() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        try store.savePlace(Snapshot(tracks: tracks, current: 1, position: 10), queueHash: try store.save(Snapshot(tracks: tracks)))
        try FileManager.default.moveItem(atPath: dir.file("state.json"), toPath: dir.file("elsewhere.json"))
        XCTAssertNil(store.load().snapshot)
        XCTAssertEqual(dir.list(), ["elsewhere.json", "state.json.place"], "the sidecar is left as it is")
    }

    // MARK: The writer thread

    func testTheWriterWritesOnlyTheNewestAndThePlaceOnlyWhileTheQueueIsUnchanged() throws {
        let dir = TempDir()
        let gate = Gate()
        var store = StateStore(path: dir.file("state.json"))
        store.beforeSync = { gate.pass() }
        let mailbox = Mailbox()
        let writer = StateWriter(store: store, mailbox: mailbox)
        defer { gate.open(); writer.finish() }
        writer.submit(Snapshot(tracks: tracks, current: 0), queueChanged: true)
        gate.waitForSomeoneAtIt()
        // While the first write is held at its fsync, three more saves come: only the last is written.
        for position in [1.0, 2.0, 3.0] { writer.submit(Snapshot(tracks: tracks, current: 0, position: position), queueChanged: false) }
        gate.open()
        writer.waitUntilIdle()
        let results = mailbox.drainResults()
        XCTAssertEqual(results.count, 2, "two writes for four saves: \(results)")
        XCTAssertEqual(store.load().snapshot?.position, 3)
        XCTAssertNotNil(dir.read("state.json.place"), "the later saves wrote the place only")
        XCTAssertFalse(dir.read("state.json")?.contains("\"position\" : 3") ?? true, "and not the queue file")
    }

    /// Storage slower than a second per save is said in the journal (it is position a power cut
    /// can lose beyond the interval), at most once every ten minutes; a fast save says nothing.
    func testASlowSaveIsReportedAtMostEveryTenMinutes() throws {
        let dir = TempDir()
        var store = StateStore(path: dir.file("state.json"))
        // The writer's clock; each save's fsyncs take what `fsyncTakes` says.
        let clock = ManualClock()
        let fsyncTakes = ManualClock()
        store.beforeSync = { clock.advance(fsyncTakes.now) }
        let mailbox = Mailbox()
        let writer = StateWriter(store: store, mailbox: mailbox, clock: { clock.now })
        defer { writer.finish() }
        func save(_ position: Double, taking seconds: Double) -> [String] {
            fsyncTakes.set(position == 0 ? seconds / 2 : seconds)  // a queue save has two fsyncs, a place save one
            writer.submit(Snapshot(tracks: tracks, current: 0, position: position), queueChanged: position == 0)
            writer.waitUntilIdle()
            return mailbox.drainLog().map(\.1)
        }
        XCTAssertEqual(save(0, taking: 0.2), [], "a fast save says nothing")
        let slow = save(0, taking: 2.4)
        XCTAssertEqual(slow.count, 1, "\(slow)")
        XCTAssertTrue(slow.first?.hasPrefix("saving the queue took 2.4 s") == true, "\(slow)")
        clock.advance(300)
        XCTAssertEqual(save(5, taking: 3), [], "again within ten minutes: not said")
        clock.advance(300)
        let later = save(10, taking: 1.5)
        XCTAssertEqual(later.count, 1, "ten minutes on: said again: \(later)")
        XCTAssertTrue(later.first?.hasPrefix("saving the place took 1.5 s") == true, "\(later)")
    }

    /// A clock the test moves.
    private final class ManualClock: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 1000.0
        var now: Double { lock.lock(); defer { lock.unlock() }; return value }
        func advance(_ seconds: Double) { lock.lock(); value += seconds; lock.unlock() }
        func set(_ seconds: Double) { lock.lock(); value = seconds; lock.unlock() }
    }

    func testAfterAStartThePlaceIsSavedBesideTheQueueFileItCameFrom() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: .playing)
        try store.save(saved)
        let queueBytes = dir.read("state.json")
        let writer = StateWriter(store: store, mailbox: Mailbox())
        var later = saved
        later.position = 20
        writer.submit(later, queueChanged: false)
        writer.finish()
        XCTAssertEqual(dir.read("state.json"), queueBytes, "not rewritten")
        XCTAssertEqual(store.load().snapshot, later)

        // A queue file that holds another queue than the one saved: written whole.
        let other = StateWriter(store: store, mailbox: Mailbox())
        let fewer = Snapshot(tracks: Array(tracks.prefix(2)), current: 0, position: 5)
        other.submit(fewer, queueChanged: false)
        other.finish()
        XCTAssertEqual(store.load().snapshot, fewer)
    }
}

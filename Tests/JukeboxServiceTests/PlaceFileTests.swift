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
        let queued = Snapshot(tracks: tracks, current: 0, position: 1, phase: "playing", volume: 70)
        let hash = try store.save(queued)
        let queueBytes = dir.read("state.json")
        var later = queued
        later.current = 2
        later.position = 123.25
        later.phase = "paused"
        later.repeatMode = .all
        later.volume = 40
        try store.savePlace(later, queueHash: hash)
        XCTAssertEqual(dir.read("state.json"), queueBytes, "the queue file is not touched by a place save")
        let place = try XCTUnwrap(dir.read("state.json.place"))
        XCTAssertLessThan(place.utf8.count, 200, place)
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
        var rng = SplitMix(seed)
        let phases = ["playing", "paused", "stopped", "odd \"quoted\" \\ phase\u{01}\n", "é♪"]
        let positions: [Double] = [0, 1, 61.5, 123.25, 1e-7, .leastNonzeroMagnitude, 1e20, 3600.000001, .greatestFiniteMagnitude]
        for i in 0..<200 {
            var snapshot = Snapshot(tracks: tracks)
            snapshot.current = i % 7 == 0 ? nil : Int(rng.next() % 5000)
            snapshot.position = i < positions.count ? positions[i] : Double(rng.next() % 10_000_000) / 1000
            snapshot.phase = phases[Int(rng.next() % UInt64(phases.count))]
            snapshot.repeatMode = RepeatMode.allCases[Int(rng.next() % 3)]
            snapshot.volume = Int(rng.next() % 101)
            let place = PlaceFile(snapshot, queueHash: rng.next())
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

    private struct SplitMix {
        var state: UInt64
        init(_ seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func testAPlaceFromAnotherQueueFileIsIgnoredAndTheQueueFilesOwnPlaceUsed() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let first = Snapshot(tracks: tracks, current: 0, position: 50, phase: "playing")
        try store.savePlace(Snapshot(tracks: tracks, current: 2, position: 99, phase: "playing"), queueHash: try store.save(first))
        // The same queue and place written again (a power cut then lands between the two writes):
        // a new write of the queue file never matches the old sidecar, even with equal content.
        try store.save(first)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, first)
        XCTAssertEqual(loaded.messages, [], "a stale sidecar is the normal trace of a cut between two writes")
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
                                                 current: 1, position: 42.5, phase: "paused", repeatMode: .one, volume: 55))
        XCTAssertEqual(loaded.messages, [])
        XCTAssertEqual(dir.read("state.json"), old, "loading writes nothing")
    }

    func testADamagedPlaceIsMovedAsideAndTheQueueFilesPlaceUsed() throws {
        for damage in ["{\"queue\": \"", "", "out of range"] {
            let dir = TempDir()
            let store = StateStore(path: dir.file("state.json"))
            let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: "playing")
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
        let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: "playing")
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
        let shorter = Snapshot(tracks: Array(tracks.prefix(1)), current: 0, position: 4, phase: "paused")
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

    func testAfterAStartThePlaceIsSavedBesideTheQueueFileItCameFrom() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let saved = Snapshot(tracks: tracks, current: 1, position: 10, phase: "playing")
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

/// A gate a writer thread stops at until the test opens it.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    private var waiting = 0

    /// Called by the thread under test: waits while the gate is closed.
    func pass() {
        condition.lock()
        waiting += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    /// Waits until a thread stands at the gate.
    func waitForSomeoneAtIt() {
        condition.lock()
        while waiting == 0 { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}

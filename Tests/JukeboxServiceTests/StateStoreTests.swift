// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

final class StateStoreTests: XCTestCase {
    let tracks = [TrackInfo(path: "/m/a.flac", title: "A", artist: "X", duration: 12.5),
                  TrackInfo(path: "/m/b.flac", title: "B", trackNumber: 2, discNumber: 1)]

    func testRoundTripKeepsEveryField() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let snap = Snapshot(tracks: tracks, order: [1, 0], current: 1, position: 61.123456789, phase: .paused,
                            shuffle: true, shuffleSeed: 99, repeatMode: .one, volume: 42, source: QueueSource(paths: ["/m"]),
                            speed: 1.25, bookmarkReset: BookmarkReset(track: "/m/b.flac", position: 61.123456789))
        try store.save(snap)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, snap)
        XCTAssertEqual(loaded.messages, [])
        XCTAssertEqual(dir.list(), ["state.json"], "no temp file left behind")
    }

    func testAStreamURLIsKeptAsItIsAndResumesLiveAtStart() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let url = "https://radio.example:8443/live.mp3?token=a%20b&x=1"
        let snap = Snapshot(tracks: [TrackInfo(path: url, title: "radio.example:8443/live.mp3?token=a%20b&x=1")], current: 0,
                            position: 300, phase: .playing)
        try store.save(snap)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, snap)
        XCTAssertEqual(loaded.messages, [])
        // A stream has no folder to wait for: the start restores it and plays.
        XCTAssertEqual(StartUp.events(for: loaded), [.restore(snap)])
    }

    func testMissingFileMeansAnEmptyStartWithoutComplaint() {
        let dir = TempDir()
        let loaded = StateStore(path: dir.file("none.json")).load()
        XCTAssertNil(loaded.snapshot)
        XCTAssertEqual(loaded.messages, [])
    }

    func testATornFileIsMovedAsideReportedAndNeverDeleted() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        try store.save(Snapshot(tracks: tracks, current: 0, position: 5, phase: .playing))
        let whole = dir.read("state.json")!
        let torn = String(whole.prefix(whole.count / 2))
        dir.write("state.json", torn)
        let loaded = store.load()
        XCTAssertNil(loaded.snapshot)
        XCTAssertEqual(loaded.messages.count, 1)
        XCTAssertTrue(loaded.messages[0].contains("is damaged"), loaded.messages[0])
        XCTAssertTrue(loaded.messages[0].contains("state.json.damaged-1"), loaded.messages[0])
        XCTAssertEqual(dir.read("state.json.damaged-1"), torn)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("state.json")))
        // A second damaged file does not overwrite the first one kept.
        dir.write("state.json", "{")
        _ = store.load()
        XCTAssertEqual(dir.list(), ["state.json.damaged-1", "state.json.damaged-2"])
    }

    func testGarbageAndEmptyFilesAreDamagedToo() {
        for content in ["", "\u{0}\u{1}binary", "[]", "{\"version\": \"x\"}", "{\"tracks\": []}"] {
            let dir = TempDir()
            dir.write("state.json", content)
            let loaded = StateStore(path: dir.file("state.json")).load()
            XCTAssertNil(loaded.snapshot, content)
            XCTAssertEqual(loaded.messages.count, 1, content)
        }
    }

    func testUnknownFieldsFromANewerVersionDoNotFail() {
        let dir = TempDir()
        dir.write("state.json", """
        {"version": 3, "futureThing": {"a": [1, 2]}, "repeat": "sometimes", "volume": 250,
         "tracks": [{"path": "/m/a.flac", "title": "A", "rating": 5}, {"path": 7}, {"path": "/m/b.flac", "title": "B"}],
         "current": 2, "position": 12.5, "phase": "playing", "shuffle": false}
        """)
        let loaded = StateStore(path: dir.file("state.json")).load()
        XCTAssertEqual(loaded.snapshot?.tracks.map(\.path), ["/m/a.flac", "/m/b.flac"])
        XCTAssertEqual(loaded.snapshot?.current, 1, "still /m/b.flac")
        XCTAssertEqual(loaded.snapshot?.repeatMode, .off)
        XCTAssertEqual(loaded.snapshot?.volume, 100)
        XCTAssertEqual(loaded.snapshot?.position, 12.5)
        XCTAssertEqual(loaded.messages, ["state file is from a newer jukebox (version 3); reading what this version knows"])
        XCTAssertEqual(dir.list(), ["state.json"], "values a newer version wrote are no damage")
    }

    func testTracksWhoseFilesAreGoneAreKeptInTheQueue() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let snap = Snapshot(tracks: tracks, current: 0, position: 30, phase: .playing)
        try store.save(snap)
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot, snap, "/m does not exist here: every entry and the place are kept")
        XCTAssertEqual(loaded.messages, [])
    }

    func testWrongTypesAndOutOfRangeValuesAreReportedCopiedAsideAndTheValidPartKept() {
        let head = #"{"version": 1, "tracks": [{"path": "/m/a.flac", "title": "A"}, {"path": 42}, {"path": "/m/b.flac", "title": "B"}], "#
        let ab = [TrackInfo(path: "/m/a.flac", title: "A"), TrackInfo(path: "/m/b.flac", title: "B")]
        let cases: [(String, String, Snapshot)] = [
            (#""current": "3", "position": 7"#, "current: not a track index",
             Snapshot(tracks: ab, position: 7)),
            (#""current": 2, "position": "lots""#, "position: not a number of seconds",
             Snapshot(tracks: ab, current: 1)),
            (#""current": 99, "position": 7"#, "current: 99 is not one of the 3 tracks",
             Snapshot(tracks: ab, position: 7)),
            (#""current": 1, "position": 7, "volume": 101"#, "volume: not 0 to 100",
             Snapshot(tracks: ab, current: 1, position: 0)),
            (#""current": 1, "position": 7, "bookmarkReset": {"track": "/m/b.flac", "position": -1}"#,
             "bookmarkReset: not a track and a number of seconds", Snapshot(tracks: ab, current: 1, position: 0)),
            (#""current": 1, "position": 7, "bookmarkReset": "yes""#,
             "bookmarkReset: not a track and a number of seconds", Snapshot(tracks: ab, current: 1, position: 0)),
        ]
        for (fields, problem, expected) in cases {
            let dir = TempDir()
            let text = head + fields + "}"
            dir.write("state.json", text)
            let loaded = StateStore(path: dir.file("state.json")).load()
            XCTAssertEqual(loaded.snapshot, expected, fields)
            XCTAssertEqual(loaded.messages.count, 1, fields)
            let message = loaded.messages.first ?? ""
            XCTAssertTrue(message.contains("tracks[1]: not a track") && message.contains(problem), "\(fields): \(message)")
            XCTAssertTrue(message.contains("copied it to \(dir.file("state.json.damaged-1"))"), message)
            XCTAssertEqual(dir.read("state.json.damaged-1"), text, "the original, byte for byte")
            let again = StateStore(path: dir.file("state.json")).load()
            XCTAssertEqual(again.snapshot, expected, fields)
            XCTAssertEqual(again.messages, [], "repaired in place: no second copy at the next start")
            XCTAssertEqual(dir.list(), ["state.json", "state.json.damaged-1"])
        }
    }

    func testAFileThatCannotBeReadIsLeftAloneAndSaidSo() {
        let dir = TempDir()
        // Reading /proc/self/mem from its start fails with EIO, even for root.
        symlink("/proc/self/mem", dir.file("state.json"))
        let loaded = StateStore(path: dir.file("state.json")).load()
        XCTAssertNil(loaded.snapshot)
        XCTAssertTrue(loaded.unreadable?.contains("Input/output error") == true, "\(loaded)")
        XCTAssertEqual(loaded.messages.count, 1)
        XCTAssertTrue(loaded.messages[0].hasPrefix("cannot read the state file \(dir.file("state.json")) ("), loaded.messages[0])
        XCTAssertEqual(dir.list(), ["state.json"], "neither moved nor copied")
    }

    func testTheLockIsHeldForTheProcessAndRefusesASecondHolder() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("sub/state.json"))
        try store.lock()
        XCTAssertEqual(dir.read("sub/state.json.lock"), "\(getpid())\n")
        // flock locks belong to the open file: a second open in another process (the next player)
        // is refused; here a child process stands in for it.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        child.arguments = ["--nonblock", dir.file("sub/state.json.lock"), "true"]
        try child.run()
        child.waitUntilExit()
        XCTAssertEqual(child.terminationStatus, 1, "the lock is not held")
        // A symlink in its place is not followed.
        let other = StateStore(path: dir.file("other.json"))
        symlink(dir.file("sub/state.json.lock"), dir.file("other.json.lock"))
        XCTAssertThrowsError(try other.lock()) {
            XCTAssertEqual("\($0)", "refusing the state file's lock \(dir.file("other.json.lock")): it is a symbolic link, which jukebox never makes; "
                           + "someone else may have put it there: remove it, or give the player a state file in a folder of its own")
        }
    }

    func testALockThatIsNotAPlainFileOfOneNameIsRefused() throws {
        let dir = TempDir()
        mkfifo(dir.file("fifo.json.lock"), 0o644)
        XCTAssertThrowsError(try StateStore(path: dir.file("fifo.json")).lock()) {
            XCTAssertTrue("\($0)".contains("fifo.json.lock: it is not a regular file"), "\($0)")
        }
        let target = dir.write("target", "keep\n")
        link(target, dir.file("linked.json.lock"))
        XCTAssertThrowsError(try StateStore(path: dir.file("linked.json")).lock()) {
            XCTAssertTrue("\($0)".contains("linked.json.lock: it has other names (hard links)"), "\($0)")
        }
        XCTAssertEqual(dir.read("target"), "keep\n")
    }

    func testLinksPlantedAtTheTemporaryNamesAreReplacedNeverFollowed() throws {
        let dir = TempDir()
        let victim = dir.write("victim", "not the player's\n")
        for name in ["state.json.tmp", "state.json.place.tmp"] { symlink(victim, dir.file(name)) }
        let store = StateStore(path: dir.file("state.json"))
        let hash = try store.save(Snapshot(tracks: tracks))
        try store.savePlace(Snapshot(tracks: tracks, current: 1, position: 3), queueHash: hash)
        XCTAssertEqual(dir.read("victim"), "not the player's\n")
        XCTAssertEqual(dir.list(), ["state.json", "state.json.place", "victim"])
        let loaded = store.load()
        XCTAssertEqual(loaded.snapshot?.tracks, tracks)
        XCTAssertEqual(loaded.snapshot?.position, 3)
        var st = stat()
        XCTAssertEqual(lstat(dir.file("state.json"), &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG)
    }

    func testAPlaceFileWithOtherNamesIsReplacedNotWrittenInPlace() throws {
        let dir = TempDir()
        let store = StateStore(path: dir.file("state.json"))
        let hash = try store.save(Snapshot(tracks: tracks))
        try store.savePlace(Snapshot(tracks: tracks, current: 0, position: 1), queueHash: hash)
        let before = dir.read("state.json.place")
        // Another name for the sidecar's file (a hard link someone made to read or change it).
        link(dir.file("state.json.place"), dir.file("other"))
        try store.savePlace(Snapshot(tracks: tracks, current: 1, position: 2), queueHash: hash)
        XCTAssertEqual(dir.read("other"), before, "written through a hard link")
        XCTAssertEqual(store.load().snapshot?.position, 2)
    }

    func testANameThatCannotBeRemovedIsAClearError() throws {
        let dir = TempDir()
        // A folder at the temp name: unlink cannot remove it.
        try FileManager.default.createDirectory(atPath: dir.file("state.json.tmp"), withIntermediateDirectories: false)
        XCTAssertThrowsError(try StateStore(path: dir.file("state.json")).save(Snapshot(tracks: tracks))) {
            XCTAssertTrue("\($0)".hasPrefix("unlink \(dir.file("state.json.tmp")): something of that name is in the way and cannot be removed"), "\($0)")
        }
    }

    func testSaveCreatesTheFolderAndReportsAnUnwritablePlace() throws {
        let dir = TempDir()
        try StateStore(path: dir.file("deep/er/state.json")).save(Snapshot())
        XCTAssertNotNil(dir.read("deep/er/state.json"))
        dir.write("blocker", "x")
        XCTAssertThrowsError(try StateStore(path: dir.file("blocker/state.json")).save(Snapshot())) { error in
            XCTAssertTrue("\(error)".contains("blocker"), "\(error)")
        }
    }

    func testALeftoverTempFileFromACrashIsHarmless() throws {
        let dir = TempDir()
        dir.write("state.json.tmp", "{half")
        let store = StateStore(path: dir.file("state.json"))
        try store.save(Snapshot(tracks: tracks))
        XCTAssertEqual(store.load().snapshot?.tracks, tracks)
        XCTAssertEqual(dir.list(), ["state.json"])
    }
}

// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxService
import XCTest

/// When the loop hands the awaited music folders to a read: a stat each, once a second; a read
/// only when they look other than at the last read, and one at a time.
final class MusicArrivalWatchTests: XCTestCase {
    typealias Mark = MusicArrival.Mark

    func testAReadIsDueAtTheFirstLookThenOnlyWhenAFolderChangedAndNeverTwiceAtOnce() {
        var marks: [String: Mark] = [:]
        var watch = MusicArrival()
        let folders = ["/srv/music", "/srv/more"]
        func due() -> Bool { watch.due(folders) { marks[$0] } }
        XCTAssertTrue(due(), "the first look reads: the start's read came before it")
        XCTAssertFalse(due(), "one read at a time")
        watch.finished()
        XCTAssertFalse(due(), "nothing changed")
        // The partition mounted while nothing read: another device and inode.
        marks["/srv/music"] = Mark(device: 2049, inode: 2, seconds: 100, nanoseconds: 0)
        XCTAssertTrue(due())
        // Files copied in while that read runs: found by the first look after it.
        marks["/srv/music"] = Mark(device: 2049, inode: 2, seconds: 100, nanoseconds: 5)
        XCTAssertFalse(due())
        watch.finished()
        XCTAssertTrue(due())
        watch.finished()
        XCTAssertFalse(due())
        marks["/srv/more"] = Mark(device: 7, inode: 9, seconds: 1, nanoseconds: 0)
        XCTAssertTrue(due(), "any of the folders")
        // That read given up (the share stopped answering under it): read again, nothing changed.
        watch.finished(gaveUp: true)
        XCTAssertTrue(due(), "a read given up read nothing")
        watch.finished()
        XCTAssertFalse(due())
    }

    func testAMarkIsTheFoldersDeviceInodeAndTime() throws {
        let dir = NSTemporaryDirectory() + "music-arrival-\(UUID().uuidString)"
        XCTAssertNil(MusicArrival.mark(dir), "not there yet")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let empty = try XCTUnwrap(MusicArrival.mark(dir))
        var st = stat()
        XCTAssertEqual(stat(dir, &st), 0)
        XCTAssertEqual(empty, Mark(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), seconds: Int(st.st_mtim.tv_sec),
                                   nanoseconds: Int(st.st_mtim.tv_nsec)))
        // An entry added moves the folder's time on (set back first: two writes can share a tick).
        var times = [timespec(tv_sec: 1000, tv_nsec: 0), timespec(tv_sec: 1000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, dir, &times, 0), 0)
        let before = MusicArrival.mark(dir)
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/song.flac", contents: Data()))
        XCTAssertNotEqual(MusicArrival.mark(dir), before)
    }
}

/// The folders inside the awaited ones: looked at too while nothing playable is there.
final class MusicArrivalInsideTests: XCTestCase {
    func testFoldersFoundInsideAreLookedAtFromTheNextLook() {
        var marks: [String: MusicArrival.Mark] = ["/srv/music": MusicArrival.Mark(device: 1, inode: 2, seconds: 3, nanoseconds: 0)]
        var watch = MusicArrival()
        func due() -> Bool { watch.due(["/srv/music"]) { marks[$0] } }
        XCTAssertTrue(due())
        watch.finished(inside: ["/srv/music/Album"])
        XCTAssertTrue(due(), "a folder new to the look: read again, its mark from now on")
        watch.finished(inside: ["/srv/music/Album"])
        XCTAssertFalse(due())
        // A file copied into the album: its time moves, the music folder's does not.
        marks["/srv/music/Album"] = MusicArrival.Mark(device: 1, inode: 5, seconds: 9, nanoseconds: 0)
        XCTAssertTrue(due())
    }

    func testSubfoldersAreBoundedBreadthFirstAndLeaveOutHiddenOnesAndFiles() throws {
        let root = NSTemporaryDirectory() + "music-inside-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["B/CD1/deep/deeper", "A", ".hidden/x"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: root + "/A/notes.txt", contents: Data()))
        XCTAssertEqual(MusicArrival.subfolders(of: [root + "/"]), [root + "/A", root + "/B", root + "/B/CD1", root + "/B/CD1/deep"],
                       "three levels, files and hidden folders left out")
        let many = root + "/many"
        for i in 0..<(MusicArrival.insideLimit + 5) {
            try FileManager.default.createDirectory(atPath: many + "/\(i)", withIntermediateDirectories: true)
        }
        XCTAssertEqual(MusicArrival.subfolders(of: [many]).count, MusicArrival.insideLimit)
        XCTAssertEqual(MusicArrival.subfolders(of: [root + "/missing"]), [])
    }
}

extension MusicArrival {
    /// A look and its decision at once (`lookStarted`, then `looked` with `mark` of each path),
    /// as `MusicWatch` makes them across the tag reader's thread.
    mutating func due(_ folders: [String], mark: (String) -> Mark?) -> Bool {
        guard let paths = lookStarted(folders) else { return false }
        return looked(paths.map { ($0, mark($0)) })
    }
}

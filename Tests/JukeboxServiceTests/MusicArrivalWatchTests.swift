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

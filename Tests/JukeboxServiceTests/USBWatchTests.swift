// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import XCTest

/// `USBWatch` against a real temporary root: a folder made under it is a stick inserted, the
/// folder gone is the stick removed (with `mountsOnly: false`; a plain folder is no mount point).
/// Waits poll the watch's descriptors with a bounded timeout (tens of seconds: an emulated run is
/// slow), never sleep.
final class USBWatchTests: XCTestCase {
    /// Polls the watch's fds until one is readable and returns what it reads; [] after `seconds`.
    private func next(_ watch: USBWatch, within seconds: Double = 30) -> [Event] {
        nextEvents(within: seconds, fds: { watch.fds }, read: { watch.read(fd: $0) })
    }

    /// Whether any fd of the watch is readable right now.
    private func readable(_ watch: USBWatch) -> Bool {
        var fds = watch.fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        return poll(&fds, nfds_t(fds.count), 0) > 0
    }

    func testAFolderMadeUnderTheRootIsInsertedAndItsRemovalIsRemoved() throws {
        let dir = TempDir()
        let root = dir.file("media")
        XCTAssertEqual(mkdir(root, 0o755), 0)
        XCTAssertEqual(mkdir(root + "/THERE", 0o755), 0)
        let watch = USBWatch(roots: [root], mountsOnly: false)
        // What was there at start is not "inserted now".
        XCTAssertEqual(watch.sticks, [root + "/THERE"])
        XCTAssertFalse(readable(watch))

        XCTAssertEqual(mkdir(root + "/STICK", 0o755), 0)
        XCTAssertEqual(next(watch), [.usbInserted(path: root + "/STICK")])
        // A file beside the sticks, and a hidden folder, are no sticks.
        dir.write("media/notes.txt", "x")
        XCTAssertEqual(mkdir(root + "/.Trash", 0o755), 0)
        XCTAssertEqual(rmdir(root + "/STICK"), 0)
        XCTAssertEqual(next(watch), [.usbRemoved(path: root + "/STICK")])
        XCTAssertEqual(watch.sticks, [root + "/THERE"])
    }

    func testARootMadeLaterIsWatchedFromTheNextLook() {
        let dir = TempDir()
        let root = dir.file("media")
        let watch = USBWatch(roots: [root], mountsOnly: false)
        XCTAssertEqual(mkdir(root, 0o755), 0)
        watch.maintain()
        XCTAssertEqual(mkdir(root + "/A", 0o755), 0)
        XCTAssertEqual(next(watch), [.usbInserted(path: root + "/A")])
    }

    func testAChangeOnlyALookSeesWakesTheLoop() {
        // An unmount leaves the folder: only the once-a-second look (`maintain`) sees it. Here
        // the inotify events are not read, so the events must come through the wake descriptor.
        let dir = TempDir()
        let root = dir.file("media")
        XCTAssertEqual(mkdir(root, 0o755), 0)
        let watch = USBWatch(roots: [root], mountsOnly: false)
        XCTAssertEqual(mkdir(root + "/B", 0o755), 0)
        watch.maintain()
        let wake = watch.fds.last!
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&fds, 1, 0), 1)
        XCTAssertEqual(watch.read(fd: wake), [.usbInserted(path: root + "/B")])
        watch.maintain()
        XCTAssertEqual(poll(&fds, 1, 0), 0, "nothing changed: no wake-up")
    }

    func testAStickIsListedByFolderInNaturalOrderAndSplitAfterItsFirstOrItsBookmarksFolder() {
        let dir = TempDir()
        let stick = dir.file("S")
        for name in ["B/1.flac", "A 10/1.flac", "A 2/2.mp3", "A 2/1.flac", "A 2/notes.txt", ".hidden/1.flac", "top.flac"] {
            dir.write("S/" + name, "")
        }
        let folders = USBScan.folders(stick)
        XCTAssertEqual(folders.map { $0.folder }, [stick, stick + "/A 2", stick + "/A 10", stick + "/B"])
        XCTAssertEqual(Set(folders[1].files), [stick + "/A 2/1.flac", stick + "/A 2/2.mp3"])
        let plain = USBScan.split(folders, through: nil)
        XCTAssertEqual(plain.first, [stick + "/top.flac"])
        XCTAssertEqual(plain.rest.count, 4)
        let resumed = USBScan.split(folders, through: stick + "/A 10/1.flac")
        XCTAssertEqual(resumed.first.count, 4)
        XCTAssertEqual(resumed.rest, [stick + "/B/1.flac"])
        XCTAssertEqual(USBScan.split(folders, through: "/elsewhere/1.flac").first, [stick + "/top.flac"])
        XCTAssertTrue(USBScan.split([], through: nil).first.isEmpty)
    }

    func testWithMountsOnlyAPlainFolderIsNoStickAndATrackOnItsRootIsGone() {
        let dir = TempDir()
        let root = dir.file("media")
        XCTAssertEqual(mkdir(root, 0o755), 0)
        XCTAssertEqual(mkdir(root + "/EMPTY", 0o755), 0)
        let watch = USBWatch(roots: [root])
        watch.maintain()
        XCTAssertEqual(watch.sticks, [])
        XCTAssertFalse(readable(watch))
        // An empty mount point left by an unmount: the track on it is on a stick that is gone.
        XCTAssertEqual(watch.goneStick(holding: root + "/EMPTY/1.flac"), root + "/EMPTY")
        XCTAssertEqual(watch.goneStick(holding: root + "/EMPTY/Album/1.flac"), root + "/EMPTY")
        XCTAssertNil(watch.goneStick(holding: "/srv/music/1.flac"))
        let plain = USBWatch(roots: [root + "/"], mountsOnly: false)
        XCTAssertNil(plain.goneStick(holding: root + "/EMPTY/1.flac"))
        XCTAssertEqual(plain.goneStick(holding: root + "/OTHER/1.flac"), root + "/OTHER")
    }

    /// A stick pulled out whose mount systemd has not undone yet: the folder still answers, but
    /// its disk has left the kernel's block devices (`/sys/dev/block/MAJ:MIN`). A read fails (EIO)
    /// in that window; the track is on a stick that is gone, not a file to skip.
    func testAStickWhoseDiskLeftTheKernelIsGoneWhileItsMountRemains() throws {
        let dir = TempDir()
        let root = dir.file("media")
        XCTAssertEqual(mkdir(root, 0o755), 0)
        XCTAssertEqual(mkdir(root + "/STICK", 0o755), 0)
        var st = stat()
        XCTAssertEqual(stat(root + "/STICK", &st), 0)
        let (major, minor) = USBWatch.deviceNumbers(st.st_dev)
        guard major != 0 else { throw XCTSkip("the scratch folder is on no block device (major 0): nothing to lose") }
        let sys = dir.file("sys-dev-block")
        XCTAssertEqual(mkdir(sys, 0o755), 0)
        dir.write("sys-dev-block/\(major):\(minor)", "")
        // mountsOnly off: the scratch folder is no mount point; the disk check is the same.
        let watch = USBWatch(roots: [root], mountsOnly: false, sysBlock: sys)
        XCTAssertNil(watch.goneStick(holding: root + "/STICK/1.flac"))
        XCTAssertEqual(unlink(sys + "/\(major):\(minor)"), 0)
        XCTAssertEqual(watch.goneStick(holding: root + "/STICK/1.flac"), root + "/STICK")
        // No sysfs at all (a root without /sys): nothing can be told, the stick counts as there.
        let blind = USBWatch(roots: [root], mountsOnly: false, sysBlock: dir.file("no-sys"))
        XCTAssertNil(blind.goneStick(holding: root + "/STICK/1.flac"))
        // The numbers glibc's major()/minor() give, for a large and a small device number.
        XCTAssertTrue(USBWatch.deviceNumbers(dev_t(0x0000_0801)) == (8, 1))
        XCTAssertTrue(USBWatch.deviceNumbers(dev_t(0x0000_1000_5672_3489)) == (0x1234, 0x56789))
    }
}

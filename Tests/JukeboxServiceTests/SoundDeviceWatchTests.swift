// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import XCTest

/// `SoundDeviceWatch` against a real scratch `dev` folder: nodes made or changed under `snd` are
/// announced, other files in `dev` and opens of the nodes are not, and a `snd` folder removed and
/// made again is watched again. Waits poll the watch's descriptor with a bound, never sleep.
final class SoundDeviceWatchTests: XCTestCase {
    /// Polls the watch until it has something and returns what it reads; [] after `seconds`.
    private func next(_ watch: SoundDeviceWatch, within seconds: Double = 30) -> [Event] {
        nextEvents(within: seconds, fds: { watch.fds }, read: { watch.read(fd: $0) })
    }

    /// What the watch says of what happened so far, without waiting for more: drained at once.
    private func now(_ watch: SoundDeviceWatch) -> [Event] {
        var fds = watch.fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return [] }
        return fds.filter { $0.revents != 0 }.flatMap { watch.read(fd: $0.fd) }
    }

    func testACardsNodesAppearingOrChangingOwnerAreAnnouncedAndNothingElseIs() throws {
        let dir = TempDir()
        let dev = dir.file("dev")
        XCTAssertEqual(mkdir(dev, 0o755), 0)
        XCTAssertEqual(mkdir(dev + "/snd", 0o755), 0)
        dir.write("dev/snd/timer", "")
        let watch = SoundDeviceWatch(dev: dev)
        XCTAssertTrue(watch.isWatching)
        XCTAssertEqual(now(watch), [])

        // The kernel makes the card's nodes (devtmpfs): one announcement for the burst.
        dir.write("dev/snd/controlC0", "")
        dir.write("dev/snd/pcmC0D0p", "")
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
        XCTAssertEqual(now(watch), [])
        // udev then sets their group and mode: announced (the player may only now open them).
        XCTAssertEqual(chmod(dev + "/snd/pcmC0D0p", 0o660), 0)
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
        // Opening and closing a node (the player's own probes) and other devices are no news.
        let fd = open(dev + "/snd/pcmC0D0p", O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        dir.write("dev/ttyUSB0", "")
        XCTAssertEqual(unlink(dev + "/snd/controlC0"), 0)
        XCTAssertEqual(now(watch), [])
    }

    func testASndFolderRemovedAndMadeAgainIsWatchedAgain() throws {
        let dir = TempDir()
        let dev = dir.file("dev")
        XCTAssertEqual(mkdir(dev, 0o755), 0)
        // No `snd` at start (no card, no sequencer): watched for.
        let watch = SoundDeviceWatch(dev: dev)
        XCTAssertTrue(watch.isWatching)
        XCTAssertEqual(mkdir(dev + "/snd", 0o755), 0)
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
        dir.write("dev/snd/pcmC1D0p", "")
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
        // Gone and back (the last card's driver reloaded): the new folder is watched.
        XCTAssertEqual(unlink(dev + "/snd/pcmC1D0p"), 0)
        XCTAssertEqual(rmdir(dev + "/snd"), 0)
        XCTAssertEqual(now(watch), [])
        XCTAssertEqual(mkdir(dev + "/snd", 0o755), 0)
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
        dir.write("dev/snd/pcmC1D0p", "")
        XCTAssertEqual(next(watch), [.soundDevicesChanged])
    }

    func testOnlyNamesOfAKernelCardAreWatched() {
        for name in ["hw:0", "hw:CARD=Loopback,DEV=0", "plughw:1,0", "sysdefault:CARD=Dummy", "front:0", "hdmi:0", "iec958:0"] {
            XCTAssertTrue(SoundDeviceWatch.namesKernelCard(name), name)
        }
        for name in ["default", "pulse", "pipewire", "faulty", "dmix", "jukebox-test", "hwx"] {
            XCTAssertFalse(SoundDeviceWatch.namesKernelCard(name), name)
        }
    }
}

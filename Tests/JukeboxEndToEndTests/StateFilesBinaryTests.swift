// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// The files the player makes beside its state file and at its socket, in a folder others can
/// write to: nothing planted there is written through or deleted; and a save that fails (a full
/// disk) is no `ok`.
final class StateFilesBinaryTests: DaemonTestCase {
    /// A folder another user could write to, holding the state file.
    var shared: String { dir + "/shared" }
    var state: String { shared + "/state.json" }
    /// A file the player must never write: what a planted link points to.
    var victim: String { dir + "/victim" }
    let victimText = "root's own file\n"
    /// The small tmpfs a test mounted (unmounted in tearDown).
    private var mounted: String?

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try victimText.write(toFile: victim, atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        if let mounted { Self.unmount(mounted) }
        super.tearDown()
    }

    private func song(_ name: String, seconds: Int = 60) throws -> String {
        let path = dir + "/" + name + ".wav"
        try TestAudio.write(path: path, kind: .wav16, frames: 44_100 * seconds)
        return path
    }

    private func plant(_ name: String) throws {
        try FileManager.default.createSymbolicLink(atPath: shared + "/" + name, withDestinationPath: victim)
    }

    private func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    private func stop(_ daemon: Jukebox.Running) -> Jukebox.Result? {
        daemon.process.terminate()
        return daemon.wait(timeout: 10)
    }

    func testLinksPlantedAtTheStateFilesTemporaryNamesAreNeverWrittenThrough() throws {
        let a = try song("a")
        try plant("state.json.tmp")
        try plant("state.json.place.tmp")
        let daemon = try startDaemon([a], extra: ["state": state])
        // The queue file (at start and after shuffle) and the place sidecar (created by the first place save).
        XCTAssertEqual(try ctl("vol", "40").status, 0)
        XCTAssertEqual(try ctl("save").status, 0)
        XCTAssertEqual(try ctl("shuffle", "on").status, 0)
        XCTAssertEqual(stop(daemon)?.status, 0)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), victimText, "a planted link was written through")
        XCTAssertTrue(isRegularFile(state), "the state file is the player's own file, not the planted link")
        XCTAssertTrue(isRegularFile(state + ".place"), "the place file is the player's own file")
        XCTAssertEqual(BinaryTests.snapshot(state)?["volume"] as? Int, 40)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: shared).filter { $0.hasSuffix(".tmp") }, [])
    }

    func testALinkPlantedAtTheDamagedCopysTemporaryNameIsNeverWrittenThrough() throws {
        let a = try song("a"), b = try song("b")
        // Wrong values: the file is copied aside (`state.json.damaged-1`, through its temp file).
        let text = #"{"version": 1, "tracks": [{"path": "\#(a)", "title": "a"}, {"path": 42}, {"path": "\#(b)", "title": "b"}], "current": 2, "position": "lots", "phase": "paused", "volume": 70}"#
        try text.write(toFile: state, atomically: true, encoding: .utf8)
        try plant("state.json.damaged-1.tmp")
        let config = dir + "/c.json"
        try JSONSerialization.data(withJSONObject: ["audio": "null", "state": state, "socket": socket!]).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config])
        XCTAssertTrue(waitFor(10) { (try? self.ctl("status"))?.stdout.hasPrefix("⏸ b") == true }, "the player did not start")
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0, result?.stderr ?? "")
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), victimText, "a planted link was written through")
        XCTAssertEqual(try String(contentsOfFile: state + ".damaged-1", encoding: .utf8), text, "the original is kept for a person")
        XCTAssertTrue(isRegularFile(state + ".damaged-1"))
    }

    func testALockFilePlantedAsALinkIsRefusedAndThePlayerExits() throws {
        let a = try song("a")
        try plant("state.json.lock")
        let config = dir + "/c.json"
        try JSONSerialization.data(withJSONObject: ["audio": "null", "state": state, "music": [a], "socket": socket!])
            .write(to: URL(fileURLWithPath: config))
        let player = try Jukebox.start(["run", "--config", config])
        let result = player.wait(timeout: 10)
        XCTAssertEqual(result?.status, 1, "the player ran unprotected by its lock: \(result?.stderr ?? "still running")")
        XCTAssertTrue(result?.stderr.contains("refusing the state file's lock \(state).lock: it is a symbolic link") == true, result?.stderr ?? "")
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), victimText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state), "nothing was saved")
    }

    func testAFileThatIsNotASocketAtTheSocketPathIsKeptAndRefused() throws {
        let a = try song("a")
        let precious = "not a socket\n", mpdPath = dir + "/mpd.sock"
        try precious.write(toFile: socket, atomically: true, encoding: .utf8)
        try precious.write(toFile: mpdPath, atomically: true, encoding: .utf8)
        let config = dir + "/c.json"
        try JSONSerialization.data(withJSONObject: ["audio": "null", "state": "", "music": [a], "socket": socket!,
                                                    "mpd": ["bind": mpdPath]]).write(to: URL(fileURLWithPath: config))
        let daemon = try Jukebox.start(["run", "--config", config])
        let stderr = { (try? String(contentsOfFile: daemon.errPath, encoding: .utf8)) ?? "" }
        XCTAssertTrue(waitFor(10) { stderr().contains("no control socket") && stderr().contains("mpd: cannot listen on \(mpdPath): it is a regular file") }, stderr())
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0, result?.stderr ?? "")
        for path in [socket!, mpdPath] {
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), precious, "\(path) was deleted or replaced")
        }
    }

    func testTheRefusalOfANonSocketSaysWhyAndAStaleSocketIsStillReplaced() throws {
        let a = try song("a")
        try "x".write(toFile: socket, atomically: true, encoding: .utf8)
        let config = dir + "/c.json"
        try JSONSerialization.data(withJSONObject: ["audio": "null", "state": "", "music": [a], "socket": socket!])
            .write(to: URL(fileURLWithPath: config))
        let first = try Jukebox.start(["run", "--config", config])
        let stderr = { (try? String(contentsOfFile: first.errPath, encoding: .utf8)) ?? "" }
        XCTAssertTrue(waitFor(10) { stderr().contains("no control socket") }, stderr())
        XCTAssertTrue(stderr().contains("refusing the socket path \(socket!): it is a regular file, not a stale socket; not deleting it"), stderr())
        XCTAssertEqual(stop(first)?.status, 0)
        // A socket left by a player that died (SIGKILL: no clean-up) is replaced.
        try FileManager.default.removeItem(atPath: socket)
        let killed = try startDaemon([a])
        kill(killed.process.processIdentifier, SIGKILL)
        _ = killed.wait(timeout: 5)
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "the killed player's socket is left")
        let second = try startDaemon([a])
        var st = stat()
        XCTAssertEqual(lstat(socket, &st), 0)
        XCTAssertEqual(st.st_mode & 0o7777, 0o660, "the socket's mode, set without following a link")
        XCTAssertEqual(stop(second)?.status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the player removes its own socket at exit")
    }

    func testAChangeThatCannotBeSavedOnAFullDiskIsAnErrorAndIsSavedOnceThereIsRoom() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root: the test mounts a 64 KiB tmpfs to fill (mount -t tmpfs -o size=64k)") }
        let small = dir + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        // mount(2) itself, not the mount program: the arm64 test root has no /bin/mount.
        guard Glibc.mount("jukebox-full", small, "tmpfs", 0, "size=64k,mode=0755") == 0 else {
            throw XCTSkip("cannot mount a tmpfs here: \(String(cString: strerror(errno)))")
        }
        mounted = small
        let a = try song("a"), b = try song("b"), state = small + "/state.json"
        let daemon = try startDaemon([a], extra: ["state": state])
        var stopped = false
        defer { if !stopped { _ = stop(daemon) } }
        XCTAssertEqual(try ctl("save").status, 0)
        XCTAssertEqual((BinaryTests.snapshot(state)?["tracks"] as? [Any])?.count, 1)

        // Fill the file system to the last byte.
        let filler = small + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let block = [UInt8](repeating: 0x55, count: 4096)
        var filled = 0
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { XCTAssertEqual(errno, ENOSPC); break }
            filled += n
        }
        close(fd)
        print("filled the 64 KiB tmpfs with \(filled) bytes")

        let added = try ctl("add", b)
        XCTAssertEqual(added.status, 1, "ok although nothing was saved: \(added.stdout)")
        XCTAssertTrue(added.stderr.contains("error: 1 track added, but not saved:") && added.stderr.contains("No space left on device"),
                      added.stderr)
        // The player keeps the change; the file keeps what it had.
        let status = try ctl("status").stdout
        XCTAssertTrue(status.contains("[1/2]"), status)
        XCTAssertEqual((BinaryTests.snapshot(state)?["tracks"] as? [Any])?.count, 1)
        let changed = try ctl("vol", "33")
        XCTAssertEqual(changed.status, 1, changed.stdout)
        XCTAssertTrue(changed.stderr.contains("error: the change is made, but not saved:"), changed.stderr)

        // Room again: the player saves by itself, without another change.
        unlink(filler)
        XCTAssertTrue(waitFor(15) {
            let saved = BinaryTests.snapshot(state)
            return (saved?["tracks"] as? [Any])?.count == 2 && saved?["volume"] as? Int == 33
        }, "what the player kept was not saved once there was room: \(BinaryTests.snapshot(state) ?? [:])")
        XCTAssertEqual(try ctl("vol", "34").status, 0)
        let log = try ctl("log", "50").stdout
        XCTAssertTrue(log.contains("could not save state") && log.contains("state saved again"), log)
        stopped = true
        XCTAssertEqual(stop(daemon)?.status, 0)
    }

    private static func unmount(_ path: String) {
        if umount2(path, 0) != 0 { _ = umount2(path, Int32(MNT_DETACH)) }
    }
}

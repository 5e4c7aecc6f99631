// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Paths from outside through the real binary: FIFOs where music is expected (TagLib's read of
/// one never ended: the player hung at start, or its tag reader for good), and file names that
/// are not UTF-8 (they were repaired to U+FFFD and then named no file).
final class ForeignPathsTests: DaemonTestCase {
    var music: String { dir + "/music" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
    }

    /// `dir/NAME` with NAME's raw bytes (not UTF-8: Foundation cannot name such a file).
    func rawPath(_ folder: String, _ name: [UInt8]) -> [CChar] {
        (Array(folder.utf8) + [0x2F] + name).map { CChar(bitPattern: $0) } + [0]
    }

    /// A WAV of `seconds` at `folder/NAME` (raw bytes).
    func writeWAV(_ folder: String, _ name: [UInt8], seconds: Int = 30) throws {
        let plain = folder + "/plain-\(UUID().uuidString).wav"
        try TestAudio.write(path: plain, kind: .wav16, frames: 44_100 * seconds)
        XCTAssertEqual(rename(plain, rawPath(folder, name)), 0, String(cString: strerror(errno)))
    }

    func stop(_ daemon: Jukebox.Running) -> Jukebox.Result? {
        kill(daemon.process.processIdentifier, SIGTERM)
        return daemon.wait(timeout: 10)
    }

    // MARK: FIFOs

    /// A FIFO named like music in the music folder: the player starts, plays the real file, logs
    /// the skipped one, answers, and SIGTERM ends it. (It blocked in TagLib's read for good.)
    func testAFIFOInTheMusicFolderAtStartIsSkippedAndLogged() throws {
        try TestAudio.write(path: music + "/good.wav", kind: .wav16, frames: 44_100 * 30)
        XCTAssertEqual(mkfifo(music + "/x.flac", 0o644), 0)
        let daemon = try startDaemon([music])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        let log = try ctl("log", "50").stdout
        XCTAssertTrue(log.contains("not a regular file: \(music)/x.flac"), log)
        XCTAssertTrue(try ctl("status").stdout.contains("good"))
        let ended = stop(daemon)
        XCTAssertEqual(ended?.status, 0, ended?.stderr ?? "SIGTERM did not end it")
    }

    /// The same FIFO reached at run time by `ctl add DIR` (and by the file's own name): refused
    /// with a reason, the folder's real file queued, and the next `add` still answers.
    func testAFIFOAddedAtRunTimeDoesNotWedgeTheTagReader() throws {
        try TestAudio.write(path: music + "/first.wav", kind: .wav16, frames: 44_100 * 30)
        let album = dir + "/album", later = dir + "/later.wav"
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        try TestAudio.write(path: album + "/song.wav", kind: .wav16, frames: 44_100 * 5)
        try TestAudio.write(path: later, kind: .wav16, frames: 44_100 * 5)
        XCTAssertEqual(mkfifo(album + "/x.flac", 0o644), 0)
        let daemon = try startDaemon([music + "/first.wav"])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }

        let added = try Jukebox.run(["ctl", "--socket", socket, "add", album], timeout: 10)
        XCTAssertEqual(added.status, 0, added.stderr)
        let direct = try Jukebox.run(["ctl", "--socket", socket, "add", album + "/x.flac"], timeout: 10)
        XCTAssertTrue((direct.stdout + direct.stderr).contains("not a regular file"), direct.stdout + direct.stderr)
        let next = try Jukebox.run(["ctl", "--socket", socket, "add", later], timeout: 10)
        XCTAssertEqual(next.status, 0, next.stderr)
        let queue = try ctl("queue").stdout
        XCTAssertTrue(queue.contains("song") && queue.contains("later") && !queue.contains("x.flac"), queue)
        XCTAssertEqual(stop(daemon)?.status, 0)
    }

    /// A config that is a FIFO: a clear error at once (it blocked for ever).
    func testAConfigThatIsAFIFOIsRefused() throws {
        XCTAssertEqual(mkfifo(dir + "/c.json", 0o644), 0)
        let r = try Jukebox.run(["run", "--config", dir + "/c.json"], timeout: 10)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("not a regular file"), r.stderr)
    }

    /// A cards map that is a FIFO: reported with its reason (its reader blocked for good, and the
    /// map was never read).
    func testACardsMapThatIsAFIFOIsReported() throws {
        try TestAudio.write(path: music + "/good.wav", kind: .wav16, frames: 44_100 * 30)
        XCTAssertEqual(mkfifo(dir + "/cards.json", 0o644), 0)
        let daemon = try startDaemon([music], extra: ["rfid": ["reader": "keyboard", "name": "no such reader here", "cards": dir + "/cards.json"]])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        XCTAssertTrue(waitFor(10) { (try? ctl("log", "100"))?.stdout.contains("not a regular file") == true },
                      (try? ctl("log", "100").stdout) ?? "")
        XCTAssertEqual(stop(daemon)?.status, 0)
    }

    /// A USB stick holding a FIFO named like music and a Latin-1 name: the FIFO is passed over,
    /// the Latin-1 file is queued and plays (the stick's tag read hung on the FIFO for good).
    func testAStickWithAFIFOAndALatin1NamePlays() throws {
        try TestAudio.write(path: music + "/song.wav", kind: .wav16, frames: 44_100 * 60)
        let media = dir + "/media", made = dir + "/made"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(made + "/0.flac", 0o644), 0)
        try writeWAV(made, [0x31, 0xE9, 0x2E, 0x77, 0x61, 0x76])  // "1é.wav" in Latin-1
        try TestAudio.write(path: made + "/2.wav", kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([music + "/song.wav"], extra: ["usb": ["roots": [media], "autoplay": true, "mountsOnly": false]])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        XCTAssertEqual(rename(made, media + "/STICK"), 0)
        let json = { (try? self.ctl("status", "--json").stdout) ?? "" }
        XCTAssertTrue(waitFor(30) { json().contains("\"path\":\"\(media)/STICK/1\u{FFFD}.wav\"") && json().contains("\"phase\":\"playing\"") },
                      json())
        XCTAssertTrue(waitFor(10) { json().contains("\"count\":2") }, json() + ((try? ctl("log", "50").stdout) ?? ""))
        XCTAssertEqual(stop(daemon)?.status, 0)
    }

    // MARK: Names that are not UTF-8

    /// `jukebox play` of a Latin-1 name (`$'\xe9t\xe9.wav'`) plays that file, bit for bit.
    func testPlayOfALatin1NamePlaysTheFile() throws {
        let name: [UInt8] = [0xE9, 0x74, 0xE9, 0x2E, 0x77, 0x61, 0x76]
        let plain = dir + "/plain.wav", out = dir + "/out.raw"
        try TestAudio.write(path: plain, kind: .wav16, frames: 4410)
        let expected = try TestAudio.decode(path: plain).bytes
        XCTAssertEqual(rename(plain, rawPath(dir, name)), 0)
        // The argument's bytes come from the shell: Foundation's Process passes only UTF-8.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", #"cd "$1" && exec "$0" play --device "file:FILE=$2,FORMAT=raw" "$(printf '\351t\351.wav')""#,
                       Jukebox.binary, dir, out]
        let err = dir + "/play.err"
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        XCTAssertTrue(waitFor(20) { !p.isRunning }, "play did not finish")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        XCTAssertEqual(p.terminationStatus, 0, stderr)
        XCTAssertEqual(Array((try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data()), expected, stderr)
        XCTAssertFalse(stderr.unicodeScalars.contains { (0xEF80...0xEFFF).contains($0.value) }, "shown as U+FFFD: \(stderr)")
    }

    /// `jukebox ctl add` of a Latin-1 name (argv bytes from the shell) queues that file, which
    /// then plays; `queue` shows it with U+FFFD.
    func testCtlAddOfALatin1NameQueuesAndPlaysIt() throws {
        try TestAudio.write(path: music + "/first.wav", kind: .wav16, frames: 44_100 * 30)
        try writeWAV(dir, [0xE9, 0x74, 0xE9, 0x2E, 0x77, 0x61, 0x76])
        let daemon = try startDaemon([music + "/first.wav"])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", #"exec "$0" ctl --socket "$1" add "$2/$(printf '\351t\351.wav')""#, Jukebox.binary, socket, dir]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        XCTAssertTrue(waitFor(10) { !p.isRunning }, "ctl add did not finish")
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let queue = try ctl("queue").stdout
        XCTAssertTrue(queue.contains("\u{FFFD}t\u{FFFD}"), queue)
        XCTAssertEqual(try ctl("next").status, 0)
        XCTAssertTrue(waitFor(10) { (try? self.ctl("status"))?.stdout.hasPrefix("▶ \u{FFFD}t\u{FFFD}") == true }, (try? ctl("status").stdout) ?? "")
        XCTAssertFalse(try ctl("log", "50").stdout.contains("skipped"))
        XCTAssertEqual(stop(daemon)?.status, 0)
    }

    /// A name that is not UTF-8 in the music folder plays; `ctl` shows it with U+FFFD; the state
    /// file keeps it losslessly (U+EF80…U+EFFF), so a restart resumes the same file.
    func testANonUTF8NamePlaysIsShownAsReplacementAndResumesAfterARestart() throws {
        try writeWAV(music, [0xFF, 0xFE, 0x2E, 0x77, 0x61, 0x76])
        let state = dir + "/state.json"
        let daemon = try startDaemon([music], extra: ["state": state])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        let status = try ctl("status").stdout
        XCTAssertTrue(status.contains("\u{FFFD}\u{FFFD}"), status)
        XCTAssertFalse(status.unicodeScalars.contains { (0xEF80...0xEFFF).contains($0.value) }, status)
        let json = try ctl("status", "--json").stdout
        XCTAssertTrue(json.contains("music/\u{FFFD}\u{FFFD}.wav"), json)
        XCTAssertFalse(json.unicodeScalars.contains { (0xEF80...0xEFFF).contains($0.value) }, json)
        XCTAssertEqual(stop(daemon)?.status, 0)

        let saved = try XCTUnwrap(SavedStateFile.read(state))
        let path = ((saved["tracks"] as? [[String: Any]])?.first?["path"] as? String) ?? ""
        XCTAssertEqual(path.unicodeScalars.map(\.value), (music + "/\u{EFFF}\u{EFFE}.wav").unicodeScalars.map(\.value))

        // Restarted with nothing in "music": the queue and the file come from the state file.
        let again = try startDaemon([], extra: ["state": state])
        defer { kill(again.process.processIdentifier, SIGKILL) }
        let resumed = try ctl("status").stdout
        XCTAssertTrue(resumed.hasPrefix("▶") && resumed.contains("\u{FFFD}\u{FFFD}"), resumed)
        XCTAssertFalse(try ctl("log", "50").stdout.contains("skipped"))
        XCTAssertEqual(stop(again)?.status, 0)
    }

    /// Through MPD: the library lists the name in its escaped form (valid UTF-8), `mpc add` of
    /// that URI queues the file and it plays; a FIFO in the folder neither hangs the update nor
    /// is listed; a link back to the music folder does not list it twice.
    func testMPCListsAndAddsBackANonUTF8NameAndSkipsAFIFOAndALinkLoop() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpc") else {
            throw missingPeer("mpc is not installed; board/setup.sh installs it")
        }
        try writeWAV(music, Array("Caf".utf8) + [0xE9, 0x2E, 0x77, 0x61, 0x76])
        try TestAudio.write(path: music + "/plain.wav", kind: .wav16, frames: 44_100 * 30)
        XCTAssertEqual(mkfifo(music + "/x.flac", 0o644), 0)
        XCTAssertEqual(symlink(music, music + "/loop"), 0)
        let port = try MPCTests.freePort()
        let daemon = try startDaemon([music], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { kill(daemon.process.processIdentifier, SIGKILL) }
        func mpc(_ args: String...) throws -> (status: Int32, out: String) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mpc")
            p.arguments = ["-h", "127.0.0.1", "-p", String(port)] + args
            let out = dir + "/mpc-\(UUID().uuidString).out"
            FileManager.default.createFile(atPath: out, contents: nil)
            p.standardOutput = FileHandle(forWritingAtPath: out)
            p.standardError = FileHandle.nullDevice
            var env = ProcessInfo.processInfo.environment
            env["MPD_HOST"] = nil
            env["MPD_PORT"] = nil
            env["LC_ALL"] = "C.UTF-8"
            p.environment = env
            try p.run()
            guard waitFor(10, { !p.isRunning }) else {
                p.terminate()
                throw NSError(domain: "mpc", code: 2, userInfo: [NSLocalizedDescriptionKey: "mpc \(args) did not finish in 10 s"])
            }
            p.waitUntilExit()
            return (p.terminationStatus, String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(), as: UTF8.self))
        }
        XCTAssertEqual(try mpc("--wait", "update").status, 0)
        let escaped = "Caf\u{EFE9}.wav"
        let listed = try mpc("listall").out
        XCTAssertEqual(listed.split(separator: "\n").sorted(), [Substring(escaped), "plain.wav"], listed)
        XCTAssertEqual(try mpc("clear").status, 0)
        _ = try mpc("add", "x.flac")  // the FIFO by name: refused or nothing, but it must answer
        _ = try mpc("add", music + "/x.flac")
        XCTAssertEqual(try mpc("add", escaped).status, 0)
        XCTAssertEqual(try mpc("playlist", "-f", "%file%").out, escaped + "\n")
        XCTAssertEqual(try mpc("play").status, 0)
        XCTAssertTrue(waitFor(10) { (try? ctl("status"))?.stdout.hasPrefix("▶ Caf\u{FFFD}") == true }, (try? ctl("status").stdout) ?? "")
        XCTAssertEqual(stop(daemon)?.status, 0)
    }
}

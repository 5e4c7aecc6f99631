// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The MPD library and covers through the real `mpc` and python-mpd2 against the real binary,
/// over a music folder of tagged files made here; exact output (stdout) checked.
final class MPCLibraryTests: DaemonTestCase {
    var port = 0
    var music: String { dir + "/music" }
    /// A cover larger than MPD's default chunk (8192 bytes), so clients must ask for it in pieces.
    static let cover = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 31 + $0 / 256) }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpc") else {
            throw missingPeer("mpc is not installed; board/setup.sh installs it")
        }
        port = try MPCTests.freePort()
        let fm = FileManager.default
        for folder in ["Abba/Gold", "Bach"] { try fm.createDirectory(atPath: music + "/" + folder, withIntermediateDirectories: true) }
        try TestAudio.write(path: music + "/Abba/Gold/01.wav", kind: .wav16, frames: 44_100 * 30,
                            tags: .init(title: "Dancing Queen", artist: "ABBA", album: "Gold", track: 1))
        try TestAudio.write(path: music + "/Abba/Gold/02.wav", kind: .wav16, frames: 44_100 * 30,
                            tags: .init(title: "Knowing Me", artist: "ABBA", album: "Gold", track: 2))
        try TestAudio.write(path: music + "/Bach/prelude.wav", kind: .wav16, frames: 44_100 * 30,
                            tags: .init(title: "Prelude", artist: "Bach", album: "Suites", track: 1))
        try Data(Self.cover).write(to: URL(fileURLWithPath: music + "/Abba/Gold/cover.jpg"))
        // A cover that is a link out of the music folder is not served.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/secret.jpg"))
        try fm.createSymbolicLink(atPath: music + "/Bach/cover.jpg", withDestinationPath: dir + "/secret.jpg")
    }

    func startPlayer() throws -> Jukebox.Running {
        let daemon = try startDaemon([music], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        // The index is read at start; `--wait update` returns once a later update (after it) ended.
        XCTAssertEqual(try mpc("--wait", "update").status, 0)
        return daemon
    }

    /// Starts `mpc -h 127.0.0.1 -p PORT ARGS...` (output into files: no pipe can fill).
    func startMPC(_ args: [String]) throws -> (Process, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mpc")
        p.arguments = ["-h", "127.0.0.1", "-p", String(port)] + args
        let id = UUID().uuidString
        let out = dir + "/mpc-\(id).out", err = dir + "/mpc-\(id).err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["MPD_HOST"] = nil
        env["MPD_PORT"] = nil
        p.environment = env
        try p.run()
        return (p, out, err)
    }

    /// Runs mpc to its end (at most 10 s): exit status, stdout (bytes), stderr.
    func mpcBytes(_ args: [String]) throws -> (status: Int32, out: Data, err: String) {
        let (p, out, err) = try startMPC(args)
        guard waitFor(10, { !p.isRunning }) else {
            p.terminate()
            throw NSError(domain: "mpc", code: 2, userInfo: [NSLocalizedDescriptionKey: "mpc \(args) did not finish in 10 s"])
        }
        p.waitUntilExit()
        return (p.terminationStatus, (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data(),
                (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    @discardableResult
    func mpc(_ args: String...) throws -> (status: Int32, out: String, err: String) {
        let r = try mpcBytes(args)
        return (r.status, String(decoding: r.out, as: UTF8.self), r.err)
    }

    func testBrowsingSearchingListingAndAddingFromTheLibrary() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertEqual(try mpc("ls").out, "Abba\nBach\n")
        XCTAssertEqual(try mpc("ls", "Abba").out, "Abba/Gold\n")
        XCTAssertEqual(try mpc("ls", "Nope").err, "MPD error: No such directory\n")
        XCTAssertEqual(try mpc("listall").out, "Abba/Gold/01.wav\nAbba/Gold/02.wav\nBach/prelude.wav\n")
        XCTAssertEqual(try mpc("listall", "Bach").out, "Bach/prelude.wav\n")
        XCTAssertEqual(try mpc("search", "artist", "abb").out, "Abba/Gold/01.wav\nAbba/Gold/02.wav\n")
        XCTAssertEqual(try mpc("search", "title", "PRE").out, "Bach/prelude.wav\n")
        XCTAssertEqual(try mpc("find", "artist", "abb").out, "", "find is exact")
        XCTAssertEqual(try mpc("find", "artist", "ABBA", "title", "Knowing Me").out, "Abba/Gold/02.wav\n")
        XCTAssertEqual(try mpc("find", "(artist == \"Bach\")").out, "Bach/prelude.wav\n")
        XCTAssertEqual(try mpc("search", "(title contains \"queen\")").out, "Abba/Gold/01.wav\n")
        XCTAssertEqual(try mpc("find", "(artist =~ \"B.*\")").err, "MPD error: jukebox does not support regular expressions (=~)\n")
        XCTAssertEqual(try mpc("list", "album").out, "Gold\nSuites\n")
        XCTAssertEqual(try mpc("list", "title", "artist", "ABBA").out, "Dancing Queen\nKnowing Me\n")
        XCTAssertEqual(try mpc("list", "album", "group", "artist").out, "ABBA\n    Gold\nBach\n    Suites\n")
        XCTAssertEqual(try mpc("findadd", "artist", "Bach").status, 0)
        XCTAssertEqual(try mpc("playlist").out, "ABBA - Dancing Queen\nABBA - Knowing Me\nBach - Prelude\nBach - Prelude\n")
    }

    func testAnUpdateFindsNewFilesAndIdleHearsOfIt() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        try TestAudio.write(path: music + "/Bach/fugue.wav", kind: .wav16, frames: 44_100,
                            tags: .init(title: "Fugue", artist: "Bach", album: "Suites", track: 2))
        XCTAssertEqual(try mpc("listall", "Bach").out, "Bach/prelude.wav\n", "a file was indexed before any update")
        let (idle, out, _) = try startMPC(["idle", "database"])
        defer { if idle.isRunning { idle.terminate() } }
        // The idle client may connect after an update ended: each try updates again.
        var tries = 0
        while idle.isRunning && tries < 10 {
            XCTAssertEqual(try mpc("update", "Bach").status, 0)
            _ = waitFor(1) { !idle.isRunning }
            tries += 1
        }
        idle.waitUntilExit()
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "database\n")
        XCTAssertEqual(try mpc("listall", "Bach").out, "Bach/fugue.wav\nBach/prelude.wav\n")
        XCTAssertEqual(try mpc("search", "title", "fug").out, "Bach/fugue.wav\n")
    }

    func testCoversComeInChunksAndOnlyFromInsideTheMusicFolder() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let art = try mpcBytes(["albumart", "Abba/Gold/02.wav"])
        XCTAssertEqual(art.status, 0, art.err)
        XCTAssertEqual(Array(art.out), Self.cover)
        let linked = try mpc("albumart", "Bach/prelude.wav")
        XCTAssertEqual(linked.out, "")
        XCTAssertEqual(linked.err, "MPD error: No file exists\n")
        // TagLib's C API reads no embedded pictures: an empty reply, which mpc reports as no data.
        let picture = try mpc("readpicture", "Abba/Gold/01.wav")
        XCTAssertEqual(picture.err, "No data\n")

        let probe = try? Process.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", "import mpd"])
        probe?.waitUntilExit()
        guard probe?.terminationStatus == 0 else {
            throw missingPeer("python3-mpd is not installed; board/setup.sh installs it")
        }
        let script = #"""
        import sys, mpd, hashlib
        c = mpd.MPDClient()
        c.timeout = 5
        c.connect("127.0.0.1", int(sys.argv[1]))
        print(c.mpd_version)
        art = c.albumart("Abba/Gold/01.wav")
        print(len(art["binary"]), hashlib.sha256(art["binary"]).hexdigest() == sys.argv[2])
        print(c.readpicture("Abba/Gold/01.wav"))
        for uri in ["../secret.jpg", "Bach/prelude.wav"]:
            try:
                c.albumart(uri)
            except mpd.CommandError as e:
                print(e)
        print(c.count("artist", "ABBA"))
        print([s["title"] for s in c.find("(Artist == \"ABBA\")", )])
        print(c.list("album", "group", "artist"))
        """#
        try script.write(toFile: dir + "/art.py", atomically: true, encoding: .utf8)
        let digest = try sha256Hex(Self.cover)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [dir + "/art.py", String(port), digest]
        let out = dir + "/py.out", err = dir + "/py.err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        try p.run()
        XCTAssertTrue(waitFor(20) { !p.isRunning }, "the script did not finish in 20 s")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), """
        0.21.0
        20000 True
        {}
        [2@0] {albumart} Malformed URI
        [50@0] {albumart} No file exists
        {'songs': '2', 'playtime': '60'}
        ['Dancing Queen', 'Knowing Me']
        [{'artist': 'ABBA', 'album': 'Gold'}, {'artist': 'Bach', 'album': 'Suites'}]

        """)
    }

    /// The SHA-256 of `bytes` in hex, by sha256sum (Foundation has no digest on Linux).
    func sha256Hex(_ bytes: [UInt8]) throws -> String {
        let path = dir + "/digest.in"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        p.arguments = [path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return String(text.prefix(64))
    }
}

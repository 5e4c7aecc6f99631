// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// python-mpd2 (Debian's python3-mpd), the library Home Assistant's MPD integration uses, against
/// the binary: a smoke test of its sync client, command lists, idle, and a new connection per poll.
final class PythonMPDTests: DaemonTestCase {
    static let script = #"""
    import sys, mpd
    port = int(sys.argv[1])
    def client():
        c = mpd.MPDClient()
        c.timeout = 5
        c.connect("127.0.0.1", port)
        return c
    c = client()
    print(c.mpd_version)
    s = c.status()
    print(s["state"], s["volume"], s["playlistlength"], s["song"], s["songid"] == c.currentsong()["id"])
    c.setvol(30)
    c.pause(1)
    s = c.status()
    print(s["state"], s["volume"])
    c.play(1)
    print(c.currentsong()["title"])
    try:
        c.add("http://radio.example/x")
    except mpd.CommandError as e:
        print("refused:", e)
    c.command_list_ok_begin()
    c.status()
    c.currentsong()
    print(len(c.command_list_end()))
    # What changed since the connection (its own commands too), at once; then a change by another client.
    print(sorted(c.idle()))
    other = client()
    import threading
    t = threading.Timer(0.3, lambda: other.pause(1))
    t.start()
    print(c.idle("player"))
    t.join()
    for i in range(20):
        p = client()
        p.status()
        p.currentsong()
        p.close()
        p.disconnect()
    print(c.status()["state"])
    """#

    func testTheSyncClientDrivesThePlayer() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
              (try? Process.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", "import mpd"]).waitAndStatus()) == 0 else {
            throw XCTSkip("python3-mpd is not installed; board/setup.sh installs it")
        }
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
        let port = try MPCTests.freePort()
        let daemon = try startDaemon([a, b], extra: ["mpd": ["port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        try Self.script.write(toFile: dir + "/smoke.py", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [dir + "/smoke.py", String(port)]
        let out = dir + "/py.out", err = dir + "/py.err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        try p.run()
        XCTAssertTrue(waitFor(20) { !p.isRunning }, "the script did not finish in 20 s")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let stderr = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        XCTAssertEqual(p.terminationStatus, 0, stderr)
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), """
        0.21.0
        play 100 2 0 True
        pause 30
        b
        refused: [50@0] {add} jukebox does not play streams (http URLs) yet
        2
        ['mixer', 'player']
        ['player']
        pause

        """)
    }
}

extension Process {
    /// Waits for the end and gives the exit status.
    fileprivate func waitAndStatus() -> Int32 {
        waitUntilExit()
        return terminationStatus
    }
}

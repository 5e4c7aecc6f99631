// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// python-mpd2 (Debian's python3-mpd), the library Home Assistant's MPD integration uses, against
/// the binary: a smoke test of its sync client, command lists, idle, and a new connection per
/// poll; and Home Assistant's own call pattern with its asyncio client.
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
        c.add("ftp://radio.example/x")
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

    /// Home Assistant's MPD integration, replayed with python-mpd2's asyncio client as it uses
    /// it: a new connection for every poll (status, currentsong, commands, listplaylists) and
    /// every service call (setvol, pause 0/1, next, previous, seekcur, repeat/single/random,
    /// play_media's clear + load + play and clear + add + play, stop), while another client
    /// waits in idle and, between idles, sends a command of its own (python-mpd2's noidle).
    static let homeAssistant = #"""
    import asyncio, sys, mpd
    from mpd.asyncio import MPDClient
    port = int(sys.argv[1])
    song_a, song_b = sys.argv[2], sys.argv[3]

    async def connected():
        c = MPDClient()
        c.timeout = 5
        await c.connect("127.0.0.1", port)
        return c

    # Home Assistant's update: a new connection per poll, then status, currentsong, commands, listplaylists.
    async def poll():
        c = await connected()
        try:
            s = await c.status()
            song = await c.currentsong()
            commands = list(await c.commands())
            playlists = [p["playlist"] for p in await c.listplaylists()]
            return s, song, commands, playlists
        finally:
            c.disconnect()

    # Home Assistant's service calls: each on a connection of its own.
    async def call(name, *args):
        c = await connected()
        try:
            return await getattr(c, name)(*args)
        finally:
            c.disconnect()

    async def main():
        watcher = await connected()
        seen = set()
        async def watch():
            async for changed in watcher.idle():
                seen.update(changed)
        task = asyncio.create_task(watch())
        # The watcher's own command goes between its idles (python-mpd2 sends noidle first), once
        # its first idle is sent and before anything changed: python-mpd2 3.0 (Debian 12 and 13)
        # sends a command issued as it re-enters idle after a change before the idle and without
        # the noidle, and reads each reply as the other's (Mic92/python-mpd2#195; so would MPD).
        for _ in range(500):
            if watcher._MPDClient__in_idle:
                break
            await asyncio.sleep(0.01)
        watcher_state = (await watcher.status())["state"]

        s, song, commands, playlists = await poll()
        print(s["state"], s["volume"], "elapsed" in s, s["duration"], song["title"], playlists)
        wanted = ["status", "currentsong", "listplaylists", "setvol", "pause", "play", "stop", "next", "previous",
                  "clear", "load", "add", "repeat", "single", "random", "seekcur", "commands"]
        print([w for w in wanted if w not in commands])
        await call("setvol", 30)
        await call("pause", 1)
        s, *_ = await poll()
        print(s["state"], s["volume"])
        await call("pause", 0)
        await call("next")
        s, song, *_ = await poll()
        print(s["state"], song["title"])
        await call("previous")
        await call("seekcur", 12)
        s, song, *_ = await poll()
        print(song["title"], 12 <= float(s["elapsed"]) < 20)
        await call("repeat", 1)
        await call("single", 1)
        await call("random", 1)
        s, *_ = await poll()
        print(s["repeat"], s["single"], s["random"])
        await call("single", 0)
        await call("repeat", 0)
        await call("random", 0)
        # play_media(playlist): clear, load, play; then (music): clear, add, play.
        await call("save", "ha")
        *_, playlists = await poll()
        print(playlists)
        await call("clear")
        await call("load", "ha")
        await call("play")
        s, song, *_ = await poll()
        print(s["state"], s["playlistlength"], song["title"])
        await call("clear")
        await call("add", song_b)
        await call("play")
        s, song, *_ = await poll()
        print(s["state"], s["playlistlength"], song["title"])
        try:
            await call("add", "ftp://radio.example/stream")
        except mpd.CommandError as e:
            print("refused:", e)
        await call("stop")
        s, *_ = await poll()
        print(s["state"])
        print(watcher_state)
        for _ in range(100):
            if {"player", "mixer", "options", "playlist", "stored_playlist"} <= seen:
                break
            await asyncio.sleep(0.05)
        print(sorted(seen & {"player", "mixer", "options", "playlist", "stored_playlist"}))
        task.cancel()
        watcher.disconnect()

    asyncio.run(main())
    """#

    func testTheSyncClientDrivesThePlayer() throws {
        let (out, status, stderr) = try run(Self.script, extra: [:], arguments: { _, _ in [] })
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(out, """
        0.21.0
        play 100 2 0 True
        pause 30
        b
        refused: [50@0] {add} jukebox plays http and https streams only (not ftp URLs)
        2
        ['mixer', 'player']
        ['player']
        pause

        """)
    }

    func testHomeAssistantsCallPatternWithTheAsyncioClient() throws {
        let (out, status, stderr) = try run(Self.homeAssistant, extra: ["playlists": dir + "/playlists"], arguments: { a, b in [a, b] })
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(out, """
        play 100 True 30.000 a ['sleep 15', 'sleep 30', 'sleep 60', 'sleep track', 'sleep chapter', 'sleep folder', 'sleep off', 'speed 0.75', 'speed 1', 'speed 1.25', 'speed 1.5', 'speed 2', 'speed default']
        []
        pause 30
        play b
        a True
        1 1 1
        ['sleep 15', 'sleep 30', 'sleep 60', 'sleep track', 'sleep chapter', 'sleep folder', 'sleep off', 'speed 0.75', 'speed 1', 'speed 1.25', 'speed 1.5', 'speed 2', 'speed default', 'ha']
        play 2 a
        play 1 b
        refused: [50@0] {add} jukebox plays http and https streams only (not ftp URLs)
        stop
        play
        ['mixer', 'options', 'player', 'playlist', 'stored_playlist']

        """)
        XCTAssertEqual(try String(contentsOfFile: dir + "/playlists/ha.m3u", encoding: .utf8), dir + "/a.wav\n" + dir + "/b.wav\n")
    }

    /// An audiobook's chapter in `currentsong` (jukebox's `Chapter`, `ChapterNumber`,
    /// `ChapterCount`; `Title` stays the file's), and a client in `idle player` woken when the
    /// chapter playing changes, by a seek or as it plays; the real `mpc` shows the song as before.
    static let chapters = #"""
    import sys, threading, mpd
    def client():
        c = mpd.MPDClient()
        c.timeout = 5
        c.connect("127.0.0.1", int(sys.argv[1]))
        return c
    c = client()
    c.pause(1)
    c.seekcur(0.5)
    s = c.currentsong()
    print(s["title"], "|", s["chapter"], s["chapternumber"], s["chaptercount"])
    # mpc (libmpdclient) skips the keys it does not know and names the song.
    import subprocess
    print(subprocess.run(["mpc", "-h", "127.0.0.1", "-p", sys.argv[1], "current"], capture_output=True, text=True).stdout.strip())
    print(sorted(c.idle()))
    other = client()
    t = threading.Timer(0.3, lambda: other.seekcur(3.2))
    t.start()
    print(c.idle("player"))
    t.join()
    print(c.currentsong()["chapter"])
    c.seekcur(0.2)
    c.pause(0)
    c.idle()
    # Nothing but the chapter changes at 1.5 s: idle wakes then, not at the file's end (4 s).
    for _ in range(3):
        c.idle("player")
        if c.currentsong().get("chapternumber") == "2":
            break
    print(c.currentsong().get("chapter"))
    """#

    func testCurrentsongHasTheChapterAndIdleWakesWhenItChanges() throws {
        let book = dir + "/book.mp3"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/chapters.mp3").path, toPath: book)
        let (out, status, stderr) = try run(Self.chapters, extra: [:], music: [book, dir + "/a.wav"], arguments: { _, _ in [] })
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(out, """
        Chapters in ID3 | Opening 1 3
        Fixture - Chapters in ID3
        ['player']
        ['player']
        <img src=x onerror=alert(1)>
        Café au lait

        """)
    }

    /// Runs `script` (python3 SCRIPT PORT ARGS...) against a player of a.wav and b.wav with
    /// `extra` in its `mpd` object: stdout, exit status, stderr.
    private func run(_ script: String, extra: [String: Any], music: [String]? = nil,
                     arguments: (String, String) -> [String]) throws -> (String, Int32, String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
              (try? Process.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", "import mpd, mpd.asyncio"]).waitAndStatus()) == 0 else {
            throw missingPeer("python3-mpd is not installed; board/setup.sh installs it")
        }
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
        let port = try MPCTests.freePort()
        let daemon = try startDaemon(music ?? [a, b], extra: ["mpd": ["port": port].merging(extra) { $1 }])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        try script.write(toFile: dir + "/script.py", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [dir + "/script.py", String(port)] + arguments(a, b)
        let out = dir + "/py.out", err = dir + "/py.err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        try p.run()
        XCTAssertTrue(waitFor(30) { !p.isRunning }, "the script did not finish in 30 s")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "", p.terminationStatus,
                (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

extension Process {
    /// Waits for the end and gives the exit status.
    fileprivate func waitAndStatus() -> Int32 {
        waitUntilExit()
        return terminationStatus
    }
}

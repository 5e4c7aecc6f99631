// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

extension MPCLibraryTests {
    /// python-mpd2's sync client (Home Assistant's library) over every command jukebox implements,
    /// in an order a person might use them, with each reply reduced to what matters (a count, a
    /// key, the ACK's code): what the issue's "the sync client over every command above" asks.
    static let everyCommand = #"""
    import sys, mpd
    c = mpd.MPDClient()
    c.timeout = 5
    c.connect("127.0.0.1", int(sys.argv[1]))
    def run(name, *args, show=lambda r: ""):
        try:
            r = getattr(c, name)(*args)
            print((name + " ok " + str(show(r))).rstrip())
        except mpd.CommandError as e:
            print(name, "ACK", str(e).split("]")[0] + "]")
    keys = lambda r: ",".join(sorted(k for k in r if k not in ("time", "elapsed", "bitrate", "audio", "uptime", "playtime", "db_update")))
    count = lambda r: len(r)
    run("ping")
    run("commands", show=lambda r: "status" in r and "albumart" in r and "save" in r)
    run("notcommands", show=count)
    run("tagtypes", show=lambda r: "Artist" in r)
    run("urlhandlers", show=count)
    run("decoders", show=lambda r: len(r) > 0)
    run("outputs", show=lambda r: r[0]["outputname"])
    run("replay_gain_status", show=lambda r: r)
    run("stats", show=lambda r: (r["songs"], r["artists"], r["albums"]))
    run("lsinfo", show=lambda r: [d.get("directory") for d in r])
    run("listall", show=count)
    run("listallinfo", "Abba", show=lambda r: [s.get("title") for s in r if "file" in s])
    run("list", "artist", show=lambda r: [a["artist"] for a in r])
    run("find", "album", "Gold", show=count)
    run("search", "title", "queen", show=lambda r: r[0]["file"])
    run("count", "artist", "Bach", show=lambda r: r["songs"])
    run("update", show=lambda r: r.isdigit())
    run("rescan", "Bach", show=lambda r: r.isdigit())
    run("clear")
    run("findadd", "artist", "ABBA")
    run("searchadd", "title", "prel")
    run("add", "Bach/prelude.wav")
    run("addid", "Abba/Gold/01.wav", "0", show=lambda r: r.isdigit())
    run("playlistinfo", show=lambda r: [s["pos"] + ":" + s["title"] for s in r])
    ids = [s["id"] for s in c.playlistid()]
    run("playlistid", ids[1], show=lambda r: r[0]["title"])
    run("move", 0, 4)
    run("moveid", ids[0], 0)
    run("shuffle", "1:3")
    run("plchanges", 0, show=count)
    run("plchangesposid", 0, show=count)
    run("delete", 4)
    run("deleteid", ids[1])
    run("playlistinfo", show=lambda r: [s["title"] for s in r])
    run("play", 0)
    run("currentsong", show=lambda r: r["title"])
    run("status", show=keys)
    run("pause", 1)
    run("playid", ids[0])
    run("seek", 0, 10)
    run("seekid", ids[0], 12)
    run("seekcur", "+2")
    run("next")
    run("previous")
    run("setvol", 40)
    run("volume", 5)
    run("status", show=lambda r: r["volume"])
    run("random", 1)
    run("random", 0)
    run("repeat", 1)
    run("single", 1)
    run("single", 0)
    run("repeat", 0)
    run("consume", 1)
    run("crossfade", 3)
    run("save", "trip")
    run("listplaylists", show=lambda r: [p["playlist"] for p in r])
    run("listplaylist", "trip", show=count)
    run("listplaylistinfo", "trip", show=lambda r: r[0]["title"])
    run("playlistadd", "trip", "Bach/prelude.wav")
    run("playlistdelete", "trip", 0)
    run("rename", "trip", "road")
    run("load", "road")
    run("playlistclear", "road")
    run("rm", "road")
    run("albumart", "Abba/Gold/01.wav", show=lambda r: len(r["binary"]))
    run("readpicture", "Abba/Gold/01.wav", show=lambda r: r)
    run("stop")
    run("status", show=lambda r: r["state"])
    c.close()
    c.disconnect()
    """#

    func testPythonsSyncClientRunsEveryCommand() throws {
        let probe = try? Process.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", "import mpd"])
        probe?.waitUntilExit()
        guard probe?.terminationStatus == 0 else { throw missingPeer("python3-mpd is not installed; board/setup.sh installs it") }
        let daemon = try startDaemon([music], extra: ["mpd": ["bind": "127.0.0.1", "port": port, "playlists": dir + "/playlists", "allowURLs": true]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertEqual(try mpc("--wait", "update").status, 0)
        try Self.everyCommand.write(toFile: dir + "/every.py", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [dir + "/every.py", String(port)]
        let out = dir + "/every.out", err = dir + "/every.err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        try p.run()
        XCTAssertTrue(waitFor(30) { !p.isRunning }, "the script did not finish in 30 s")
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), """
        ping ok
        commands ok True
        notcommands ok 0
        tagtypes ok True
        urlhandlers ok 2
        decoders ok True
        outputs ok jukebox
        replay_gain_status ok off
        stats ok ('3', '2', '2')
        lsinfo ok ['Abba', 'Bach']
        listall ok 6
        listallinfo ok ['Dancing Queen', 'Knowing Me']
        list ok ['ABBA', 'Bach']
        find ok 2
        search ok Abba/Gold/01.wav
        count ok 1
        update ok True
        rescan ok True
        clear ok
        findadd ok
        searchadd ok
        add ok
        addid ok True
        playlistinfo ok ['0:Dancing Queen', '1:Dancing Queen', '2:Knowing Me', '3:Prelude', '4:Prelude']
        playlistid ok Dancing Queen
        move ok
        moveid ok
        shuffle ok
        plchanges ok 5
        plchangesposid ok 5
        delete ok
        deleteid ok
        playlistinfo ok ['Dancing Queen', 'Knowing Me', 'Prelude']
        play ok
        currentsong ok Dancing Queen
        status ok consume,duration,nextsong,nextsongid,playlist,playlistlength,random,repeat,single,song,songid,state,volume
        pause ok
        playid ok
        seek ok
        seekid ok
        seekcur ok
        next ok
        previous ok
        setvol ok
        volume ok
        status ok 45
        random ok
        random ok
        repeat ok
        single ok
        single ok
        repeat ok
        consume ACK [2@0]
        crossfade ACK [2@0]
        save ok
        listplaylists ok ['sleep 15', 'sleep 30', 'sleep 60', 'sleep track', 'sleep chapter', 'sleep folder', 'sleep off', 'speed 0.75', 'speed 1', 'speed 1.25', 'speed 1.5', 'speed 2', 'speed default', 'trip']
        listplaylist ok 3
        listplaylistinfo ok Dancing Queen
        playlistadd ok
        playlistdelete ok
        rename ok
        load ok
        playlistclear ok
        rm ok
        albumart ok 20000
        readpicture ok {}
        stop ok
        status ok stop

        """)
    }
}

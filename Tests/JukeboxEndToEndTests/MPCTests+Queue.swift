// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

// mpc's queue-ordering and stored-playlist commands against the binary, exact output checked.
// (`mpc lsplaylists` asks `lsinfo`, the library's command: it is tested with the library.)
extension MPCTests {
    func testMoveInsertAndShuffleReorderTheQueueWhileTheSongPlaysOn() throws {
        let c = dir + "/c.wav", d = dir + "/d.wav"
        try TestAudio.write(path: c, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: d, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([a, b, c], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        XCTAssertEqual(try mpc("move", "1", "3").status, 0)
        XCTAssertEqual(try mpc("playlist").out, "b\nc\na\n")
        assertStatus(try mpc("status").out, song: "a", state: "playing", position: "#3/3", options: Self.plain)
        XCTAssertEqual(try mpc("play", "1").status, 0)
        // insert: right after the current song.
        let inserted = try mpc("insert", d)
        XCTAssertEqual(inserted.status, 0, inserted.err)
        XCTAssertEqual(try mpc("playlist").out, "b\nd\nc\na\n")
        XCTAssertEqual(try mpc("-f", "%position% %file%", "current").out, "1 \(b)\n")
        // shuffle: the current song leads, the rest are permuted; it plays on.
        XCTAssertEqual(try mpc("shuffle").status, 0)
        let shuffled = try mpc("playlist").out.split(separator: "\n")
        XCTAssertEqual(shuffled.first, "b")
        XCTAssertEqual(Set(shuffled), ["a", "b", "c", "d"])
        assertStatus(try mpc("status").out, song: "b", state: "playing", position: "#1/4", options: Self.plain)
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶"), "the core stopped")
        let bad = try mpc("move", "9", "1")
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.err.contains("MPD error: Bad song index"), bad.err)
    }

    func testStoredPlaylistsSaveLoadListAndRemove() throws {
        let folder = dir + "/playlists"
        let daemon = try startPlayer(["playlists": folder])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let saved = try mpc("save", "road trip")
        XCTAssertEqual(saved.status, 0, saved.err)
        XCTAssertEqual(try String(contentsOfFile: folder + "/road trip.m3u", encoding: .utf8), "\(a)\n\(b)\n")
        let again = try mpc("save", "road trip")
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.err.contains("MPD error: Playlist already exists"), again.err)
        XCTAssertEqual(try mpc("playlist", "road trip").out, "a\nb\n")
        // mpc asks `lsinfo` for the stored playlists (the root lists them after the music).
        XCTAssertEqual(try mpc("lsplaylists").out, "road trip\n")
        XCTAssertEqual(try mpc("clear").status, 0)
        XCTAssertEqual(try mpc("load", "road trip").out, "loading: road trip\n")
        XCTAssertEqual(try mpc("playlist").out, "a\nb\n")
        XCTAssertEqual(try mpc("rm", "road trip").status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/road trip.m3u"))
        let gone = try mpc("load", "road trip")
        XCTAssertEqual(gone.status, 1)
        XCTAssertTrue(gone.err.contains("MPD error: No such playlist"), gone.err)
        let evil = try mpc("save", "../evil")
        XCTAssertEqual(evil.status, 1)
        XCTAssertTrue(evil.err.contains("MPD error: Bad playlist name"), evil.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/evil.m3u"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "something was left in the folder")
    }
}

extension MPCTests {
    func testWithoutAPlaylistsFolderTheListIsEmptyAndSaveSaysWhy() throws {
        // No state file and no mpd.playlists: stored playlists are off.
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(readLine(fd), "OK MPD 0.21.0")
        send(fd, "listplaylists\n")
        // Only the sleep timer's and the speeds (MPCTests+Sleep.swift, MPCTests+Speed.swift).
        for name in ["sleep 15", "sleep 30", "sleep 60", "sleep track", "sleep chapter", "sleep folder", "sleep off",
                     "speed 0.75", "speed 1", "speed 1.25", "speed 1.5", "speed 2", "speed default"] {
            XCTAssertEqual(readLine(fd), "playlist: \(name)")
            XCTAssertEqual(readLine(fd), "Last-Modified: 1970-01-01T00:00:00Z")
        }
        XCTAssertEqual(readLine(fd), "OK")
        send(fd, "save x\n")
        XCTAssertEqual(readLine(fd), "ACK [52@0] {save} stored playlists are off: no playlists folder (mpd.playlists in the config)")
    }
}

extension MPCTests {
    /// Sends one command on a raw connection and reads its reply up to `OK` or the `ACK`.
    func exchange(_ fd: Int32, _ command: String) -> [String] {
        send(fd, command + "\n")
        var lines: [String] = []
        while let line = readLine(fd) {
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") { break }
        }
        return lines
    }

    func testPlchangesListsWhatWasAddedOrMovedSinceAVersion() throws {
        let daemon = try startPlayer()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(readLine(fd), "OK MPD 0.21.0")
        let status = exchange(fd, "status")
        let version = try XCTUnwrap(status.first { $0.hasPrefix("playlist: ") }.flatMap { Int($0.dropFirst(10)) }, "\(status)")
        let ids = exchange(fd, "playlistid").filter { $0.hasPrefix("Id: ") }
        XCTAssertEqual(ids.count, 2)
        XCTAssertEqual(exchange(fd, "plchangesposid \(version)"), ["OK"])
        XCTAssertEqual(exchange(fd, "move 1 0"), ["OK"])
        XCTAssertEqual(exchange(fd, "status").first { $0.hasPrefix("playlist: ") }, "playlist: \(version + 1)")
        XCTAssertEqual(exchange(fd, "plchangesposid \(version)"), ["cpos: 0", ids[1], "cpos: 1", ids[0], "OK"])
        // The old form, and a range of the new one.
        XCTAssertEqual(exchange(fd, "playlist"), ["0:file: \(b)", "1:file: \(a)", "OK"])
        XCTAssertEqual(exchange(fd, "plchangesposid \(version) 1:2"), ["cpos: 1", ids[0], "OK"])
        // addid at the front: the new entry and both it pushed along.
        let added = exchange(fd, "addid \(MPDQuote.quoted(a)) 0")
        XCTAssertEqual(added.count, 2, "\(added)")
        XCTAssertEqual(exchange(fd, "plchangesposid \(version + 1)"), ["cpos: 0", added[0], "cpos: 1", ids[1], "cpos: 2", ids[0], "OK"])
        XCTAssertEqual(exchange(fd, "plchangesposid \(version + 2)"), ["OK"])
        XCTAssertEqual(exchange(fd, "addid \(MPDQuote.quoted(a)) 9"), ["ACK [2@0] {addid} Bad song index"])
        XCTAssertEqual(exchange(fd, "moveid 999 0"), ["ACK [50@0] {moveid} No such song"])
        XCTAssertEqual(exchange(fd, "addid ftp://radio.example/x"), ["ACK [50@0] {addid} jukebox plays http and https streams only (not ftp URLs)"])
        XCTAssertEqual(exchange(fd, "crossfade 3"), ["ACK [2@0] {crossfade} jukebox has no crossfade: tracks join gaplessly"])
        XCTAssertEqual(exchange(fd, "stats").map { $0.split(separator: ":")[0] },
                       ["artists", "albums", "songs", "uptime", "playtime", "db_playtime", "OK"])
        // The library is the music folders; this player's `music` names two files, no folder.
        XCTAssertEqual(exchange(fd, "stats")[2], "songs: 0")
    }
}

/// MPD's argument quoting, for commands written by hand in tests.
enum MPDQuote {
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

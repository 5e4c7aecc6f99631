// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// Start-up never destroys the saved place, and the volume limits hold from the first second:
/// the real binary against state files a box meets at boot.
final class StartStateTests: ScratchTestCase {

    func config(_ fields: String) -> String {
        let path = dir + "/c-\(UUID().uuidString).json"
        try? "{\"audio\": \"null\", \"socket\": \"\(dir!)/ctl\", \(fields)}".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func status() -> String {
        (try? Jukebox.run(["ctl", "--socket", dir + "/ctl", "status"]))?.stdout ?? ""
    }

    func stop(_ daemon: Jukebox.Running) -> Jukebox.Result? {
        daemon.process.terminate()
        return daemon.wait(timeout: 5)
    }

    func testVolumeLimitsHoldOnTheFirstStartAndAfterADamagedStateFile() throws {
        let song = dir + "/song.wav", state = dir + "/state.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 6)
        let first = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"], "volumeMax": 60"#)])
        XCTAssertTrue(waitFor(10) { status().hasPrefix("▶ song") }, status())
        XCTAssertTrue(status().contains("vol 60"), "no state file yet: volumeMax still holds: \(status())")
        XCTAssertEqual(stop(first)?.status, 0)

        try "{\"version\": 1, \"tracks\": [".write(toFile: state, atomically: true, encoding: .utf8)
        let second = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"], "bootVolume": 30"#)])
        XCTAssertTrue(waitFor(10) { status().hasPrefix("▶ song") }, status())
        XCTAssertTrue(status().contains("vol 30"), "a damaged state file still starts at bootVolume: \(status())")
        XCTAssertEqual(stop(second)?.status, 0)
    }

    /// The appliance's first boot before its music partition is mounted (or an empty folder
    /// filled later): the player says it waits, and plays what arrives without anyone's help.
    func testAFirstStartWithAnEmptyMusicFolderPlaysTheMusicThatArrivesThere() throws {
        try playsWhatArrives(in: "")
    }

    /// An album's folder made before its files (`cp -r`, an upload of a folder): the files
    /// change the album's time, not the music folder's, and are found all the same.
    func testMusicCopiedIntoAnEmptyAlbumFolderIsFoundToo() throws {
        try playsWhatArrives(in: "/Album")
    }

    /// Starts a player on an empty `dir/music` (with `sub` made in it, empty) and no state, then
    /// renames a FLAC into `music + sub`: the player says it waits, then plays it.
    private func playsWhatArrives(in sub: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let music = dir + "/music", state = dir + "/state.json", song = dir + "/song.flac"
        try FileManager.default.createDirectory(atPath: music + sub, withIntermediateDirectories: true)
        try TestAudio.write(path: song, kind: .flac, frames: 44_100 * 30)
        let daemon = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(music)"]"#)])
        XCTAssertTrue(waitFor(30) { status().hasPrefix("… queue empty") && status().contains("waiting for music in \(music)") }, status(),
                      file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state), "an empty queue is never saved", file: file, line: line)
        // Copied in whole, as a mount brings it: written beside, renamed in.
        XCTAssertEqual(rename(song, music + sub + "/song.flac"), 0, file: file, line: line)
        XCTAssertTrue(waitFor(30) { status().hasPrefix("▶ song") }, status(), file: file, line: line)
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0, file: file, line: line)
        XCTAssertTrue(result?.stderr.contains("music is there: \(music)") == true, result?.stderr ?? "", file: file, line: line)
        XCTAssertEqual((BinaryTests.snapshot(state)?["tracks"] as? [Any])?.count, 1, "the music that arrived is saved", file: file, line: line)
    }

    func testPlayWithAStateFileResumesWhenItsQueueIsTheSamePaths() throws {
        let a = dir + "/a.wav", b = dir + "/b.flac", state = dir + "/state.json", out = dir + "/out.raw"
        try TestAudio.write(path: a, kind: .wav16, frames: 22_050)
        try TestAudio.write(path: b, kind: .flac, frames: 30_001)
        try #"{"version": 1, "tracks": [{"path": "\#(a)", "title": "a"}, {"path": "\#(b)", "title": "b"}], "current": 1, "position": 0, "phase": "playing"}"#
            .write(toFile: state, atomically: true, encoding: .utf8)
        let r = try Jukebox.run(["play", "--device", "file:FILE=\(out),FORMAT=raw", "--socket", "", "--state", state, a, b], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: out))
        XCTAssertTrue(recorded.elementsEqual(try TestAudio.decode(path: b).bytes), "resumed at the saved track: only b is heard (\(recorded.count) bytes)")

        // Other paths: a new queue from its start.
        try FileManager.default.removeItem(atPath: out)
        let other = try Jukebox.run(["play", "--device", "file:FILE=\(out),FORMAT=raw", "--socket", "", "--state", state, b], timeout: 30)
        XCTAssertEqual(other.status, 0, other.stderr)
        XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: out)).elementsEqual(try TestAudio.decode(path: b).bytes))
    }

    /// While playing only the small place sidecar is written; on the way out the queue file is
    /// written whole, so a copy of it alone (a backup, another box) resumes where the player stopped.
    func testAfterACleanExitTheQueueFileAloneHoldsThePlace() throws {
        // 30 s waits: under qemu-aarch64 beside other work a start took more than 10 s to sound.
        let song = dir + "/song.wav", state = dir + "/state.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 40)
        let first = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"]"#)])
        XCTAssertTrue(waitFor(30) { status().hasPrefix("▶ song") }, status())
        _ = try Jukebox.run(["ctl", "--socket", dir + "/ctl", "seek", "0:30"])
        XCTAssertTrue(waitFor(30) { status().contains("0:30") }, status())
        XCTAssertEqual(stop(first)?.status, 0)

        let copy = dir + "/copy"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: state, toPath: copy + "/state.json")
        let second = try Jukebox.start(["run", "--config", config(#""state": "\#(copy)/state.json", "music": ["\#(song)"]"#)])
        XCTAssertTrue(waitFor(30) { status().hasPrefix("▶ song") }, status())
        XCTAssertTrue(status().contains("0:3"), "the copied queue file resumes at 0:30: \(status())")
        XCTAssertEqual(stop(second)?.status, 0)
    }

    func testASecondPlayerOnTheSameStateFileRefusesToStart() throws {
        let song = dir + "/song.wav", state = dir + "/state.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 6)
        let first = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"]"#)])
        XCTAssertTrue(waitFor(10) { status().hasPrefix("▶ song") }, status())
        let second = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"], "socket": """#)])
        let refused = second.wait(timeout: 10)
        XCTAssertEqual(refused?.status, 1, "the second player did not refuse")
        XCTAssertTrue(refused?.stderr.contains("another jukebox is using the state file \(state)") == true, refused?.stderr ?? "")
        XCTAssertTrue(status().hasPrefix("▶ song"), "the first player plays on: \(status())")
        XCTAssertEqual(stop(first)?.status, 0)
    }

    func testWrongValuesInTheStateFileAreCopiedAsideAndTheValidPartKept() throws {
        let a = dir + "/a.wav", b = dir + "/b.wav", state = dir + "/state.json"
        try TestAudio.write(path: a, kind: .wav16, frames: 4410)
        try TestAudio.write(path: b, kind: .wav16, frames: 4410)
        let text = #"{"version": 1, "tracks": [{"path": "\#(a)", "title": "a"}, {"path": 42}, {"path": "\#(b)", "title": "b"}], "current": 2, "position": "lots", "phase": "paused", "volume": 70}"#
        try text.write(toFile: state, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config(#""state": "\#(state)""#)])
        XCTAssertTrue(waitFor(10) { status().hasPrefix("⏸ b") }, "the current track is still b: \(status())")
        XCTAssertTrue(status().contains("[2/2]") && status().contains("vol 70"), status())
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0)
        XCTAssertEqual(try String(contentsOfFile: state + ".damaged-1", encoding: .utf8), text, "the original is kept for a person")
        XCTAssertTrue(result?.stderr.contains("tracks[1]") == true && result?.stderr.contains("position") == true, result?.stderr ?? "")
    }

    func testAStateFileThatCannotBeReadIsNeverOverwritten() throws {
        let song = dir + "/song.wav", state = dir + "/state.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 6)
        // Reading /proc/self/mem from its start fails with EIO: an unreadable file, even for root.
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: "/proc/self/mem")
        let daemon = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"]"#)])
        XCTAssertTrue(waitFor(10) { status().hasPrefix("▶ song") }, status())
        XCTAssertTrue(status().contains("not saving"), status())
        let diag = try Jukebox.run(["ctl", "--socket", dir + "/ctl", "diag"]).stdout
        XCTAssertTrue(diag.contains("not saving"), diag)
        let save = try Jukebox.run(["ctl", "--socket", dir + "/ctl", "save"])
        XCTAssertTrue(save.stderr.contains("error: not saving: the state file cannot be read"), save.stderr)
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0)
        XCTAssertTrue(result?.stderr.contains("cannot read the state file \(state)") == true, result?.stderr ?? "")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: state), "/proc/self/mem", "the state file was replaced")
    }

    func testAStateFileReadableAgainIsResumedAndSavedFromThen() throws {
        let song = dir + "/song.wav", other = dir + "/other.wav", state = dir + "/state.json"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 6)
        try TestAudio.write(path: other, kind: .wav16, frames: 44_100 * 6)
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: "/proc/self/mem")
        let daemon = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": ["\#(song)"]"#)])
        XCTAssertTrue(waitFor(10) { status().contains("not saving") }, status())
        // The place the file holds comes back (a card that answered late): written beside, renamed in.
        let saved = #"{"version": 1, "tracks": [{"path": "\#(other)", "title": "other"}], "current": 0, "position": 2, "phase": "paused"}"#
        try saved.write(toFile: dir + "/next.json", atomically: true, encoding: .utf8)
        XCTAssertEqual(rename(dir + "/next.json", state), 0)
        XCTAssertTrue(waitFor(5) { status().hasPrefix("⏸ other  0:02") }, status())
        XCTAssertFalse(status().contains("not saving"), status())
        XCTAssertEqual(try Jukebox.run(["ctl", "--socket", dir + "/ctl", "save"]).stdout, "saved to \(state)\n")
        XCTAssertEqual(stop(daemon)?.status, 0)
        XCTAssertEqual(BinaryTests.snapshot(state)?["phase"] as? String, "paused")
    }

    func testMusicMissingAtStartWaitsKeepsThePlaceAndResumesWhenItAppears() throws {
        let usb = dir + "/usb", staging = dir + "/staging", state = dir + "/state.json"
        let a = usb + "/album/a.wav", b = usb + "/album/b.wav"
        let saved = #"{"version": 1, "tracks": [{"path": "\#(a)", "title": "a"}, {"path": "\#(b)", "title": "b"}], "current": 1, "position": 0.5, "phase": "playing"}"#
        try saved.write(toFile: state, atomically: true, encoding: .utf8)
        let daemon = try Jukebox.start(["run", "--config", config(#""state": "\#(state)", "music": []"#)])
        XCTAssertTrue(waitFor(10) { status().contains("waiting for music: \(usb) is not there") }, status())
        XCTAssertTrue(status().contains("[2/2]"), "the place is kept: \(status())")
        let file = try XCTUnwrap(BinaryTests.snapshot(state))
        XCTAssertEqual((file["tracks"] as? [Any])?.count, 2, "the state file keeps every entry")
        XCTAssertEqual(file["current"] as? Int, 1)

        // The stick appears (at once, as a mount does): the player resumes where it was.
        try FileManager.default.createDirectory(atPath: staging + "/album", withIntermediateDirectories: true)
        try TestAudio.write(path: staging + "/album/a.wav", kind: .wav16, frames: 4410)
        try TestAudio.write(path: staging + "/album/b.wav", kind: .wav16, frames: 44_100 * 6)
        XCTAssertEqual(rename(staging, usb), 0)
        XCTAssertTrue(waitFor(5) { status().hasPrefix("▶ b") }, status())
        let result = stop(daemon)
        XCTAssertEqual(result?.status, 0)
        XCTAssertTrue(result?.stderr.contains("waiting for music: \(usb) is not there") == true, result?.stderr ?? "")
        XCTAssertFalse(result?.stderr.contains("dropped") == true, result?.stderr ?? "")
    }
}

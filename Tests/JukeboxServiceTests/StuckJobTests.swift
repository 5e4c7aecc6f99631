// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// A job that never ends (a tag read stuck on a hung share: here a reader closure held at a gate
/// that never opens while it matters) must not starve the jobs behind it, and clients that go away
/// while their reply waits for it must give their slots back.
final class StuckJobTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    private func start(_ dir: TempDir, jobLimit: Double, mpd: Bool = false,
                       load: @escaping @Sendable ([String]) -> (tracks: [TrackInfo], messages: [String])) throws
        -> (Box, DispatchSemaphore) {
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        var state = State()
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 100)]))
        let runtime = Runtime(state: state, audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = load
        runtime.jobLimit = jobLimit
        if mpd {
            var settings = MPDSettings()
            settings.binds = [dir.file("mpd")]
            settings.maxClients = 4
            XCTAssertEqual(runtime.openMPD(settings, musicFolders: [dir.file("m")]), [])
        }
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        return (box, done)
    }

    private func stop(_ box: Box, _ done: DispatchSemaphore) {
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the loop did not end")
    }

    /// `start` in a fresh folder with a reader that is held at the gate returned for a path with
    /// "stuck" in it and reads one track from any other.
    private func startWithStuckReads(jobLimit: Double) throws -> (TempDir, Gate, Box, DispatchSemaphore) {
        let dir = TempDir(), gate = Gate()
        let (box, done) = try start(dir, jobLimit: jobLimit) { paths in
            if paths.contains(where: { $0.contains("stuck") }) { gate.pass() }
            return (paths.map { TrackInfo(path: $0 + "/x.flac") }, [])
        }
        return (dir, gate, box, done)
    }

    func testAStuckReadIsGivenUpWithItsReasonAndTheReadsBehindItAreAnswered() throws {
        let (dir, gate, box, done) = try startWithStuckReads(jobLimit: 0.5)
        defer { gate.open(); stop(box, done) }
        let stuck = try ControlClient(path: dir.file("control"))
        XCTAssertTrue(stuck.send("add /share/stuck"))
        gate.waitForSomeoneAtIt()
        let next = try ControlClient(path: dir.file("control"))
        XCTAssertTrue(next.send("add /music"))
        let started = monotonicNow()
        let reason = stuck.readLine(timeout: 10)
        XCTAssertEqual(reason?.hasPrefix("error: reading /share/stuck: no progress for 0.5 s, given up"), true, reason ?? "no reply")
        XCTAssertEqual(next.readLine(timeout: 10), "ok 1 track added", "the read queued behind the stuck one goes on")
        print("stuck read given up after \(Int((monotonicNow() - started) * 1000)) ms (limit 500 ms)")
        // The stuck worker is still held; another read runs on its replacement.
        XCTAssertEqual(next.request("add /more", timeout: 10), "ok 1 track added")
        XCTAssertEqual(next.request("status", timeout: 5)?.contains("3 tracks"), true)
    }

    func testEveryWorkerStuckFailsLaterReadsAtOnceAndOneComingBackServesAgain() throws {
        let (dir, gate, box, done) = try startWithStuckReads(jobLimit: 0.3)
        defer { gate.open(); stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        // Four stuck reads take the four workers that may hang.
        for i in 1...4 {
            XCTAssertEqual(c.request("add /stuck\(i)", timeout: 10)?.contains("given up"), true, "read \(i)")
        }
        let refused = c.request("add /music", timeout: 10)
        XCTAssertEqual(refused?.contains("not started, 4 earlier jobs are still stuck"), true, refused ?? "no reply")
        gate.open()
        XCTAssertTrue(waitFor(10) { c.request("add /music", timeout: 5) == "ok 1 track added" }, "a worker back from its stuck read serves again")
    }

    func testControlClientsThatHangUpWhileTheirReplyWaitsGiveTheirSlotsBack() throws {
        let dir = TempDir()
        let gate = Gate()
        let (box, done) = try start(dir, jobLimit: 3600) { paths in
            gate.pass()
            return (paths.map { TrackInfo(path: $0 + "/x.flac") }, [])
        }
        defer { gate.open(); stop(box, done) }
        // More clients than there are slots, each asking for a read that never ends, then gone.
        for i in 0..<40 {
            let fd = try ControlSocket.connect(path: dir.file("control"))
            let line = "add /music/\(i)\n"
            // Refused ones (no room) are closed by the player: no SIGPIPE for the test.
            _ = send(fd, line, line.utf8.count, Int32(MSG_NOSIGNAL))
            close(fd)
        }
        gate.waitForSomeoneAtIt()
        let c = try ControlClient(path: dir.file("control"))
        let diag = c.request("diag", timeout: 5)
        XCTAssertNotEqual(diag, ControlClient.noRoomReply)
        XCTAssertTrue(waitFor(5) { c.request("diag", timeout: 5)?.contains("control clients 1\n") == true },
                      "the clients that left still hold slots: \(diag ?? "no reply")")
        // A client that only ended its side (shutdown) still gets its reply once it is ready.
        let half = try ControlSocket.connect(path: dir.file("control"))
        defer { close(half) }
        let line = "add /music/half\n"
        XCTAssertEqual(send(half, line, line.utf8.count, Int32(MSG_NOSIGNAL)), line.utf8.count)
        shutdown(half, Int32(SHUT_WR))
        gate.open()
        var bytes = [UInt8](repeating: 0, count: 256)
        var p = pollfd(fd: half, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&p, 1, 10_000), 1)
        let n = read(half, &bytes, bytes.count)
        XCTAssertEqual(n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : "", "ok 1 track added\n")
    }

    func testMPDClientsThatHangUpWhileTheirAddWaitsGiveTheirSlotsBack() throws {
        let dir = TempDir()
        dir.write("m/a.flac", "")
        let gate = Gate()
        let (box, done) = try start(dir, jobLimit: 3600, mpd: true) { paths in
            gate.pass()
            return (paths.map { TrackInfo(path: $0) }, [])
        }
        defer { gate.open(); stop(box, done) }
        // Four slots; ten clients in turn ask for a read that never ends and go away.
        for i in 0..<10 {
            var greeted: ControlClient?
            let t0 = Date()
            XCTAssertTrue(waitFor(5) {
                guard let c = try? ControlClient(path: dir.file("mpd")), c.readLine(timeout: 5) == "OK MPD 0.21.0" else { return false }
                greeted = c
                return true
            }, "client \(i): no room: the clients that left still hold slots")
            print("client \(i) after \(Date().timeIntervalSince(t0))")
            XCTAssertEqual(greeted?.send("add a.flac"), true)
        }
        let c = try ControlClient(path: dir.file("mpd"))
        XCTAssertEqual(c.readLine(timeout: 5), "OK MPD 0.21.0")
        XCTAssertTrue(c.send("ping"))
        XCTAssertEqual(c.readLine(timeout: 5), "OK")
    }

    /// The bound is on a stall, not on a job's length: a read that notes progress (as
    /// `LibraryLoader` does per file) runs three times the limit and is answered in full.
    func testASlowReadThatMakesProgressIsNotCut() throws {
        let dir = TempDir()
        let (box, done) = try start(dir, jobLimit: 0.5) { paths in
            var tracks: [TrackInfo] = []
            for i in 0..<15 {
                // A slow file: 0.1 s each, 1.5 s in all (the work itself, not a wait for the test).
                var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
                nanosleep(&pause, nil)
                JobProgress.note()
                tracks.append(TrackInfo(path: paths[0] + "/\(i).flac"))
            }
            return (tracks, [])
        }
        defer { stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(c.request("add /slow", timeout: 10), "ok 15 tracks added")
    }

    /// A library update whose folder read is stuck ends (no more `updating_db`) with the index as
    /// it was, instead of "Updating DB" for ever.
    func testAnMPDUpdateStuckInAFolderEnds() throws {
        let dir = TempDir()
        dir.write("m/stuck/1.flac", "")
        dir.write("m/ok/2.flac", "")
        let gate = Gate()
        let (box, done) = try start(dir, jobLimit: 0.5, mpd: true) { paths in
            if paths.contains(where: { $0.contains("stuck") }) { gate.pass() }
            return (paths.map { TrackInfo(path: $0 + "/2.flac", title: "Two") }, [])
        }
        defer { gate.open(); stop(box, done) }
        let c = try ControlClient(path: dir.file("mpd"))
        XCTAssertEqual(c.readLine(timeout: 5), "OK MPD 0.21.0")
        XCTAssertTrue(c.send("update"))
        XCTAssertEqual(c.readLine(timeout: 5), "updating_db: 1")
        XCTAssertEqual(c.readLine(timeout: 5), "OK")
        gate.waitForSomeoneAtIt()
        XCTAssertTrue(waitFor(10) {
            guard c.send("status") else { return false }
            var lines: [String] = []
            while let line = c.readLine(timeout: 5), line != "OK" { lines.append(line) }
            return !lines.contains { $0.hasPrefix("updating_db") }
        }, "the update never ended")
        XCTAssertTrue(c.send("lsinfo ok"))
        XCTAssertEqual(c.readLine(timeout: 5), "file: ok/2.flac", "the folder that could be read is in the index")
    }
}

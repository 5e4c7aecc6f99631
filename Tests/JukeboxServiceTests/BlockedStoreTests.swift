// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The loop never waits on the disk or the tag reader: with the state store held at its fsync,
/// or the tag reader held inside a folder, commands are still handled and answered. Gates, not
/// timings: what is checked is that an answer comes while the gate is still closed.
final class BlockedStoreTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    func testWithTheStoreHeldAtItsFsyncCommandsAreStillHandledAndAnsweredAndTheChangeRepliesOnceSaved() throws {
        let dir = TempDir()
        let gate = Gate()
        var store = StateStore(path: dir.file("state.json"))
        store.beforeSync = { gate.pass() }
        let (box, audio, done) = try start(dir, store: store)
        var stopped = false
        defer { gate.open(); if !stopped { stop(box, done) } }
        let c = try ControlClient(path: dir.file("control"))
        // `play` changes the place: the loop starts the track at once, and the save is held.
        XCTAssertTrue(c.send("play"))
        gate.waitForSomeoneAtIt()
        let other = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(other.request("status", timeout: 5)?.hasPrefix("ok ▶ a"), true, "answered while the store is held")
        XCTAssertEqual(other.request("vol 30", timeout: 0.5), nil, "a change is answered only once it is saved")
        XCTAssertTrue(waitFor(5) { audio.calls.contains(.volume(30)) }, "but handled at once: \(audio.calls)")
        XCTAssertNil(c.readLine(timeout: 0.2), "nor is the play answered before its save")
        // Lines sent behind an unanswered one are handled at once too; their replies keep the order.
        XCTAssertTrue(c.send("vol 20") && c.send("status"))
        XCTAssertTrue(waitFor(5) { audio.calls.contains(.volume(20)) }, "handled behind an unanswered line: \(audio.calls)")
        gate.open()
        XCTAssertEqual(c.readLine(timeout: 5)?.hasPrefix("ok ▶ a"), true)
        XCTAssertEqual(c.readLine(timeout: 5)?.contains("vol 20"), true)
        XCTAssertEqual(c.readLine(timeout: 5)?.hasPrefix("ok ▶ a"), true, "the status, last")
        XCTAssertEqual(other.readLine(timeout: 5)?.contains("vol 30"), true)
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        stopped = true
        XCTAssertEqual(store.load().snapshot?.volume, 20)
    }

    func testAPowerCommandRunsOnlyOnceTheSaveBeforeItIsOnDisk() throws {
        let dir = TempDir()
        let gate = Gate()
        var store = StateStore(path: dir.file("state.json"))
        store.beforeSync = { gate.pass() }
        let marker = dir.file("powered-off")
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        var state = State()
        state.settings.battery = BatterySettings(warnPercent: 15, criticalPercent: 5)
        state.settings.powerCommand = ["/usr/bin/touch", marker]
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 100)]))
        let runtime = Runtime(state: state, audio: audio, store: store, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox)
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer { gate.open(); stop(box, done) }
        // The battery empty: the place is saved (held at its fsync here) and the power command ordered.
        mailbox.post(.battery(BatteryReading(percent: 3)))
        gate.waitForSomeoneAtIt()
        XCTAssertFalse(waitFor(0.5) { FileManager.default.fileExists(atPath: marker) }, "the power command ran before the save")
        gate.open()
        XCTAssertTrue(waitFor(5) { FileManager.default.fileExists(atPath: marker) }, "the power command never ran")
        XCTAssertNotNil(store.load().snapshot, "the place is on disk when the power command runs")
    }

    func testAddReadsTagsOffTheLoop() throws {
        let dir = TempDir()
        let gate = Gate()
        let (box, _, done) = try start(dir, store: nil) { paths in
            gate.pass()
            return (paths.map { TrackInfo(path: $0 + "/x.flac") }, ["one unreadable file"])
        }
        defer { gate.open(); stop(box, done) }
        let c = try ControlClient(path: dir.file("control"))
        XCTAssertTrue(c.send("add /music"))
        gate.waitForSomeoneAtIt()
        let other = try ControlClient(path: dir.file("control"))
        XCTAssertEqual(other.request("status", timeout: 5)?.contains("2 tracks"), true, "answered while the tags are read")
        gate.open()
        XCTAssertEqual(c.readLine(timeout: 5), "  one unreadable file")
        XCTAssertEqual(c.readLine(timeout: 5), "ok 1 track added")
        XCTAssertEqual(other.request("status", timeout: 5)?.contains("3 tracks"), true)
    }

    private func start(_ dir: TempDir, store: StateStore?,
                       load: (@Sendable ([String]) -> (tracks: [TrackInfo], messages: [String]))? = nil) throws
        -> (Box, RecordingAudio, DispatchSemaphore) {
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        var state = State()
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 100), TrackInfo(path: "/m/b.flac")]))
        let runtime = Runtime(state: state, audio: audio, store: store, status: RecordingStatus(), log: Log(level: .error),
                              mailbox: mailbox, control: control)
        runtime.loadTracks = load
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        return (box, audio, done)
    }

    private func stop(_ box: Box, _ done: DispatchSemaphore) {
        box.runtime.mailbox.post(.quit)
        _ = done.wait(timeout: .now() + 5)
    }
}

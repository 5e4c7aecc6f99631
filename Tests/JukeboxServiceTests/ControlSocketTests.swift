// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The control socket against a running loop (fake audio), driven by real socket clients.
final class ControlSocketTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    var dir: TempDir!
    var audio: RecordingAudio!
    var box: Box!
    var loop: Thread!
    var finished: DispatchSemaphore!
    var path: String!

    override func setUpWithError() throws {
        dir = TempDir()
        try startLoop()
    }

    /// A loop with two tracks queued, its socket at `path` (named `name` in the test's folder:
    /// a stopped loop's socket may live on with its thread).
    func startLoop(named name: String = "control", idleLimit: Double = ControlSocket.defaultIdleLimit,
                   tracks: [TrackInfo] = [TrackInfo(path: "/m/a.flac", duration: 100), TrackInfo(path: "/m/b.flac")]) throws {
        path = dir.file(name)
        audio = RecordingAudio()
        let mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: path, idleLimit: idleLimit)
        var state = State()
        _ = reduce(&state, .add(tracks))
        box = Box(Runtime(state: state, audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                          mailbox: mailbox, control: control))
        finished = DispatchSemaphore(value: 0)
        let box = box!, done = finished!
        loop = Thread { _ = box.runtime.run(initial: []); done.signal() }
        loop.start()
    }

    override func tearDown() {
        stopLoop()
    }

    func stopLoop() {
        box.runtime.mailbox.post(.quit)
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success, "loop did not end")
        // XCTest keeps every test case object until the run ends: drop the runtime with the test.
        box = nil
        loop = nil
        audio = nil
    }

    func testSilentClientsKeepTheirSlotsUntilANewcomerNeedsOneWhileStreamingAndYieldingOnesStay() throws {
        stopLoop()
        try startLoop(named: "idle", idleLimit: 2)
        let watcher = try ControlClient(path: path)
        XCTAssertEqual(watcher.request("events", timeout: 5), "ok streaming events; send any line to stop")
        let yielder = try ControlClient(path: path)
        XCTAssertEqual(yielder.request("yield begin chime", timeout: 5), "ok released")
        // 30 silent connections take the other slots: the next one is refused while they are fresh.
        let silent = try (0..<30).map { _ in try ControlClient(path: path) }
        XCTAssertEqual(try ControlClient(path: path).request("status", timeout: 5), ControlClient.noRoomReply)
        // Once they have been silent for the limit, a newcomer takes the slot of the one silent longest.
        var newcomer: ControlClient?
        XCTAssertTrue(waitFor(10) {
            guard let c = try? ControlClient(path: path), c.request("status", timeout: 2)?.hasPrefix("ok ") == true else { return false }
            newcomer = c
            return true
        }, "no room for a new client after the idle limit")
        let c = try XCTUnwrap(newcomer)
        XCTAssertEqual(c.request("diag", timeout: 5)?.contains("control clients 32"), true, "one slot changed hands, no more")
        let kept = silent.filter { $0.request("status", timeout: 2)?.hasPrefix("ok ") == true }
        XCTAssertEqual(kept.count, 29, "exactly one silent client gave its slot up")
        // Both were silent far longer than the limit, and both still hold what they held.
        XCTAssertEqual(c.request("status", timeout: 5)?.contains("interrupted: chime"), true)
        _ = c.request("vol 50", timeout: 5)
        var seen: [String] = []
        while seen.last?.contains("volume 50") != true, seen.count < 10, let line = watcher.readLine(timeout: 5) { seen.append(line) }
        XCTAssertEqual(seen.last?.contains("volume 50"), true, "the watcher still streams: \(seen)")
        XCTAssertEqual(yielder.request("yield end", timeout: 5)?.hasPrefix("ok "), true)
    }

    /// A peer that begins a line and stops (a trickle, or one that died mid-line) is dropped after
    /// the limit even with room to spare; one silent between lines is kept.
    func testAClientStalledMidLineIsDroppedAndOneSilentBetweenLinesIsKept() throws {
        stopLoop()
        try startLoop(named: "stall", idleLimit: 1)
        let quiet = try ControlClient(path: path)
        XCTAssertEqual(quiet.request("status", timeout: 5)?.hasPrefix("ok "), true)
        let staller = try ControlSocket.connect(path: path)
        defer { close(staller) }
        XCTAssertEqual(write(staller, "stat", 4), 4)  // a line begun, never ended
        let observer = try ControlClient(path: path)
        XCTAssertTrue(waitFor(10) { observer.request("diag", timeout: 2)?.contains("control clients 2") == true },
                      "the stalled client should be dropped")
        XCTAssertEqual(quiet.request("status", timeout: 5)?.hasPrefix("ok "), true, "silent between lines, well past the limit, and kept")
    }

    func testCommandsGetReplies() throws {
        let c = try ControlClient(path: path)
        XCTAssertEqual(c.request("status", timeout: 5), "ok ■ 2 tracks queued  vol 100")
        XCTAssertEqual(c.request("play", timeout: 5)?.hasPrefix("ok ▶ a"), true)
        XCTAssertEqual(c.request("vol 40", timeout: 5)?.contains("vol 40"), true)
        XCTAssertEqual(c.request("frobnicate", timeout: 5), "error: unknown command \"frobnicate\" (try: help)")
        XCTAssertEqual(c.request("seek", timeout: 5), "error: usage: seek [+|-]m:ss")
    }

    func testReadingCommandsAnswerWithContinuationLinesAndAFinalStatus() throws {
        let c = try ControlClient(path: path)
        XCTAssertEqual(c.request("queue", timeout: 5), "    1. a  1:40\n    2. b  --:--\nok queue page 1/1, 2 tracks")
        XCTAssertEqual(c.request("queue 2", timeout: 5), "error: there is 1 page")
        let json = try XCTUnwrap(c.request("status --json", timeout: 5))
        XCTAssertTrue(json.hasPrefix("ok {\"phase\":\"stopped\",\"title\":null"), json)
        XCTAssertTrue(json.contains("\"count\":2,\"volume\":100,\"shuffle\":false,\"repeat\":\"off\""), json)
        let diag = try XCTUnwrap(c.request("diag", timeout: 5))
        XCTAssertTrue(diag.contains("  uptime "), diag)
        XCTAssertTrue(diag.contains("  state file none"), diag)
        XCTAssertTrue(diag.hasSuffix("\nok"), diag)
        XCTAssertEqual(c.request("save", timeout: 5), "error: no state file is configured")
        XCTAssertEqual(c.request("add /nonexistent", timeout: 5), "error: this player cannot load files")
    }

    /// A reply line longer than the 64 KiB limit (a title no tag reader cut) is still answered:
    /// a continuation line cut on a character, any other line as an error, and the connection
    /// stays for the next command.
    func testRepliesLongerThanTheLimitAreAnsweredNotHungUp() throws {
        stopLoop()
        let long = String(repeating: "é", count: 100_000)
        try startLoop(named: "long", tracks: [TrackInfo(path: "/m/a.flac", title: long, duration: 100), TrackInfo(path: "/m/b.flac")])
        let c = try ControlClient(path: path)
        XCTAssertEqual(c.request("play", timeout: 5), "error: the reply was longer than 64 KiB")
        XCTAssertEqual(c.request("status", timeout: 5), "error: the reply was longer than 64 KiB")
        XCTAssertEqual(c.request("status --json", timeout: 5), "error: the reply was longer than 64 KiB")
        let queue = try XCTUnwrap(c.request("queue", timeout: 5))
        let lines = queue.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, String(queue.prefix(200)))
        XCTAssertTrue(lines[0].hasPrefix("  ") && lines[0].contains("1. éé") && lines[0].hasSuffix("é…"), String(lines[0].prefix(20)))
        XCTAssertLessThanOrEqual(lines[0].utf8.count, 64 << 10)
        XCTAssertEqual(lines.last, "ok queue page 1/1, 2 tracks")
        XCTAssertFalse(c.isClosed)
        XCTAssertEqual(c.request("next", timeout: 5)?.hasPrefix("ok ▶ b"), true)
    }

    func testEventsStreamUntilTheNextLine() throws {
        let watcher = try ControlClient(path: path)
        XCTAssertEqual(watcher.request("events", timeout: 5), "ok streaming events; send any line to stop")
        let c = try ControlClient(path: path)
        _ = c.request("play", timeout: 5)
        let event = try XCTUnwrap(watcher.readLine(timeout: 5))
        XCTAssertTrue(event.hasPrefix("event ") && event.hasSuffix("play → playing"), event)
        XCTAssertEqual(watcher.request("", timeout: 5)?.components(separatedBy: "\n").last, "ok events ended")
    }

    func testEventsAsJSONCarryTheCardIdAsAFieldWhileTextClientsGetTheSameEventAsText() throws {
        let program = try ControlClient(path: path), person = try ControlClient(path: path)
        XCTAssertEqual(program.request("events --json", timeout: 5), "ok streaming events; send any line to stop")
        XCTAssertEqual(person.request("events", timeout: 5), "ok streaming events; send any line to stop")
        box.runtime.mailbox.post(.cardRead(id: "0A0B", at: 1))
        let json = try XCTUnwrap(program.readLine(timeout: 5))
        XCTAssertTrue(json.hasPrefix("event {"), json)
        let fields = try JSONDecoder().decode([String: String].self, from: Data(json.dropFirst(6).utf8))
        XCTAssertEqual(fields["card"], "0A0B")
        XCTAssertEqual(fields["what"], "card 0A0B")
        XCTAssertEqual(fields["phase"], "stopped")
        XCTAssertEqual(fields["time"]?.count, "04:47:43.250".count, json)
        let text = try XCTUnwrap(person.readLine(timeout: 5))
        XCTAssertTrue(text.hasPrefix("event ") && text.hasSuffix(" card 0A0B → stopped"), text)
        XCTAssertEqual(program.request("", timeout: 5)?.components(separatedBy: "\n").last, "ok events ended")
    }

    func testYieldIsGrantedOnceReleasedAndEndsWhenTheClientDisconnects() throws {
        let player = try ControlClient(path: path)
        _ = player.request("play", timeout: 5)
        var yielder: ControlClient? = try ControlClient(path: path)
        XCTAssertEqual(yielder?.request("yield begin chime", timeout: 5), "ok released")
        XCTAssertEqual(player.request("status", timeout: 5)?.contains("interrupted: chime"), true)
        yielder = nil  // the helper process died without saying "yield end"
        XCTAssertTrue(waitFor(5) { player.request("status", timeout: 5)?.hasPrefix("ok ▶") == true },
                      "the interruption did not end with the connection")
    }

    func testOverLongLinesGarbageAndManyClientsDoNotHurt() throws {
        let c = try ControlClient(path: path)
        XCTAssertEqual(c.request(String(repeating: "x", count: 5000), timeout: 5), "error: line longer than 1024 bytes")
        XCTAssertEqual(c.request("\u{0}\u{7f}\u{1b}[A", timeout: 5)?.hasPrefix("error: unknown command"), true)
        var many: [ControlClient] = []
        for _ in 0..<40 { if let extra = try? ControlClient(path: path) { many.append(extra) } }
        // Beyond the limit clients are refused, but the first one still works.
        XCTAssertEqual(c.request("status", timeout: 5)?.hasPrefix("ok "), true)
        let refused = many.filter { $0.request("status", timeout: 2)?.hasPrefix("ok") != true }.count
        XCTAssertGreaterThan(refused, 0)
        XCTAssertLessThanOrEqual(many.count - refused, 32)
    }

    func testAClientThatNeverReadsIsCutOffAndOthersCarryOn() throws {
        let lazy = try ControlClient(path: path)
        // Subscribed first (the reply says so), then it never reads again.
        XCTAssertEqual(lazy.request("events", timeout: 5), "ok streaming events; send any line to stop")
        // Thousands of events the lazy client never reads: its queue hits the bound and it is dropped.
        for i in 0..<30000 { box.runtime.mailbox.post(.mediaKey(code: 30 + i % 2, value: 1, at: 0)) }
        // A new client for each question: while the loop works through the events a request may
        // time out, and its late reply would be read as the answer to the next one (seen under
        // qemu-aarch64). The limit is generous because it costs nothing when the drop is quick.
        XCTAssertTrue(waitFor(30) { (try? ControlClient(path: path))?.request("diag", timeout: 5)?.contains("control clients 1") == true },
                      "the lazy client was not dropped")
        XCTAssertEqual(try ControlClient(path: path).request("status", timeout: 5)?.hasPrefix("ok "), true)
    }

    func testRandomGarbageGetsErrorsNeverACrash() throws {
        var rng = SeededGenerator(seed: 1234)
        for _ in 0..<20 {
            let c = try ControlClient(path: path)
            let junk = (0..<Int(rng.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            _ = c.send(String(decoding: junk, as: UTF8.self))
        }
        let c = try ControlClient(path: path)
        XCTAssertEqual(c.request("status", timeout: 5)?.hasPrefix("ok "), true)
    }

    func testASecondPlayerDoesNotStealALiveSocket() {
        XCTAssertThrowsError(try ControlSocket(path: path)) { XCTAssertTrue("\($0)".contains("another jukebox"), "\($0)") }
    }
}

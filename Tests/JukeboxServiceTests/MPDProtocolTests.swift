// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import XCTest

/// A backend that answers `status` with one line, fails `fail`, and holds `slow` until released.
private final class FakeBackend: MPDBackend {
    var ran: [MPDRequest] = []
    var held: [(Result<[String], MPDError>) -> Void] = []

    func run(_ request: MPDRequest, reply: @escaping (Result<[String], MPDError>) -> Void) {
        ran.append(request)
        switch request.name {
        case "status": reply(.success(["state: play"]))
        case "fail": reply(.failure(MPDError(.noExist, "No such song")))
        case "slow": held.append(reply)
        default: reply(.success([]))
        }
    }

    /// `art OFFSET`: a 20000-byte "image" whose bytes include newlines and "OK", in chunks.
    static let image = (0..<20000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    func run(_ request: MPDRequest, binaryLimit: Int, reply: @escaping (Result<MPDReply, MPDError>) -> Void) -> Bool {
        guard request.name == "art" else { return false }
        ran.append(request)
        let offset = Int(request.args[0])!
        let chunk = Array(Self.image[offset..<min(Self.image.count, offset + binaryLimit)])
        reply(.success(MPDReply(lines: ["size: \(Self.image.count)"], binary: chunk)))
        return true
    }
}

final class MPDProtocolTests: XCTestCase {
    private let known = ["status", "fail", "slow", "play", "art"]
    /// The sessions hold their backend weakly (as they hold the loop): the test keeps them.
    private var backends: [FakeBackend] = []

    private func session(password: String? = nil) -> (MPDSession, FakeBackend) {
        let backend = FakeBackend()
        backends.append(backend)
        let s = MPDSession(backend: backend, known: known, password: password)
        XCTAssertEqual(take(s), "OK MPD 0.21.0\n")
        return (s, backend)
    }

    private func take(_ s: MPDSession) -> String {
        defer { s.output.removeAll() }
        return String(decoding: s.output, as: UTF8.self)
    }

    private func send(_ s: MPDSession, _ lines: String...) -> String {
        for line in lines { s.receive(Array(line.utf8)) }
        return take(s)
    }

    // MARK: the line parser

    func testArgumentsAreBareOrQuotedWithEscapes() {
        XCTAssertEqual(MPDRequest.parse(Array("add \"a b/\\\"c\\\\d.flac\"".utf8)), .success(MPDRequest("add", ["a b/\"c\\d.flac"])))
        XCTAssertEqual(MPDRequest.parse(Array("  seek\t1   +5 ".utf8)), .success(MPDRequest("seek", ["1", "+5"])))
        XCTAssertEqual(MPDRequest.parse(Array("play \"\"".utf8)), .success(MPDRequest("play", [""])))
        XCTAssertEqual(MPDRequest.quoted("a\"b\\c"), "\"a\\\"b\\\\c\"")
    }

    func testMalformedLinesAreRefusedWithTheirReason() {
        func error(_ text: String) -> MPDError? {
            if case .failure(let e) = MPDRequest.parse(Array(text.utf8)) { return e }
            return nil
        }
        XCTAssertEqual(error("add \"open"), MPDError(.arg, "Missing closing '\"'"))
        XCTAssertEqual(error("add \"a\"b"), MPDError(.arg, "Space expected after closing '\"'"))
        XCTAssertEqual(error("add a\"b"), MPDError(.arg, "Invalid unquoted character"))
        XCTAssertEqual(error("   "), MPDError(.unknown, "No command given"))
        XCTAssertEqual(error("PLAY"), MPDError(.unknown, "unknown command \"PLAY\""))
        if case .failure(let e) = MPDRequest.parse([0x70, 0xFF, 0xFE, 0x00]) { XCTAssertEqual(e.code, .arg) } else { XCTFail("not refused") }
    }

    // MARK: binary replies

    func testABinaryReplyIsItsLinesTheCountTheRawBytesAndANewlineInChunksOfTheLimit() {
        let (s, _) = session()
        let image = FakeBackend.image
        var expected = Array("size: 20000\nbinary: 8192\n".utf8) + image[0..<8192] + Array("\nOK\n".utf8)
        s.receive(Array("art 0".utf8))
        XCTAssertEqual(s.output, expected, "the default chunk is MPD's 8192 bytes")
        s.output.removeAll()
        XCTAssertEqual(send(s, "binarylimit 63"), "ACK [2@0] {binarylimit} Value too small\n")
        XCTAssertEqual(send(s, "binarylimit 5000"), "OK\n")
        // The whole image, chunk by chunk, as a client reads it.
        var got: [UInt8] = []
        while got.count < image.count {
            s.receive(Array("art \(got.count)".utf8))
            let head = Array("size: 20000\nbinary: \(min(5000, image.count - got.count))\n".utf8)
            XCTAssertEqual(Array(s.output.prefix(head.count)), head)
            let body = s.output.dropFirst(head.count)
            XCTAssertEqual(Array(body.suffix(4)), Array("\nOK\n".utf8))
            got += body.dropLast(4)
            s.output.removeAll()
        }
        XCTAssertEqual(got, image)
        // In a command list the bytes are followed by list_OK like any reply.
        expected = Array("size: 20000\nbinary: 0\n\nlist_OK\nOK\n".utf8)
        for line in ["command_list_ok_begin", "art 20000", "command_list_end"] { s.receive(Array(line.utf8)) }
        XCTAssertEqual(s.output, expected)
    }

    func testAnAckNeverSpansTwoLines() {
        let ack = MPDError(.unknown, "unknown command \"a\nOK\"").ack(index: 3, command: "x\ny")
        XCTAssertEqual(ack, "ACK [5@3] {x\u{FFFD}y} unknown command \"a\u{FFFD}OK\"")
    }

    // MARK: the session

    func testOneCommandGetsItsLinesAndOK() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "status"), "state: play\nOK\n")
        XCTAssertEqual(send(s, "ping"), "OK\n")
        XCTAssertEqual(b.ran, [MPDRequest("status")])
    }

    func testUnknownCommandsAndGarbageGetAcksAndTheSessionGoesOn() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "frobnicate 1 2"), "ACK [5@0] {} unknown command \"frobnicate\"\n")
        s.receive([0xFF, 0x00, 0x80, 0x0D])
        XCTAssertTrue(take(s).hasPrefix("ACK [2@0] {} "))
        XCTAssertEqual(send(s, "status"), "state: play\nOK\n")
        XCTAssertEqual(b.ran, [MPDRequest("status")], "garbage reached the backend")
        XCTAssertFalse(s.closing)
    }

    func testAnOverlongLineIsRefusedAndClosesTheConnection() {
        let (s, b) = session()
        s.receive(nil)
        XCTAssertEqual(take(s), "ACK [2@0] {} line too long\n")
        XCTAssertTrue(s.closing)
        XCTAssertEqual(send(s, "status"), "", "a closing session answered")
        XCTAssertTrue(b.ran.isEmpty)
    }

    func testACommandListRunsInOrderAndStopsAtTheFirstFailure() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "command_list_ok_begin", "status", "play", "command_list_end"), "state: play\nlist_OK\nlist_OK\nOK\n")
        XCTAssertEqual(send(s, "command_list_begin", "status", "fail", "play", "command_list_end"),
                       "state: play\nACK [50@1] {fail} No such song\n")
        XCTAssertEqual(b.ran.map(\.name), ["status", "play", "status", "fail"], "the command after the failure ran")
        XCTAssertEqual(send(s, "command_list_begin", "status", "nope", "command_list_end"),
                       "state: play\nACK [5@1] {} unknown command \"nope\"\n")
    }

    func testUnbalancedCommandListsAreRefusedOrWaitForTheirEnd() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "command_list_end"), "ACK [5@0] {} unknown command \"command_list_end\"\n")
        XCTAssertEqual(send(s, "command_list_begin", "status", "command_list_begin"), "", "a list ran before its end")
        XCTAssertEqual(send(s, "command_list_end"), "state: play\nACK [1@1] {command_list_begin} \"command_list_begin\" is not allowed here\n")
        XCTAssertEqual(send(s, "command_list_begin", "idle", "command_list_end"), "ACK [1@0] {idle} \"idle\" is not allowed here\n")
        XCTAssertEqual(b.ran.map(\.name), ["status"])
    }

    func testAnEndlessCommandListClosesTheConnection() {
        let (s, b) = session()
        s.receive(Array("command_list_begin".utf8))
        let line = Array(("play " + String(repeating: "x", count: 4000)).utf8)
        for _ in 0..<(MPDSession.maxListBytes / line.count + 2) { s.receive(line) }
        XCTAssertTrue(s.closing)
        XCTAssertTrue(b.ran.isEmpty, "a list over the bound ran")
    }

    func testAReplyThatWaitsHoldsTheLinesAfterIt() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "slow", "status", "ping"), "")
        XCTAssertEqual(b.ran.map(\.name), ["slow"])
        b.held.removeFirst()(.success(["done: 1"]))
        XCTAssertEqual(take(s), "done: 1\nOK\nstate: play\nOK\nOK\n")
        XCTAssertEqual(send(s, "command_list_ok_begin", "status", "slow", "status", "command_list_end"), "state: play\nlist_OK\n")
        b.held.removeFirst()(.failure(MPDError(.noExist, "gone")))
        XCTAssertEqual(take(s), "ACK [50@1] {slow} gone\n")
    }

    func testIdleReportsWhatChangedSinceTheLastIdleAndNoidleEndsIt() {
        let (s, _) = session()
        s.notify([.mixer])
        XCTAssertEqual(send(s, "idle"), "changed: mixer\nOK\n", "a change before idle was lost")
        XCTAssertEqual(send(s, "idle player playlist"), "")
        XCTAssertTrue(s.isIdle)
        s.notify([.mixer])
        XCTAssertEqual(take(s), "", "idle player answered a mixer change")
        s.notify([.playlist, .player])
        XCTAssertEqual(take(s), "changed: playlist\nchanged: player\nOK\n")
        XCTAssertEqual(send(s, "idle"), "changed: mixer\nOK\n")
        XCTAssertEqual(send(s, "idle options"), "")
        XCTAssertEqual(send(s, "noidle"), "OK\n")
        // python-mpd2's race: noidle after idle already returned is ignored, not answered.
        XCTAssertEqual(send(s, "noidle", "ping"), "OK\n")
        XCTAssertEqual(send(s, "idle bogus"), "ACK [2@0] {idle} Unrecognized idle event: bogus\n")
        XCTAssertFalse(s.isIdle)
    }

    /// A client that sends ahead (`idle`, then its `noidle` and the next command, while a reply
    /// is awaited) gets every reply in order: the lines after a held `idle` were left held.
    func testIdleAndNoidleSentAheadOfAnAwaitedReplyAreAnsweredInOrder() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "slow", "idle", "noidle", "status"), "")
        b.held.removeFirst()(.success(["done: 1"]))
        XCTAssertEqual(take(s), "done: 1\nOK\nOK\nstate: play\nOK\n")
        XCTAssertFalse(s.isIdle)
        // The same with a change pending: idle reports it at once and the noidle after it is ignored.
        XCTAssertEqual(send(s, "slow", "idle", "noidle", "ping"), "")
        s.notify([.player])
        b.held.removeFirst()(.success([]))
        XCTAssertEqual(take(s), "OK\nchanged: player\nOK\nOK\n")
        // Anything but noidle after a held idle closes the connection, as it does unheld.
        XCTAssertEqual(send(s, "slow", "idle", "status"), "")
        b.held.removeFirst()(.success([]))
        XCTAssertEqual(take(s), "OK\n")
        XCTAssertTrue(s.closing)
    }

    func testAnythingButNoidleDuringIdleClosesTheConnection() {
        let (s, b) = session()
        XCTAssertEqual(send(s, "idle", "status"), "")
        XCTAssertTrue(s.closing)
        XCTAssertTrue(b.ran.isEmpty)
    }

    func testThePasswordGatesEverythingButAFewCommands() {
        let (s, b) = session(password: "sesame")
        XCTAssertEqual(send(s, "status"), "ACK [4@0] {status} you don't have permission for \"status\"\n")
        XCTAssertEqual(send(s, "idle"), "ACK [4@0] {idle} you don't have permission for \"idle\"\n")
        XCTAssertEqual(send(s, "ping"), "OK\n")
        XCTAssertEqual(send(s, "commands"), "command: close\ncommand: commands\ncommand: notcommands\ncommand: password\ncommand: ping\nOK\n")
        XCTAssertTrue(send(s, "notcommands").contains("command: binarylimit\n"), "binarylimit waits for the password, as in MPD")
        XCTAssertTrue(send(s, "notcommands").contains("command: status\n"))
        XCTAssertEqual(send(s, "password wrong"), "ACK [3@0] {password} incorrect password\n")
        XCTAssertTrue(b.ran.isEmpty)
        XCTAssertEqual(send(s, "password sesame", "status"), "OK\nstate: play\nOK\n")
        XCTAssertEqual(send(s, "notcommands"), "OK\n")
    }

    func testCloseEndsTheSession() {
        let (s, _) = session()
        XCTAssertEqual(send(s, "close", "status"), "")
        XCTAssertTrue(s.closing)
    }

    // MARK: replies

    func testStatusMapsThePhaseModesAndTimes() {
        var state = State()
        state.queue = [Track(id: 7, info: TrackInfo(path: "/m/a.flac", duration: 30)), Track(id: 9, info: TrackInfo(path: "/m/b.flac"))]
        state.order = [7, 9]
        state.cursor = 0
        state.phase = .playing
        state.position = 2.5
        state.volume = 40
        state.repeatMode = .one
        XCTAssertEqual(MPDReplies.status(state), [
            "volume: 40", "repeat: 1", "random: 0", "single: 1", "consume: 0", "playlist: 1", "playlistlength: 2", "state: play",
            "song: 0", "songid: 7", "time: 3:30", "elapsed: 2.500", "duration: 30.000", "nextsong: 1", "nextsongid: 9"])
        state.phase = .stopped
        XCTAssertFalse(MPDReplies.status(state).contains { $0.hasPrefix("elapsed") })
        XCTAssertEqual(MPDReplies.playState(.interrupted(reason: "call")), "pause")
        XCTAssertEqual(MPDReplies.playState(.waitingForDevice(reason: "busy")), "play")
    }

    func testSongsCarryTheirQueueEntryIdsAndNamesUnderTheMusicFolder() {
        let t = Track(id: 42, info: TrackInfo(path: "/srv/music/x/a.flac", title: "A", artist: "B", trackNumber: 3, duration: 61.25))
        XCTAssertEqual(MPDReplies.song(t, pos: 5, roots: ["/srv/music"]),
                       ["file: x/a.flac", "Title: A", "Artist: B", "Track: 3", "Time: 61", "duration: 61.250", "Pos: 5", "Id: 42"])
        XCTAssertEqual(MPDReplies.uri("/elsewhere/a.flac", roots: ["/srv/music"]), "/elsewhere/a.flac")
    }

    func testAddNamesAreRootedStreamsKeptAndOtherURLsRefused() {
        let roots = ["/srv/a", "/srv/b"]
        let exists: (String) -> Bool = { $0 == "/srv/b/x" }
        XCTAssertEqual(MPDReplies.path(for: "x", roots: roots, allowURLs: true, exists: exists), .success("/srv/b/x"))
        XCTAssertEqual(MPDReplies.path(for: "/abs/y.flac", roots: roots, allowURLs: true, exists: exists), .success("/abs/y.flac"))
        XCTAssertEqual(MPDReplies.path(for: "file:///abs/y.flac", roots: roots, allowURLs: true, exists: exists), .success("/abs/y.flac"))
        XCTAssertEqual(MPDReplies.path(for: "../etc", roots: roots, allowURLs: true, exists: { _ in true }), .failure(MPDError(.arg, "Malformed URI")))
        XCTAssertEqual(MPDReplies.path(for: "http://radio.example/stream", roots: roots, allowURLs: true, exists: exists),
                       .success("http://radio.example/stream"))
        XCTAssertEqual(MPDReplies.path(for: "https://radio.example/s.mp3?x=1", roots: roots, allowURLs: true, exists: exists),
                       .success("https://radio.example/s.mp3?x=1"))
        XCTAssertEqual(MPDReplies.path(for: "ftp://radio.example/stream", roots: roots, allowURLs: true, exists: exists),
                       .failure(MPDError(.noExist, "jukebox plays http and https streams only (not ftp URLs)")))
        // Off (the default): a client on the network cannot make the box connect anywhere.
        XCTAssertEqual(MPDReplies.path(for: "http://127.0.0.1:22/", roots: roots, allowURLs: false, exists: exists),
                       .failure(MPDError(.permission, MPDReplies.urlsRefused)))
    }

    func testRanges() {
        XCTAssertEqual(MPDReplies.range("2", count: 5), 2..<3)
        XCTAssertEqual(MPDReplies.range("1:3", count: 5), 1..<3)
        XCTAssertEqual(MPDReplies.range("3:", count: 5), 3..<5)
        XCTAssertNil(MPDReplies.range("3:1", count: 5))
        XCTAssertNil(MPDReplies.range("-1", count: 5))
        XCTAssertNil(MPDReplies.range("x", count: 5))
    }

    func testQueueTargetsAreAbsoluteOrRelativeToTheCurrentSongAndBounded() {
        // An insert may land at the end (count); a move of two in five at most at 3.
        XCTAssertEqual(MPDQueueArgs.target("5", current: nil, count: 5, room: 0), .success(5))
        XCTAssertEqual(MPDQueueArgs.target("6", current: nil, count: 5, room: 0), .failure(MPDError(.arg, "Bad song index")))
        XCTAssertEqual(MPDQueueArgs.target("3", current: nil, count: 5, room: 2), .success(3))
        XCTAssertEqual(MPDQueueArgs.target("4", current: nil, count: 5, room: 2), .failure(MPDError(.arg, "Bad song index")))
        XCTAssertEqual(MPDQueueArgs.target("-1", current: nil, count: 5, room: 0), .failure(MPDError(.playerSync, "No current song")))
        // +0 right after the current song (2), -0 right before it.
        XCTAssertEqual(MPDQueueArgs.target("+0", current: 2, count: 5, room: 0), .success(3))
        XCTAssertEqual(MPDQueueArgs.target("-0", current: 2, count: 5, room: 0), .success(2))
        XCTAssertEqual(MPDQueueArgs.target("+2", current: 2, count: 5, room: 0), .success(5))
        XCTAssertEqual(MPDQueueArgs.target("+3", current: 2, count: 5, room: 0), .failure(MPDError(.arg, "Bad song index")))
        XCTAssertEqual(MPDQueueArgs.target("-3", current: 2, count: 5, room: 0), .failure(MPDError(.arg, "Bad song index")))
        for bad in ["", "+", "x", "1x", "+-1", " 1", "1.0"] {
            guard case .failure = MPDQueueArgs.target(bad, current: 2, count: 5, room: 0) else { return XCTFail("\(bad.debugDescription) accepted") }
        }
    }

    func testPlaylistNamesCannotLeaveTheFolderHideOrCarryControls() {
        for good in ["mine", "Road trip 2024", "Käthe's mix", "a.b", "x..y", String(repeating: "n", count: 200)] {
            XCTAssertNil(MPDPlaylistStore.check(good), good)
        }
        for bad in ["", "/", "a/b", "..", "../x", ".hidden", ".", "a\nb", "a\rb", "tab\there", "del\u{7F}", "c1\u{85}x",
                    String(repeating: "n", count: 240)] {
            XCTAssertEqual(MPDPlaylistStore.check(bad), MPDError(.arg, "Bad playlist name"), bad.debugDescription)
        }
    }

    func testM3UEntriesSkipCommentsBlankLinesAndCarriageReturns() {
        XCTAssertEqual(MPDPlaylistStore.parse("#EXTM3U\r\n#EXTINF:1,x\r\na/b.flac\r\n\r\n/abs/c.flac  \n\nd.flac"),
                       ["a/b.flac", "/abs/c.flac", "d.flac"])
        XCTAssertEqual(MPDPlaylistStore.parse(""), [])
    }

    func testStatsCountArtistsAlbumsSongsAndTheirTime() {
        let songs: [(artist: String?, album: String?, duration: Double?)] = [("X", "P", 30.4), ("X", "Q", 60.3), (nil, nil, nil)]
        XCTAssertEqual(MPDReplies.stats(songs, uptime: 12.9, playtime: 5.2),
                       ["artists: 1", "albums: 2", "songs: 3", "uptime: 12", "playtime: 5", "db_playtime: 91"])
    }
}

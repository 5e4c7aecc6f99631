// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
@testable import JukeboxService
import JukeboxTestSupport
import XCTest

/// Every file of `Tests/FuzzCorpus/{command,config,state}` (seeds and the crashers the fuzzer
/// found, see board/fuzz.sh) through the parsers' real entry points, with the properties the
/// fuzz harnesses check: no crash, round trips, messages that name the problem, bounded output.
final class FuzzRegressionTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzCorpus").path

    func files(_ harness: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = Self.corpus + "/" + harness
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }.sorted()
        XCTAssertFalse(names.isEmpty, "no corpus in \(folder)")
        return names.map { ($0, Array(FileManager.default.contents(atPath: folder + "/" + $0) ?? Data())) }
    }

    // MARK: Control language

    func testCommandCorpus() throws {
        for (name, bytes) in try files("command") {
            var state = Self.player()
            // As the control socket frames lines.
            for raw in bytes.split(separator: 0x0A) {
                let line = String(decoding: raw.last == 0x0D ? raw.dropLast() : raw, as: UTF8.self)
                checkLine(line, &state, name)
            }
            // As the serial console's line editor takes the same bytes.
            var editor = LineEditor()
            var effects: [LineEditor.Effect] = []
            for byte in bytes { editor.feed(byte, into: &effects) }
            XCTAssertLessThanOrEqual(editor.line.count, ControlCommand.maxLineLength, name)
            for case .submit(let line) in effects {
                XCTAssertLessThanOrEqual(line.utf8.count, ControlCommand.maxLineLength, name)
                XCTAssertFalse(line.allSatisfy { $0 == " " }, name)
                XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                               "\(name): control character in \(line.debugDescription)")
                checkLine(line, &state, name)
            }
        }
    }

    /// Found by the fuzzer: `abs(Int.min)` trapped on `vol -9223372036854775808`.
    func testVolumeOfIntMinIsRefusedNotATrap() {
        for line in ["vol -9223372036854775808", "volume -9223372036854775808", "vol 9223372036854775807", "vol -101"] {
            XCTAssertEqual(ControlCommand.parse(line, seed: 0), .failure(ControlError("usage: vol [+|-]N (0-100)")), line)
        }
        XCTAssertEqual(ControlCommand.parse("vol -100", seed: 0), .success(.intent(.changeVolume(by: -100))))
    }

    func checkLine(_ line: String, _ state: inout State, _ name: String, file: StaticString = #filePath, line number: UInt = #line) {
        switch ControlCommand.parse(line, seed: 7) {
        case .failure(let error):
            XCTAssertFalse(error.message.isEmpty, "\(name): empty error for \(line.debugDescription)", file: file, line: number)
            XCTAssertLessThanOrEqual(error.message.utf8.count, 200, name, file: file, line: number)
        case .success(let command):
            if let text = Self.render(command) {
                XCTAssertEqual(ControlCommand.parse(text, seed: 7), .success(command),
                               "\(name): \(line.debugDescription) renders as \(text.debugDescription)", file: file, line: number)
            }
            if case .intent(let event) = command {
                _ = reduce(&state, event)
                Self.checkCore(state, name, file: file, line: number)
            }
        }
    }

    /// The canonical text of a command (as the fuzz harness renders it); nil for a time the
    /// `m:ss` syntax cannot write.
    static func render(_ command: ControlCommand) -> String? {
        func plain(_ s: Double) -> String? { "\(s)".allSatisfy { $0.isNumber || $0 == "." } ? "\(s)" : nil }
        switch command {
        case .intent(.seek(let to)): return plain(to).map { "seek " + $0 }
        case .intent(.seekBy(let by)): return plain(abs(by)).map { "seek " + (by.sign == .minus ? "-" : "+") + $0 }
        case .intent(.setVolume(let n)): return "vol \(n)"
        case .intent(.changeVolume(let n)): return n < 0 ? "vol \(n)" : "vol +\(n)"
        case .intent(.setShuffle(let on, _)): return on ? "shuffle on" : "shuffle off"
        case .intent(.setRepeat(let mode)): return "repeat " + mode.rawValue
        case .intent(.togglePlayPause): return "toggle"
        case .intent(.previous): return "prev"
        case .intent(.playEntry(let at)): return "play \(at + 1)"
        case .intent(.remove(let at)): return "delete \(at + 1)"
        case .intent(.move(let from, let to)): return "move \(from + 1) \(to + 1)"
        case .intent(.sleepTimer(let request)):
            guard let request else { return "sleep off" }
            guard case .after(let seconds) = request else { return request.words }
            return (seconds / 60) * 60 == seconds ? "sleep \(seconds / 60)" : nil
        case .intent(let event): return "\(event)"  // play, pause, stop, next, clear
        case .statusJSON: return "status --json"
        case .interruptBegin(let reason): return "interrupt begin " + reason
        case .interruptEnd: return "interrupt end"
        case .yieldBegin(let reason): return "yield begin " + reason
        case .yieldEnd: return "yield end"
        case .sourceBegin(let name, let sender): return "source begin \(name) " + sender
        case .sourceEnd(let name): return "source end " + name
        case .queue(let page): return "queue \(page)"
        case .queueJSON(let from): return "queue --json \(from)"
        case .lsJSON(let path, let from): return "ls --json --from \(from)" + (path.map { " " + $0 } ?? "")
        case .searchJSON(let text): return "search --json " + text
        case .add(let path): return "add " + path
        case .load(let path): return "load " + path
        case .log(let count): return "log \(count)"
        case .events(let json): return json ? "events --json" : "events"
        case .status, .help, .save, .diag, .version, .reload, .restart: return "\(command)"
        case .systemJSON: return "system --json"
        case .cardAssign(let id, let value): return "card assign " + (id.map { $0 + " " } ?? "") + value
        case .cardAssignNext(let value): return value.map { "card assign --next " + $0 } ?? "card assign --cancel"
        case .cardDelete(let id): return "card delete " + id
        case .cardsJSON: return "cards --json"
        case .libraryUpdate(let path): return "update" + (path.map { " " + $0 } ?? "")
        case .bookmarksJSON: return "bookmarks --json"
        case .podcastsJSON: return "podcasts --json"
        case .bookmarkReset(let path): return "bookmark reset " + (path ?? "--all")
        case .bluetooth(let action, let address, let pin): return "bluetooth \(action.rawValue) " + address + (pin.map { " pin " + $0 } ?? "")
        }
    }

    static func player() -> State {
        var state = State()
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 90), TrackInfo(path: "/m/b.ogg")]))
        return state
    }

    static func checkCore(_ state: State, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue((0...100).contains(state.volume), "\(name): volume \(state.volume)", file: file, line: line)
        XCTAssertTrue(state.position.isFinite && state.position >= 0, "\(name): position \(state.position)", file: file, line: line)
        if let cursor = state.cursor { XCTAssertTrue(state.order.indices.contains(cursor), name, file: file, line: line) }
        _ = StatusView(state).line
    }

    // MARK: The runtime's answers

    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    /// Each `runtime` corpus file on its own control connection to a running loop: the loop
    /// survives, answers in its reply syntax and closes the connection when the input ends.
    func testRuntimeCorpus() throws {
        let dir = TempDir()
        let audio = RecordingAudio(), mailbox = Mailbox()
        audio.mailbox = mailbox
        let control = try ControlSocket(path: dir.file("control"))
        let runtime = Runtime(state: Self.player(), audio: audio, store: StateStore(path: dir.file("state.json")),
                              status: RecordingStatus(), log: Log(level: .error), mailbox: mailbox, control: control)
        runtime.loadTracks = { paths in (paths.map { TrackInfo(path: $0) }, []) }
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        defer {
            mailbox.post(.quit)
            XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "loop did not end")
        }
        for (name, bytes) in try files("runtime") {
            let fd = try ControlSocket.connect(path: dir.file("control"))
            defer { close(fd) }
            XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }, bytes.count, name)
            shutdown(fd, Int32(SHUT_WR))
            var reply: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, 10_000)
                if ready < 0 && errno == EINTR { continue }
                guard ready == 1 else { return XCTFail("\(name): no end of the replies within 10 s") }
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                reply += buffer[0..<n]
            }
            let lines = String(decoding: reply, as: UTF8.self).split(separator: "\n")
            XCTAssertFalse(lines.isEmpty, name)
            for line in lines {
                XCTAssertTrue(line == "ok" || line.hasPrefix("ok ") || line.hasPrefix("error: ") || line.hasPrefix("  ")
                              || line.hasPrefix("event "), "\(name): \(line.debugDescription)")
            }
        }
    }

    // MARK: Configuration

    func testConfigCorpus() throws {
        for (name, bytes) in try files("config") {
            do {
                let (config, warnings) = try Config.parse(bytes, source: "c.json")
                for w in warnings { XCTAssertTrue(w.hasPrefix("c.json: unknown key"), "\(name): \(w)") }
                XCTAssertLessThanOrEqual(config.settings.volumeMin, config.settings.volumeMax, name)
                XCTAssertNoThrow(try config.hardware.validate(source: "c.json"), name)
                var state = State(settings: config.settings)
                _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 60)]))
                _ = reduce(&state, .changeVolume(by: config.settings.volumeStep))
                Self.checkCore(state, name)
                // The same bytes give the same configuration.
                XCTAssertEqual(try Config.parse(bytes, source: "c.json").config, config, name)
            } catch {
                XCTAssertTrue(error.description.hasPrefix("c.json: ") && error.description.count > 16, "\(name): \(error)")
            }
        }
    }

    /// Found by the fuzzer on Debian 13's Swift 6.0.3: its JSONDecoder traps (a `try!`) on an
    /// object key with a raw control character, bytes that are not UTF-8, a bad escape or a lone
    /// surrogate; such text is now refused before decoding, in the config, profiles and state.
    func testJSONTheSwift60DecoderTrapsOnIsRefusedBeforeDecoding() throws {
        let bad: [[UInt8]] = [
            Array(#"{"pl"#.utf8) + [0x00] + Array(#"ay": 1}"#.utf8),
            Array(#"{"track"#.utf8) + [0xE9] + Array(#"s": []}"#.utf8),
            Array(#"{"\ud800": 1}"#.utf8),
            Array(#"{"x\q": 1}"#.utf8),
            Array(#"{"a": "\udc00"}"#.utf8),
            Array(#"{"a": "\ud800x"}"#.utf8),
        ]
        for bytes in bad {
            let text = String(decoding: bytes, as: UTF8.self).debugDescription
            XCTAssertNotNil(JSONText.problem(bytes), text)
            XCTAssertThrowsError(try Config.parse(bytes, source: "c.json"), text) {
                XCTAssertTrue("\($0)".hasPrefix("c.json: not valid JSON ("), "\($0)")
            }
            let dir = TempDir()
            let path = dir.file("state.json")
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            let loaded = StateStore(path: path).load()
            XCTAssertNil(loaded.snapshot, text)
            XCTAssertTrue(loaded.messages.first?.contains("is damaged (not valid JSON: ") == true, "\(loaded.messages)")
        }
        let good: [String] = [#"{"a": "\ud83d\ude00 \u00e9 \n \" \\ \/ é"}"#, #"[1, "x", {"k\u0000": null}]"#, ""]
        for text in good { XCTAssertNil(JSONText.problem(Array(text.utf8)), text) }
        for (name, bytes) in try files("config") where !name.hasPrefix("crash-swift6.0") {
            XCTAssertNil(JSONText.problem(bytes), name)
        }
    }

    // MARK: State file

    func testStateCorpus() throws {
        let dir = TempDir()
        for (name, bytes) in try files("state") {
            let path = dir.file("state.json")
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            try? FileManager.default.removeItem(atPath: path + ".damaged-1")  // a copy of wrong values from the file before
            let loaded = StateStore(path: path).load()
            guard let snapshot = loaded.snapshot else {
                XCTAssertEqual(loaded.messages.count, 1, name)
                XCTAssertTrue(loaded.messages.first?.contains("\(path) is damaged (") == true, "\(name): \(loaded.messages)")
                XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".damaged-1"), "\(name): not moved aside")
                try? FileManager.default.removeItem(atPath: path + ".damaged-1")
                continue
            }
            Self.checkSnapshot(snapshot, name)
            let saved = StateStore(path: dir.file("again.json"))
            try saved.save(snapshot)
            XCTAssertEqual(saved.load().snapshot, snapshot, "\(name): does not reload equal")
            var state = State()
            _ = reduce(&state, .restore(snapshot))
            Self.checkCore(state, name)
            XCTAssertEqual(state.order.count, state.queue.count, name)
        }
    }

    /// Found by the fuzzer: `"order": [0, 0]` with one track passed normalisation (one distinct
    /// index per track) and put the track twice into the play order.
    func testOrderWithDuplicatesIsDropped() throws {
        let json = #"{"version": 1, "tracks": [{"path": "/m/a", "title": "a"}], "order": [0, 0], "current": 0}"#
        let snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(json.utf8))
        XCTAssertNil(snapshot.order)
        XCTAssertEqual(snapshot.current, 0)
    }

    static func checkSnapshot(_ s: Snapshot, _ name: String) {
        if let order = s.order { XCTAssertEqual(order.sorted(), Array(s.tracks.indices), "\(name): order \(order)") }
        if let current = s.current { XCTAssertTrue(s.tracks.indices.contains(current), name) }
        XCTAssertTrue(s.position.isFinite && s.position >= 0, name)
        XCTAssertTrue(SavedPhase.allCases.contains(s.phase), name)
        XCTAssertTrue((0...100).contains(s.volume), name)
    }
}

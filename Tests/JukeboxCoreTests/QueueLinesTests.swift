// SPDX-License-Identifier: MIT
import XCTest
import JukeboxCore

/// `play N`, `delete N`, `move FROM TO` and `queue --json`: 1-based on the wire, 0-based intents.
final class QueueLinesTests: XCTestCase {
    func testTheQueueLinesParseToIntentsOrSayWhatIsWrong() {
        let table: [(String, Result<ControlCommand, ControlError>)] = [
            ("play", .success(.intent(.play))),
            ("play 1", .success(.intent(.playEntry(at: 0)))),
            ("play 12", .success(.intent(.playEntry(at: 11)))),
            ("delete 3", .success(.intent(.remove(at: 2)))),
            ("move 1 4", .success(.intent(.move(from: 0, to: 3)))),
            ("MOVE 4 1", .success(.intent(.move(from: 3, to: 0)))),
            ("queue --json", .success(.queueJSON)),
            ("queue 2", .success(.queue(page: 2))),
            ("play 0", .failure(ControlError("usage: play [N] (a queue position from 1)"))),
            ("play -1", .failure(ControlError("usage: play [N] (a queue position from 1)"))),
            ("play +2", .failure(ControlError("usage: play [N] (a queue position from 1)"))),
            ("play 1 2", .failure(ControlError("usage: play [N] (a queue position from 1)"))),
            ("play 99999999999999999999", .failure(ControlError("usage: play [N] (a queue position from 1)"))),
            ("delete", .failure(ControlError("usage: delete N (a queue position from 1)"))),
            ("delete x", .failure(ControlError("usage: delete N (a queue position from 1)"))),
            ("move 1", .failure(ControlError("usage: move FROM TO (queue positions from 1)"))),
            ("move 1 0", .failure(ControlError("usage: move FROM TO (queue positions from 1)"))),
            ("move 1 2 3", .failure(ControlError("usage: move FROM TO (queue positions from 1)"))),
            ("queue --json 2", .failure(ControlError("usage: queue [page]"))),
            ("ls --json", .success(.lsJSON(path: nil))),
            ("LS --json   ", .success(.lsJSON(path: nil))),
            ("ls --json /music/A B/", .success(.lsJSON(path: "/music/A B/"))),
            ("ls  --json \t /music/x  ", .success(.lsJSON(path: "/music/x"))),
            ("ls --json --json", .success(.lsJSON(path: "--json"))),
            ("ls", .failure(ControlError("usage: ls --json [FOLDER]"))),
            ("ls /music", .failure(ControlError("usage: ls --json [FOLDER]"))),
            ("ls --jsonx", .failure(ControlError("usage: ls --json [FOLDER]"))),
        ]
        for (line, expected) in table {
            XCTAssertEqual(ControlCommand.parse(line, seed: 0), expected, line)
        }
    }

    func testTheIntentsActOnTheEntryNamedFromOne() {
        var state = State(settings: Settings())
        _ = reduce(&state, .add(["/m/a.flac", "/m/b.flac", "/m/c.flac"].map { TrackInfo(path: $0, duration: 10) }))
        func run(_ line: String) {
            guard case .success(.intent(let event)) = ControlCommand.parse(line, seed: 0) else { return XCTFail(line) }
            _ = reduce(&state, event)
        }
        run("move 3 1")
        XCTAssertEqual(state.queue.map(\.info.path), ["/m/c.flac", "/m/a.flac", "/m/b.flac"])
        run("delete 2")
        XCTAssertEqual(state.queue.map(\.info.path), ["/m/c.flac", "/m/b.flac"])
        run("play 2")
        XCTAssertEqual(state.currentTrack?.info.path, "/m/b.flac")
        run("delete 5")
        XCTAssertEqual(state.queue.count, 2)
        XCTAssertEqual(state.message, "no queue entry 5")
    }
}

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
            ("queue --json", .success(.queueJSON(from: 1))),
            ("queue --json 2", .success(.queueJSON(from: 2))),
            ("QUEUE  --json \t 301 ", .success(.queueJSON(from: 301))),
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
            ("queue --json 0", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue --json -1", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue --json +2", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue --json x", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue --json 1 2", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue --json 99999999999999999999", .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))),
            ("queue 2 --json", .failure(ControlError("usage: queue [page]"))),
            ("ls --json", .success(.lsJSON(path: nil, from: 1))),
            ("LS --json   ", .success(.lsJSON(path: nil, from: 1))),
            ("ls --json /music/A B/", .success(.lsJSON(path: "/music/A B/", from: 1))),
            ("ls  --json \t /music/x  ", .success(.lsJSON(path: "/music/x", from: 1))),
            ("ls --json --json", .success(.lsJSON(path: "--json", from: 1))),
            // `--from N` only right after `--json`; the rest of the line is the folder, whatever it holds.
            ("ls --json --from 3", .success(.lsJSON(path: nil, from: 3))),
            ("ls --json --from 3 /music/A B", .success(.lsJSON(path: "/music/A B", from: 3))),
            ("ls \t--json\t--from\t12\t /music/--from 2 ", .success(.lsJSON(path: "/music/--from 2", from: 12))),
            ("ls --json --from 1 --from 5", .success(.lsJSON(path: "--from 5", from: 1))),
            ("ls --json --from 1 -- x", .success(.lsJSON(path: "-- x", from: 1))),
            ("ls --json /music/A --from 3", .success(.lsJSON(path: "/music/A --from 3", from: 1))),
            ("ls --json --fromx 3", .success(.lsJSON(path: "--fromx 3", from: 1))),
            ("ls --json --from", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls --json --from 0 /music", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls --json --from x /music", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls --json --from /music", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls /music", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
            ("ls --jsonx", .failure(ControlError("usage: ls --json [--from N] [FOLDER]"))),
        ]
        assertParses(table)
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

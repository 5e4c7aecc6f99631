// SPDX-License-Identifier: MIT
import XCTest
import JukeboxCore

/// `reload`, `restart` and `system --json`: the lines the web face's Settings and System pages use.
final class SystemLinesTests: XCTestCase {
    func testTheLinesParseOrSayWhatIsWrong() {
        let table: [(String, Result<ControlCommand, ControlError>)] = [
            ("reload", .success(.reload)),
            ("RELOAD ", .success(.reload)),
            ("restart", .success(.restart)),
            ("system --json", .success(.systemJSON)),
            ("reload now", .failure(ControlError("reload takes no arguments"))),
            ("restart 1", .failure(ControlError("restart takes no arguments"))),
            ("system", .failure(ControlError("usage: system --json"))),
            ("system --json x", .failure(ControlError("usage: system --json"))),
        ]
        for (line, expected) in table {
            XCTAssertEqual(ControlCommand.parse(line, seed: 0), expected, line)
        }
        for word in ["reload", "restart", "system --json"] {
            XCTAssertTrue(ControlCommand.helpText.contains(word), word)
        }
    }
}

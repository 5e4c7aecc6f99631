// SPDX-License-Identifier: MIT
import Foundation
import XCTest

extension DaemonTestCase {
    /// Sets the web face's PIN as the box's owner does: `jukebox web-pin --state STATE` with `pin`
    /// on its standard input (the page cannot set it); fails the test unless it exits 0.
    func setWebPin(_ pin: String, state: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = Pipe()
        let running = try Jukebox.start(["web-pin", "--state", state], stdin: input.fileHandleForReading)
        input.fileHandleForWriting.write(Data((pin + "\n").utf8))
        try input.fileHandleForWriting.close()
        let result = try XCTUnwrap(running.wait(timeout: 20), "web-pin did not finish", file: file, line: line)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
@testable import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// A technician's session on the serial console, through a pty, against the running loop.
final class ConsoleSessionTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    func testEveryCommandAnswersOnTheConsoleAndGarbageDoesNoHarm() throws {
        let pty = try SerialConsoleTests.PTY()
        defer { pty.closeAll() }
        let console = try SerialConsole(path: pty.slavePath, baud: 115200)
        let audio = RecordingAudio()
        let mailbox = Mailbox()
        audio.mailbox = mailbox
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .info),
                              mailbox: mailbox)
        runtime.console = console
        runtime.controlSettings.version = "jukebox test"
        console.prompt()
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: [.add([TrackInfo(path: "/m/a.flac", duration: 90), TrackInfo(path: "/m/b.flac")])]); done.signal() }.start()

        func ask(_ line: String) -> String {
            pty.clearScreen()
            pty.type(line + "\r")
            return pty.waitForScreen(endingWith: "jukebox> ")
        }
        XCTAssertTrue(ask("help").contains("status [--json]"))
        XCTAssertTrue(ask("play").contains("▶ a  0:00 / 1:30  [1/2]  vol 100"))
        XCTAssertTrue(ask("vol 40").contains("vol 40"))
        XCTAssertTrue(ask("seek 1:00").contains("1:00 / 1:30"))
        XCTAssertTrue(ask("next").contains("▶ b"))
        XCTAssertTrue(ask("shuffle on").contains("shuffle"))
        XCTAssertTrue(ask("repeat all").contains("repeat all"))
        XCTAssertTrue(ask("queue").contains("2 tracks"))
        XCTAssertTrue(ask("status").contains("▶ b"))
        XCTAssertTrue(ask("diag").contains("uptime"))
        XCTAssertTrue(ask("version").contains("jukebox test"))
        XCTAssertTrue(ask("log 3").contains("lines"))
        XCTAssertTrue(ask("pause").contains("⏸"))
        XCTAssertTrue(ask("toggle").contains("▶"))
        XCTAssertTrue(ask("prev").contains("▶"))
        let interrupted = ask("interrupt begin doorbell")
        XCTAssertTrue(interrupted.contains("released"), interrupted)
        XCTAssertTrue(ask("interrupt end").contains("▶"))
        XCTAssertTrue(ask("yield begin").contains("error: yield belongs to `jukebox yield`"))
        XCTAssertTrue(ask("frobnicate").contains("error: unknown command"))
        XCTAssertTrue(ask("stop").contains("■"))
        XCTAssertTrue(ask("clear").contains("queue empty"))
        // Events stream until a key is pressed.
        pty.clearScreen()
        pty.type("events\r")
        _ = pty.waitForScreen(endingWith: "press any key to stop\r\n")
        runtime.mailbox.post(.play)
        XCTAssertTrue(waitFor(3) { pty.read().contains("event ") })
        pty.type("x")
        XCTAssertTrue(pty.waitForScreen(endingWith: "jukebox> ").contains("events ended"))
        // A wrong baud rate looks like this: garbage, then the console still answers.
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_CONSOLE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("ConsoleSessionTests garbage seed \(seed) (JUKEBOX_CONSOLE_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        pty.type((0..<3000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        pty.type("\u{15}\r")  // Ctrl-U, Enter
        XCTAssertTrue(ask("version").contains("jukebox test"))
        runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    }

    /// The appliance image's setup problems on the console's `diag` (issue 32: "says what is
    /// wrong on … the console"): read at start, inert on the terminal, read again at a reload.
    func testSetupProblemsShowInTheConsolesDiag() throws {
        let dir = TempDir()
        let problems = dir.write("problems", "wifi.txt: ssid= must be 1 to 32 characters\n\u{1B}]0;owned\u{07}\u{1B}[2Jgone\n")
        let pty = try SerialConsoleTests.PTY()
        defer { pty.closeAll() }
        let console = try SerialConsole(path: pty.slavePath, baud: 115200)
        let mailbox = Mailbox()
        let runtime = Runtime(state: State(), audio: RecordingAudio(), store: nil, status: RecordingStatus(), log: Log(level: .info),
                              mailbox: mailbox)
        runtime.console = console
        runtime.setupProblemsPath = problems
        console.prompt()
        let box = Box(runtime), done = DispatchSemaphore(value: 0)
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
        func ask(_ line: String) -> String {
            pty.clearScreen()
            pty.type(line + "\r")
            return pty.waitForScreen(endingWith: "jukebox> ")
        }
        // Read off the loop: the lines come a moment after the start (and after a reload).
        func diagUntil(_ done: (String) -> Bool) -> String {
            let start = DispatchTime.now().uptimeNanoseconds
            while true {
                let diag = ask("diag")
                if done(diag) || DispatchTime.now().uptimeNanoseconds - start > 10_000_000_000 { return diag }
            }
        }
        let diag = diagUntil { $0.contains("setup problem") }
        XCTAssertTrue(diag.contains("setup problem: wifi.txt: ssid= must be 1 to 32 characters\r\n"), diag)
        XCTAssertTrue(diag.contains("setup problem: \u{FFFD}]0;owned\u{FFFD}\u{FFFD}[2Jgone\r\n"), diag)
        XCTAssertFalse(diag.contains("\u{1B}]0;") || diag.contains("\u{07}"), diag)
        // Fixed and reloaded (this player has no config file to reload, the file is read all the same).
        try FileManager.default.removeItem(atPath: problems)
        _ = ask("reload")
        XCTAssertFalse(diagUntil { !$0.contains("setup problem") }.contains("setup problem"))
        runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    }
}

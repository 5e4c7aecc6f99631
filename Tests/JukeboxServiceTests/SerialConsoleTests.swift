// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
@testable import JukeboxService
import JukeboxSystem
import XCTest

/// The serial console through a real pty: the test holds the master side and behaves like
/// picocom (writes keys, reads what the console shows); the console opens the slave by path.
final class SerialConsoleTests: XCTestCase {
    /// A pty pair: `master` is the terminal's side, `slavePath` the device the console opens.
    final class PTY {
        let master: Int32
        let slave: Int32
        let slavePath: String
        var screen: [UInt8] = []

        init() throws {
            var m: Int32 = -1, s: Int32 = -1
            var name = [CChar](repeating: 0, count: 256)
            guard openpty(&m, &s, &name, nil, nil) == 0 else { throw SystemError(call: "openpty", subject: "", errno: errno) }
            master = m
            slave = s
            slavePath = String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            _ = fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK)
        }

        func closeAll() {
            Glibc.close(master)
            Glibc.close(slave)
        }

        /// Types bytes as a terminal sends them (waiting, when the pty is full, until it has room).
        func type(_ bytes: [UInt8]) {
            var rest = bytes[...]
            let deadline = monotonicNow() + 5
            while !rest.isEmpty && monotonicNow() < deadline {
                let n = rest.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                if n > 0 {
                    rest = rest.dropFirst(n)
                } else {
                    var p = pollfd(fd: master, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&p, 1, Int32(max(1, (deadline - monotonicNow()) * 1000)))
                }
            }
        }
        func type(_ text: String) { type(Array(text.utf8)) }

        /// Reads what the console has shown so far.
        @discardableResult
        func read() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = Glibc.read(master, &buffer, buffer.count)
                if n <= 0 { break }
                screen += buffer[0..<n]
            }
            return String(decoding: screen, as: UTF8.self)
        }

        /// Waits until the screen ends with `suffix` (the console's output crosses the pty
        /// asynchronously); returns the screen.
        @discardableResult
        func waitForScreen(endingWith suffix: String, timeout: Double = 3) -> String {
            let deadline = monotonicNow() + timeout
            while !read().hasSuffix(suffix) && monotonicNow() < deadline {
                var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, Int32(max(1, (deadline - monotonicNow()) * 1000)))
            }
            return read()
        }

        func clearScreen() {
            read()
            screen = []
        }
    }

    var pty: PTY!
    var console: SerialConsole!

    override func setUpWithError() throws {
        pty = try PTY()
        console = try SerialConsole(path: pty.slavePath)
    }

    override func tearDown() {
        console?.close()
        pty?.closeAll()
        console = nil
        pty = nil
    }

    /// Reads from the console until `count` inputs arrived or it stays quiet for `quiet` seconds.
    func inputs(count: Int = .max, quiet: Double = 0.15) -> [ConsoleInput] {
        var result: [ConsoleInput] = []
        var lastActivity = monotonicNow()
        while result.count < count && monotonicNow() - lastActivity < (count == .max ? quiet : 3) {
            var p = pollfd(fd: console.fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 10) == 1 {
                let got = console.readInput()
                if !got.isEmpty { lastActivity = monotonicNow() }
                result += got
                if console.fd < 0 { break }
            }
        }
        return result
    }

    /// Shows the prompt and waits for it, so the screen holds only what follows.
    func promptAndClearScreen() {
        console.prompt()
        pty.waitForScreen(endingWith: SerialConsole.promptText)
        pty.clearScreen()
    }

    // MARK: Line editing

    func testTypingALineEchoesItAndReportsIt() {
        console.prompt()
        pty.type("status\r")
        XCTAssertEqual(inputs(count: 1), [.line("status")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "jukebox> status\r\n")
        console.print("ok playing")
        console.prompt()
        XCTAssertEqual(pty.waitForScreen(endingWith: "> "), "jukebox> status\r\nok playing\r\njukebox> ")
    }

    func testBackspaceErasesOneCharacterWhateverItsLength() {
        promptAndClearScreen()
        pty.type("stq\u{7F}atusé\u{08}\r")
        XCTAssertEqual(inputs(count: 1), [.line("status")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "stq\u{8} \u{8}atusé\u{8} \u{8}\r\n")
        console.prompt()
        pty.type("vol 5ä\u{7F}0\r")
        XCTAssertEqual(inputs(count: 1), [.line("vol 50")])
        pty.type("\u{7F}\u{7F}x\r")  // backspace on an empty line does nothing
        XCTAssertEqual(inputs(count: 1), [.line("x")])
    }

    func testCtrlUClearsTheLine() {
        promptAndClearScreen()
        pty.type("garbage\u{15}play\r")
        XCTAssertEqual(inputs(count: 1), [.line("play")])
        let erase = String(repeating: "\u{8} \u{8}", count: 7)
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "garbage" + erase + "play\r\n")
    }

    func testCtrlCAbandonsTheLineAndShowsANewPrompt() {
        console.prompt()
        pty.type("pla\u{03}")
        XCTAssertEqual(inputs(count: 1), [.interrupt])
        XCTAssertEqual(pty.waitForScreen(endingWith: "^C\r\njukebox> "), "jukebox> pla^C\r\njukebox> ")
        pty.type("stop\r")
        XCTAssertEqual(inputs(count: 1), [.line("stop")])
    }

    func testCRLFAndLFAndCREachCountAsOneEnter() {
        console.prompt()
        pty.type("play\r\nstop\r\nnext\nprev\r")
        XCTAssertEqual(inputs(count: 4), [.line("play"), .line("stop"), .line("next"), .line("prev")])
        XCTAssertEqual(inputs(), [])
        // CR and LF in separate reads are still one Enter.
        pty.type("a\r")
        XCTAssertEqual(inputs(count: 1), [.line("a")])
        pty.type("\nb\r")
        XCTAssertEqual(inputs(count: 1), [.line("b")])
        XCTAssertEqual(inputs(), [])
    }

    func testBlankLinesOnlyShowANewPrompt() {
        console.prompt()
        pty.type("\r   \r")
        XCTAssertEqual(inputs(), [])
        XCTAssertEqual(pty.waitForScreen(endingWith: "   \r\njukebox> "), "jukebox> \r\njukebox>    \r\njukebox> ")
    }

    func testEscapeSequencesAreSwallowed() {
        promptAndClearScreen()
        // Up, down, left (CSI), F1 (SS3), Ctrl-Right (CSI with parameters), Alt-x, Delete.
        pty.type("\u{1B}[A\u{1B}[Bst\u{1B}[Datus\u{1B}OP\u{1B}[1;5C\u{1B}x\u{1B}[3~\r")
        XCTAssertEqual(inputs(count: 1), [.line("status")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "status\r\n")
    }

    func testOtherControlBytesAreIgnored() {
        promptAndClearScreen()
        pty.type("p\u{01}l\u{09}a\u{04}y\u{13}\u{11}\u{00}\r")
        XCTAssertEqual(inputs(count: 1), [.line("play")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "play\r\n")
    }

    func testALineLongerThanTheLimitIsRefusedAtEnter() {
        console.prompt()
        let limit = ControlCommand.maxLineLength
        pty.type(String(repeating: "a", count: limit + 100) + "\r")
        XCTAssertEqual(inputs(), [])
        let screen = pty.waitForScreen(endingWith: "bytes\r\njukebox> ")
        XCTAssertTrue(screen.hasSuffix("\u{07}\r\nerror: line longer than \(limit) bytes\r\njukebox> "))
        XCTAssertEqual(console.editor.line, [])
        // Exactly at the limit is fine.
        pty.type(String(repeating: "b", count: limit) + "\r")
        XCTAssertEqual(inputs(count: 1), [.line(String(repeating: "b", count: limit))])
    }

    func testTypeAheadWhileACommandRunsAppearsAfterItsPrompt() {
        console.prompt()
        pty.type("status\rpl")
        XCTAssertEqual(inputs(count: 1), [.line("status")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "status\r\n"), "jukebox> status\r\n")
        // "pl" waits for the prompt: the whole screen after the reply shows it only there.
        console.print("ok stopped")
        console.prompt()
        XCTAssertEqual(pty.waitForScreen(endingWith: "pl"), "jukebox> status\r\nok stopped\r\njukebox> pl")
        pty.type("ay\r")
        XCTAssertEqual(inputs(count: 1), [.line("play")])
    }

    func testTwoLinesInOneReadEachGetTheirPrompt() {
        console.prompt()
        pty.type("play\rstop\r")
        XCTAssertEqual(inputs(count: 2), [.line("play"), .line("stop")])
        console.print("ok 1")
        console.prompt()
        console.print("ok 2")
        console.prompt()
        XCTAssertEqual(pty.waitForScreen(endingWith: "ok 2\r\njukebox> "),
                       "jukebox> play\r\nok 1\r\njukebox> stop\r\nok 2\r\njukebox> ")
    }

    func testPrintAtThePromptRedrawsThePromptAndTheLine() {
        console.prompt()
        pty.type("vol")
        XCTAssertEqual(inputs(), [])
        console.print("track changed")
        XCTAssertEqual(pty.waitForScreen(endingWith: "changed\r\njukebox> vol").suffix(32),
                       "vol\r\u{1B}[Ktrack changed\r\njukebox> vol".suffix(32))
    }

    func testPrintUsesCRLFAndReplacesControlCharacters() {
        console.print("a\u{1B}[2Jb\nc\r\nd\u{85}e\tf")
        XCTAssertEqual(pty.waitForScreen(endingWith: "f\r\n"), "a\u{FFFD}[2Jb\r\nc\r\nd\u{FFFD}e\u{FFFD}f\r\n")
    }

    // MARK: Streaming

    func testInStreamingModeAnyKeyEndsIt() {
        console.prompt()
        pty.type("events\r")
        XCTAssertEqual(inputs(count: 1), [.line("events")])
        console.streaming = true
        console.print("event 1")
        pty.waitForScreen(endingWith: "event 1\r\n")
        pty.clearScreen()
        pty.type("\u{1B}[A")
        XCTAssertEqual(inputs(count: 1), [.anyKey])
        XCTAssertFalse(console.streaming)
        // The key is not echoed: the whole screen after the next prompt and line holds no trace of it.
        console.prompt()
        pty.type("play\r")
        XCTAssertEqual(inputs(count: 1), [.line("play")])
        XCTAssertEqual(pty.waitForScreen(endingWith: "\r\n"), "jukebox> play\r\n")
    }

    func testEnterEndsStreamingAsOneKey() {
        console.streaming = true
        pty.type("\r")
        XCTAssertEqual(inputs(count: 1), [.anyKey])
        pty.type("\n")
        XCTAssertEqual(inputs(), [])
    }

    // MARK: Robustness

    func testRandomGarbageNeverCrashesAndLinesStayBounded() {
        var random = SeededGenerator(seed: 0x5EED_C0DE)
        console.prompt()
        var lines = 0
        var total = 0
        var overflowed = false
        while total < 30_000 {
            let length = Int(random.next() % 200) + 1
            // Every third 4 KiB has no Enter (nor Ctrl-C, Ctrl-U), so lines outgrow the limit.
            let enterAllowed = (total / 4096) % 3 != 2
            let lineEnds: [UInt8] = [0x0A, 0x0D, 0x03, 0x15]
            var chunk: [UInt8] = []
            for _ in 0..<length {
                let r = random.next()
                switch r % 16 {
                case 0: if enterAllowed { chunk.append(0x0D) }
                case 1: chunk.append(0x1B)
                case 2:  // control bytes
                    let byte = UInt8(r >> 8 & 0x1F)
                    if enterAllowed || !lineEnds.contains(byte) { chunk.append(byte) }
                case 3, 4, 5: chunk.append(UInt8(0x80 | (r >> 8 & 0x7F)))  // high bytes, mostly invalid UTF-8
                case 6: chunk += [0xE2, 0x80, 0xA6]  // a valid "…"
                default:
                    let byte = UInt8(r >> 8 & 0xFF)
                    if enterAllowed || !lineEnds.contains(byte) { chunk.append(byte) }
                }
            }
            total += chunk.count
            pty.type(chunk)
            for input in inputs(quiet: 0.003) {
                guard case .line(let line) = input else { continue }
                lines += 1
                XCTAssertLessThanOrEqual(line.utf8.count, ControlCommand.maxLineLength)
                XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
                console.print("error: unknown command")
                console.prompt()
            }
            XCTAssertLessThanOrEqual(console.editor.line.count, ControlCommand.maxLineLength)
            overflowed = overflowed || console.editor.overflowed
            XCTAssertLessThanOrEqual(console.pendingOutput, SerialConsole.maxOutput)
            XCTAssertLessThanOrEqual(console.heldBytes, SerialConsole.maxHeld)
            if random.next() % 4 != 0 { pty.read() }  // a terminal that sometimes lags
            pty.screen = []
        }
        XCTAssertEqual(inputs().filter { if case .line(let l) = $0 { l.utf8.count > ControlCommand.maxLineLength } else { false } }, [])
        XCTAssertNil(console.failed)
        XCTAssertGreaterThan(lines, 10)
        // Whether a sample above catches the editor overflowed depends on how the pty split the
        // bytes into reads (CI under ASan once saw none), so it is reported, not required; the
        // refusal of an overlong line is testALineLongerThanTheLimitIsRefusedAtEnter's.
        print("SerialConsoleTests: \(lines) lines from \(total) random bytes; the editor overflowed: \(overflowed)")
    }

    func testOutputToATerminalThatNeverReadsStaysBoundedAndNeverBlocks() {
        // Never blocks: the line is non-blocking (a blocked write would hang this test, which the
        // runner's timeout catches); how long the prints take is the machine's (2.9 s under
        // qemu-aarch64), so it is not bounded here.
        XCTAssertNotEqual(fcntl(console.fd, F_GETFL) & O_NONBLOCK, 0, "the console's descriptor may block")
        for i in 0..<3000 {
            console.print("line \(i) " + String(repeating: "x", count: 90))
            XCTAssertLessThanOrEqual(console.pendingOutput, SerialConsole.maxOutput)
        }
        console.flush()
        XCTAssertTrue(console.wantsWrite)
        XCTAssertGreaterThan(console.droppedBytes, 0)
        XCTAssertNil(console.failed)
        // The terminal catches up: it sees the marker and the newest lines.
        let deadline = monotonicNow() + 5
        while console.wantsWrite && monotonicNow() < deadline {
            pty.read()
            console.flush()
        }
        let screen = pty.waitForScreen(endingWith: "line 2999 " + String(repeating: "x", count: 90) + "\r\n")
        XCTAssertTrue(screen.contains("\r\n[… output dropped]\r\n"))
        XCTAssertTrue(screen.hasPrefix("line 0 "))
        XCTAssertFalse(screen.contains("line 1500 "))
    }

    func testATerminalThatGoesAwayFailsTheConsoleWithoutBlocking() throws {
        console.prompt()
        pty.closeAll()
        pty = nil
        XCTAssertEqual(inputs(), [])
        XCTAssertNotNil(console.failed)
        XCTAssertEqual(console.fd, -1)
        XCTAssertFalse(console.wantsWrite)
        console.print("nobody listens")  // queued, never written, never fails
        XCTAssertEqual(console.readInput(), [])
        XCTAssertThrowsError(try console.reopen())
        XCTAssertNotNil(console.failed)
    }

    /// A pty slave that hung up is never opened again: the kernel hands its number to the next pty
    /// (another login's terminal), which the console would then read and write.
    func testAPtyThatHungUpIsNotReopenedEvenWhenItsNumberIsAnotherTerminalsNow() throws {
        XCTAssertTrue(console.isPseudoTerminal)
        let number = pty.slavePath
        pty.closeAll()
        pty = nil
        XCTAssertEqual(inputs(), [])
        XCTAssertNotNil(console.failed)
        XCTAssertFalse(console.canReopen)
        let next = try PTY()
        defer { next.closeAll() }
        print("the hung-up console was \(number); the next pty is \(next.slavePath)")
        XCTAssertThrowsError(try console.reopen())
        XCTAssertEqual(console.fd, -1)
        console.print("secret")
        next.type("typed by someone else\r")
        XCTAssertEqual(console.readInput(), [])
        XCTAssertFalse(next.read().contains("secret"))
    }

    func testReopenStartsAFreshLine() throws {
        console.prompt()
        pty.type("sta")
        XCTAssertEqual(inputs(), [])
        try console.reopen()
        XCTAssertNil(console.failed)
        console.prompt()
        pty.type("play\r")
        XCTAssertEqual(inputs(count: 1), [.line("play")])
    }

    func testADescriptorCanBeTakenOver() throws {
        console.close()
        let other = try PTY()
        defer { other.closeAll() }
        let fdConsole = SerialConsole(fd: dup(other.slave))
        defer { fdConsole.close() }
        fdConsole.prompt()
        other.type("next\r")
        var got: [ConsoleInput] = []
        let deadline = monotonicNow() + 3
        while got.isEmpty && monotonicNow() < deadline {
            var p = pollfd(fd: fdConsole.fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 10) == 1 { got += fdConsole.readInput() }
        }
        XCTAssertEqual(got, [.line("next")])
        XCTAssertEqual(other.waitForScreen(endingWith: "\r\n"), "jukebox> next\r\n")  // raw: no driver echo
        XCTAssertThrowsError(try fdConsole.reopen())
    }

    // MARK: Baud rates

    func testEverySupportedBaudRateIsSet() throws {
        console.close()  // it holds the line exclusively
        // qemu-user 7.2 (Debian 12's, which board/test-arm64.sh runs the arm64 tests with, setting
        // JUKEBOX_QEMU_USER=1) has no B921600 in its termios translation: the kernel is handed B0.
        // Nothing in jukebox can change that, so only that read-back is left out there.
        let qemuUser = ProcessInfo.processInfo.environment["JUKEBOX_QEMU_USER"] == "1"
        for baud in SerialConsole.baudRates {
            let c = try SerialConsole(path: pty.slavePath, baud: baud)
            var t = termios()
            XCTAssertEqual(tcgetattr(c.fd, &t), 0)
            if qemuUser && baud == 921_600 {
                print("skipped: the read-back of 921600 baud (qemu-user does not translate B921600)")
            } else {
                XCTAssertEqual(cfgetospeed(&t), SerialConsole.speed(baud), "\(baud)")
                XCTAssertEqual(cfgetispeed(&t), SerialConsole.speed(baud), "\(baud)")
            }
            XCTAssertEqual(t.c_lflag & tcflag_t(ECHO | ICANON | ISIG), 0)
            XCTAssertEqual(t.c_iflag & tcflag_t(ICRNL | IXON), 0)
            XCTAssertEqual(t.c_cflag & tcflag_t(CSIZE | PARENB | CSTOPB | CLOCAL | CREAD), tcflag_t(CS8 | CLOCAL | CREAD))
            c.close()
        }
    }

    func testAnUnsupportedBaudRateIsRefusedWithTheChoices() {
        console.close()
        for baud in [0, 300, 12345, 1_000_000] {
            XCTAssertThrowsError(try SerialConsole(path: pty.slavePath, baud: baud)) { error in
                let e = error as? SystemError
                XCTAssertEqual(e?.errno, EINVAL)
                XCTAssertTrue(e?.description.contains("baud rate \(baud) (use one of 9600, 19200") ?? false, "\(String(describing: e))")
            }
        }
    }

    func testAMissingDeviceIsAnError() {
        XCTAssertThrowsError(try SerialConsole(path: "/dev/ttyDOES-NOT-EXIST")) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOENT)
        }
    }
}


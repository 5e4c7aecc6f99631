// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Glibc
import JukeboxSystem

/// A control session on a serial line (a UART such as /dev/ttyAMA0, a USB gadget /dev/ttyGS0,
/// or a pty): a prompt, line editing as picocom, screen and minicom users expect, lines out to
/// the loop, output queued and written without ever blocking.
///
/// The loop polls `fd` for POLLIN (and POLLOUT while `wantsWrite`), calls `readInput()` and
/// `flush()`, answers each `.line` with `print` and then `prompt()`. Garbage from a wrong baud
/// rate, a terminal that stops reading or a cable pulled out cannot block the loop or grow
/// memory: the line is bounded, output beyond `maxOutput` bytes drops the oldest part, and an
/// I/O error closes the fd (`fd` becomes -1, which poll ignores) and sets `failed` until
/// `reopen()`.
public final class SerialConsole {
    /// The baud rates `init(path:baud:)` accepts.
    public static let baudRates = [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600]
    /// The prompt.
    public static let promptText = "jukebox> "
    /// Most unsent output kept; beyond it the oldest goes, replaced by `droppedMarker`.
    public static let maxOutput = 64 << 10
    /// Most echo held back while a command runs (type-ahead beyond it is not shown).
    static let maxHeld = 16 << 10
    static let droppedMarker = Array("\r\n[… output dropped]\r\n".utf8)

    /// The device path, when opened by path (then `reopen()` works).
    public let path: String?
    /// The configured baud rate, when opened by path.
    public let baud: Int?
    /// The open descriptor, or -1 after `close()` or a failure.
    public private(set) var fd: Int32
    /// Why the console stopped (an I/O error such as EIO from a USB gadget that went away);
    /// nil while it works. Cleared by a successful `reopen()`.
    public private(set) var failed: String?
    /// Whether `path` is a pseudo-terminal's slave (`/dev/pts/N`): once it hung up it is never
    /// reopened, since its number may by then be another login's terminal.
    public let isPseudoTerminal: Bool
    /// Whether `reopen()` may be tried: opened by path, and not a pty that failed.
    public var canReopen: Bool { path != nil && !(isPseudoTerminal && failed != nil) }
    /// While true (e.g. for a command that streams events) input is not line-edited: the next
    /// keypress yields `.anyKey` and sets this back to false.
    public var streaming = false
    /// Output waits to be written: poll for POLLOUT and call `flush()`.
    public var wantsWrite: Bool { fd >= 0 && !output.isEmpty }
    /// Bytes queued for the terminal.
    public var pendingOutput: Int { output.count }
    /// Output bytes dropped because the terminal did not take them.
    public private(set) var droppedBytes = 0

    var output: [UInt8] = []
    var editor = LineEditor()
    /// A line was submitted and its reply and prompt are still due: echo of what is typed
    /// meanwhile waits here, one segment per prompt, so it appears after the prompt it belongs to.
    var awaitingPrompt = false
    var held: [(bytes: [UInt8], submitted: Bool)] = []
    var heldBytes = 0
    /// The prompt and the line being typed are on screen (a `print` then redraws them).
    var atPrompt = false

    /// Opens a serial device: raw 8N1 at `baud`, no flow control, modem lines ignored, no echo
    /// by the driver (the console echoes itself), non-blocking. Throws when the device cannot be
    /// opened or configured, or for a baud rate not in `baudRates`.
    public init(path: String, baud: Int = 115200) throws(SystemError) {
        self.path = path
        self.baud = baud
        let opened = try SerialConsole.open(path: path, baud: baud)
        fd = opened
        isPseudoTerminal = Self.isPseudoTerminal(opened)
    }

    /// UNIX 98 pty slaves have character majors 136 to 143 (Documentation/admin-guide/devices.txt).
    static func isPseudoTerminal(_ fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFCHR else { return false }
        let rdev = UInt64(st.st_rdev)
        let major = ((rdev >> 8) & 0xFFF) | ((rdev >> 32) & ~UInt64(0xFFF))
        return (136...143).contains(major)
    }

    /// Takes over an open descriptor (closed by `close()`): non-blocking, and if it is a
    /// terminal, the same raw mode at its current speed. `reopen()` is not available.
    public init(fd: Int32) {
        path = nil
        baud = nil
        isPseudoTerminal = Self.isPseudoTerminal(fd)
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        if isatty(fd) == 1 { try? SerialConsole.configure(fd, speed: nil, subject: "fd \(fd)") }
    }

    deinit { close() }

    /// Closes the device; safe to call twice.
    public func close() {
        if fd >= 0 {
            _ = clinux_ioctl_long(fd, UInt(TIOCNXCL), 0)  // a pty outlives us: let the next opener in
            _ = Glibc.close(fd)
        }
        fd = -1
    }

    /// Opens the device again (after `failed`, e.g. when a USB gadget is back), with a fresh
    /// line; queued output is kept. Throws as `init(path:baud:)`, or EBADF for a console made
    /// from a descriptor.
    public func reopen() throws(SystemError) {
        guard let path, let baud else { throw SystemError(call: "reopen", subject: "serial console from fd", errno: EBADF) }
        // A pty that hung up is gone for good: its number may be someone else's terminal now.
        guard canReopen else { throw SystemError(call: "reopen (a pty that hung up is not reopened)", subject: path, errno: ENXIO) }
        close()
        fd = try SerialConsole.open(path: path, baud: baud)
        failed = nil
        editor = LineEditor()
        awaitingPrompt = false
        held = []
        heldBytes = 0
        atPrompt = false
        streaming = false
    }

    // MARK: Input

    /// Reads what the terminal sent (at most 64 KiB per call, so a flood cannot hold the loop)
    /// and returns what it means, in order. Echo is queued and flushed.
    public func readInput() -> [ConsoleInput] {
        guard fd >= 0 else { return [] }
        var inputs: [ConsoleInput] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        var total = 0
        var interrupted = 0
        for _ in 0..<64 {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 {
                total += n
                feed(buffer[0..<n], into: &inputs)
                continue
            }
            if n == 0 {
                // With VMIN=0 a tty reads 0 when nothing is waiting; a hung-up tty does too
                // but then polls as POLLHUP forever, so tell the two apart.
                if total == 0 { checkHangup() }
                break
            }
            if errno == EINTR && interrupted < 8 { interrupted += 1; continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            fail("read", errno)
            break
        }
        flush()
        return inputs
    }

    func feed(_ bytes: ArraySlice<UInt8>, into inputs: inout [ConsoleInput]) {
        var effects: [LineEditor.Effect] = []
        for byte in bytes {
            if streaming {
                // One read holds one keypress (or an escape sequence): the rest goes with it.
                streaming = false
                inputs.append(.anyKey)
                editor.afterCR = bytes.last == 0x0D
                return
            }
            effects.removeAll(keepingCapacity: true)
            editor.feed(byte, into: &effects)
            for effect in effects {
                switch effect {
                case .echo(let bytes):
                    emit(bytes)
                case .submit(let line):
                    inputs.append(.line(line))
                    beginAwaiting()
                case .interrupt:
                    inputs.append(.interrupt)
                    emit(Array(Self.promptText.utf8))
                case .refuse:
                    emit(Array("error: line longer than \(ControlCommand.maxLineLength) bytes\r\n\(Self.promptText)".utf8))
                case .blank:
                    emit(Array(Self.promptText.utf8))
                }
            }
        }
    }

    /// Echo goes to the terminal, or waits for the prompt while a command runs.
    private func emit(_ bytes: [UInt8]) {
        guard awaitingPrompt else {
            enqueue(bytes)
            return
        }
        guard heldBytes + bytes.count <= Self.maxHeld else { return }
        if held.last?.submitted ?? true { held.append(([], false)) }
        held[held.count - 1].bytes += bytes
        heldBytes += bytes.count
    }

    private func beginAwaiting() {
        atPrompt = false
        guard awaitingPrompt else {
            awaitingPrompt = true
            return
        }
        if held.last?.submitted ?? true { held.append(([], false)) }
        held[held.count - 1].submitted = true
    }

    private func checkHangup() {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            fail("read (hung up)", EIO)
        }
    }

    // MARK: Output

    /// Queues `text` and a line end (CRLF; LFs and CRLFs inside become CRLF too) and writes what
    /// the terminal takes now. Each line is made inert (`DisplayText.inert`), so a tag cannot
    /// send escape sequences to the terminal. If the prompt is on screen, the text appears above
    /// it and the prompt and the line being typed are redrawn.
    public func print(_ text: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        for line in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = line.last == "\r" ? line.dropLast() : line
            bytes += Array(DisplayText.inert(String(String.UnicodeScalarView(line))).utf8) + [0x0D, 0x0A]
        }
        if atPrompt && !streaming {
            enqueue(Array("\r\u{1B}[K".utf8) + bytes + Array(Self.promptText.utf8) + editor.line)
        } else {
            enqueue(bytes)
        }
        flush()
    }

    /// Shows the prompt, then what was typed ahead while the last command ran.
    public func prompt() {
        enqueue(Array(Self.promptText.utf8))
        if awaitingPrompt {
            if held.isEmpty {
                awaitingPrompt = false
            } else {
                let segment = held.removeFirst()
                heldBytes -= segment.bytes.count
                enqueue(segment.bytes)
                awaitingPrompt = segment.submitted
            }
        } else {
            enqueue(editor.line)
        }
        atPrompt = !awaitingPrompt
        flush()
    }

    /// Writes queued output as far as the terminal takes it now; never blocks.
    public func flush() {
        var interrupted = 0
        while fd >= 0 && !output.isEmpty {
            let n = output.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                output.removeFirst(n)
                continue
            }
            if n < 0 && errno == EINTR && interrupted < 8 { interrupted += 1; continue }
            if n < 0 && errno != EAGAIN && errno != EWOULDBLOCK { fail("write", errno) }
            return
        }
    }

    private func enqueue(_ bytes: [UInt8]) {
        output += bytes
        guard output.count > Self.maxOutput else { return }
        // Drop to three quarters, so a stalled terminal costs one move per 16 KiB, not per line;
        // cut after a line end when one is near, else at a character boundary.
        var cut = output.count - (Self.maxOutput * 3 / 4 - Self.droppedMarker.count)
        if let newline = output[cut..<min(cut + 1024, output.count)].firstIndex(of: 0x0A) {
            cut = newline + 1
        } else {
            while cut < output.count && output[cut] & 0xC0 == 0x80 { cut += 1 }
        }
        output.removeFirst(cut)
        output.insert(contentsOf: Self.droppedMarker, at: 0)
        droppedBytes += cut
    }

    private func fail(_ call: String, _ code: Int32) {
        failed = SystemError(call: call, subject: path ?? "serial console", errno: code).description
        close()
        streaming = false
    }

    // MARK: Device setup

    static func open(path: String, baud: Int) throws(SystemError) -> Int32 {
        guard let speed = speed(baud) else {
            let rates = baudRates.map(String.init).joined(separator: ", ")
            throw SystemError(call: "baud rate \(baud) (use one of \(rates)) for", subject: path, errno: EINVAL)
        }
        let fd = Int32(try sys("open", path) { Int(Glibc.open(cPath(path), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) })
        do {
            try configure(fd, speed: speed, subject: path)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        return fd
    }

    static func speed(_ baud: Int) -> speed_t? {
        switch baud {
        case 9600: return speed_t(B9600)
        case 19200: return speed_t(B19200)
        case 38400: return speed_t(B38400)
        case 57600: return speed_t(B57600)
        case 115200: return speed_t(B115200)
        case 230400: return speed_t(B230400)
        case 460800: return speed_t(B460800)
        case 921600: return speed_t(B921600)
        default: return nil
        }
    }

    /// Raw 8N1: no line editing, echo, signals or CR/LF translation by the driver, no software
    /// or hardware flow control, modem lines ignored (CLOCAL), reads return at once (VMIN=0,
    /// VTIME=0). Takes the line exclusively (TIOCEXCL), so a getty cannot read from it too.
    static func configure(_ fd: Int32, speed: speed_t?, subject: String) throws(SystemError) {
        var t = termios()
        try sys("tcgetattr", subject) { Int(tcgetattr(fd, &t)) }
        cfmakeraw(&t)
        t.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY | ICRNL | INLCR | IGNCR | ISTRIP)
        t.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        t.c_cflag &= ~tcflag_t(truncatingIfNeeded: CRTSCTS)
        t.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        if let speed {
            try sys("cfsetispeed", subject) { Int(cfsetispeed(&t, speed)) }
            try sys("cfsetospeed", subject) { Int(cfsetospeed(&t, speed)) }
        }
        try sys("tcsetattr", subject) { Int(tcsetattr(fd, TCSANOW, &t)) }
        _ = tcflush(fd, TCIFLUSH)  // what arrived before we listened is stale
        _ = clinux_ioctl_long(fd, UInt(TIOCEXCL), 0)
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// The client side of the control socket, for `jukebox ctl` and `jukebox yield`: send a line,
/// wait (bounded) for the reply line.
public final class ControlClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether the player closed the connection (a read found its end): `readLine` then answers
    /// nil at once, with no line to wait for.
    public private(set) var isClosed = false

    /// The reply to a connection the player has no room for (every slot taken).
    public static let noRoomReply = "error: too many connections"

    /// How long `jukebox ctl` waits for the reply to the command `words` unless told
    /// (`--timeout`): 10 s, and for a `bluetooth` command, which may scan and pair,
    /// `BluetoothControl.longest` (every step with its slack).
    public static func defaultTimeout(_ words: [String]) -> Double {
        words.first?.lowercased() == "bluetooth" ? Double(BluetoothControl.longest) : 10
    }

    /// Connects to the socket at `path`; throws when no jukebox listens there, or when `path` is
    /// in the fallback folder and that is not this user's private folder (`SocketFolder.check`).
    public init(path: String) throws(SystemError) {
        try SocketFolder.check(socket: path, create: false)
        fd = try ControlSocket.connect(path: path)
    }

    /// Connects to `path` and sends `line`: the client and the reply (nil when none came within
    /// `timeout`). When the player has no room, it tries again every 0.2 s until idle clients
    /// have had time to be dropped (`ControlSocket.defaultIdleLimit` plus its loop's second)
    /// or `timeout` passed, whichever is later. Throws when no jukebox listens there.
    public static func connect(path: String, request line: String, timeout: Double) throws(SystemError) -> (client: ControlClient, reply: String?) {
        let deadline = monotonicNow() + max(timeout, ControlSocket.defaultIdleLimit + 2)
        while true {
            let client = try ControlClient(path: path)
            let reply = client.request(line, timeout: timeout)
            if reply != noRoomReply || monotonicNow() >= deadline { return (client, reply) }
            var pause = timespec(tv_sec: 0, tv_nsec: 200_000_000)
            nanosleep(&pause, nil)
        }
    }

    deinit { close(fd) }

    /// The connection's file descriptor (`jukebox source`'s holder keeps it and closes the rest).
    public var descriptor: Int32 { fd }

    /// Sends one line; false when the player hung up.
    public func send(_ line: String) -> Bool {
        // send(MSG_NOSIGNAL): a player that hung up must give an error here, not a SIGPIPE.
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    /// Sends `line` and returns the reply: any continuation lines (they start with two spaces)
    /// and the final `ok …`/`error: …` line, joined with newlines; nil when it did not come within
    /// `timeout` seconds or the connection closed.
    public func request(_ line: String, timeout: Double) -> String? {
        // A player with no room has already answered and hung up: the send fails, the answer is there.
        _ = send(line)
        var lines: [String] = []
        while let reply = readLine(timeout: timeout) {
            lines.append(reply)
            if !reply.hasPrefix("  ") { return lines.joined(separator: "\n") }
        }
        return nil
    }

    /// Reads one more line, nil on timeout or close.
    public func readLine(timeout: Double) -> String? {
        let deadline = monotonicNow() + timeout
        while true {
            if let line = takeLine() { return line }
            let left = deadline - monotonicNow()
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(min(left, 1) * 1000) + 1) >= 0 || errno == EINTR else { return nil }
            if p.revents != 0 && !receive() { return nil }
        }
    }

    /// How a stream ended.
    public enum StreamEnd: Equatable, Sendable {
        /// The player closed the connection.
        case closed
        /// A line (Enter) arrived on the input.
        case inputLine
    }

    /// Hands each line the player sends (an `events` stream) to `each` until the player closes
    /// the connection or a line arrives on `input` (stdin). An input that ends (EOF, /dev/null)
    /// is no line: the stream goes on.
    public func stream(until input: Int32, _ each: (String) -> Void) -> StreamEnd {
        var inputOpen = true
        while true {
            while let line = takeLine() { each(line) }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: inputOpen ? input : -1, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return .closed }
            if fds[1].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 256)
                let n = read(input, &bytes, bytes.count)
                if n <= 0 { inputOpen = n < 0 && errno == EINTR } else if bytes[0..<n].contains(0x0A) { return .inputLine }
            }
            if fds[0].revents != 0 && !receive() {
                while let line = takeLine() { each(line) }
                return .closed
            }
        }
    }

    /// Waits until the player closes the connection, sends a line `ended` accepts, or `watched`
    /// (a pidfd) polls readable: what `jukebox source`'s holder waits for. Lines it does not
    /// accept are ignored.
    public func wait(until ended: (String) -> Bool, orReadable watched: Int32) {
        while true {
            while let line = takeLine() { if ended(line) { return } }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: watched, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            if fds[0].revents != 0 && !receive() { return }
        }
    }

    /// The next complete line already received, if any.
    private func takeLine() -> String? {
        guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeFirst(newline + 1)
        return line
    }

    /// Reads what the socket has; false when the player closed the connection.
    private func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && errno == EINTR { return true }
        if n <= 0 {
            isClosed = true
            return false
        }
        buffer += chunk[0..<n]
        return true
    }
}

/// Starts a program with an argument vector (never a shell) and does not wait; the loop reaps
/// it later (`reapChildren`). Returns the pid, or nil (with the reason) when it could not start.
public func startProgram(_ argv: [String]) -> (pid: pid_t?, error: String?) {
    startProgram(argv, fileActions: nil)
}

/// `startProgram` with the child's descriptors set up by `fileActions` (a pipe for its stdout).
public func startProgram(_ argv: [String], fileActions: UnsafePointer<posix_spawn_file_actions_t>?) -> (pid: pid_t?, error: String?) {
    guard !argv.isEmpty else { return (nil, "empty command") }
    var pid: pid_t = 0
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
    cArgs.append(nil)
    defer { for p in cArgs { free(p) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let rc = posix_spawnp(&pid, argv[0], fileActions, &attributes, cArgs, environ)
    return rc == 0 ? (pid, nil) : (nil, errnoText(rc))
}

/// Starts `argv` (no shell) with stdin on /dev/null and stdout on a pipe (stderr too when
/// `errors`, else /dev/null); the pid and the pipe's reading end (close-on-exec), or why not.
public func startProgramReading(_ argv: [String], errors: Bool) -> Result<ReadingChild, ProgramStartError> {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { return .failure(ProgramStartError(message: "pipe: " + errnoText(errno))) }
    // Neither end leaks into another child (posix_spawn's dup2 gives this one its stdout).
    ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    if errors {
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    let started = startProgram(argv, fileActions: &actions)
    close(ends[1])
    guard let pid = started.pid else {
        close(ends[0])
        return .failure(ProgramStartError(message: started.error ?? "unknown error"))
    }
    return .success(ReadingChild(pid: pid, fd: ends[0]))
}

/// A child started by `startProgramReading`: its pid and the reading end of its stdout's pipe.
public struct ReadingChild: Sendable, Equatable {
    /// The child's process id.
    public var pid: pid_t
    /// The reading end of its stdout's pipe (blocking; the caller may set O_NONBLOCK).
    public var fd: Int32
}

/// Why a program could not be started.
public struct ProgramStartError: Error, Equatable, Sendable {
    /// Why, as a sentence.
    public var message: String
    /// The reason, as a sentence.
    public init(message: String) { self.message = message }
}

/// The first executable `name` on PATH (or the usual places when PATH is unset); nil: none.
public func findProgram(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
    for dir in path.split(separator: ":") where dir.hasPrefix("/") {
        let candidate = dir + "/" + name
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// Collects every child that has ended, so started programs never linger as zombies.
public func reapChildren() {
    var status: Int32 = 0
    while waitpid(-1, &status, WNOHANG) > 0 {}
}

/// Runs a program with an argument vector (never a shell) and waits for it; returns its exit
/// status (128+N when killed by signal N, 127 when it could not be started).
public func runProgram(_ argv: [String]) -> Int32 {
    let started = startProgram(argv)
    guard let pid = started.pid else {
        writeAll(2, "jukebox: cannot run \(argv.first ?? ""): \(started.error ?? "unknown error")\n")
        return 127
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    if status & 0x7F == 0 { return (status >> 8) & 0xFF }
    return 128 + (status & 0x7F)
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The control socket: a Unix stream socket speaking one command per line, one reply line per
/// command. It only moves bytes; the loop decides what a line means. Misbehaving clients (lines
/// too long, never reading, too many of them) are cut off; they can never block the loop.
public final class ControlSocket {
    /// A connected client.
    final class Client {
        let id: Int
        let fd: Int32
        var input = LineSplitter(maxLength: ControlCommand.maxLineLength)
        var output: [UInt8] = []
        var closed = false
        /// The client ended its side while replies were still owed to it: it is closed once they
        /// are sent, and not read meanwhile.
        var ended = false
        /// Lines read and not handled yet (over-long ones as nil), oldest first: a few are
        /// handled per pass (`take`), so a client that sends thousands at once takes turns.
        var pending: [String?] = []
        /// The peer ended its side (a read found the end); `hungUp`: it closed both ways (POLLHUP).
        var peerEnded = false
        var hungUp = false
        /// Its peer was seen gone (POLLHUP) before its lines were read: it still has its lines
        /// handled, but holds no slot a newcomer could have.
        var peerGone = false
        /// When it last sent a byte (or connected), on the socket's clock.
        var lastHeard: Double
        init(id: Int, fd: Int32, now: Double) {
            self.id = id
            self.fd = fd
            lastHeard = now
        }
    }

    /// The socket's path.
    public let path: String
    let listenFD: Int32
    var clients: [Int: Client] = [:]
    private var nextID = 1
    /// Most clients at once; more are closed at accept. Clients whose peer has gone (their lines
    /// are still handled: `echo add … | socat` leaves at once) do not count, up to
    /// `maxClientsWithGone` descriptors in all.
    static let maxClients = 32
    static let maxClientsWithGone = 4 * maxClients
    /// Most unsent reply bytes kept for a client that does not read.
    static let maxOutput = 64 << 10
    /// Seconds a client may stall mid-line, or be silent before its slot may go to a newcomer
    /// when all are taken (by default).
    public static let defaultIdleLimit = 10.0
    /// Seconds a client may stall mid-line, or be silent before its slot may go to a newcomer.
    public let idleLimit: Double
    private let clock: () -> Double

    /// The default path: the service's `$RUNTIME_DIRECTORY/control` (systemd sets it), else
    /// `/run/jukebox/control` for root or when the service's socket is there, else under
    /// `$XDG_RUNTIME_DIR`, else in `SocketFolder.fallback()` (used only when private).
    public static func defaultPath() -> String {
        if let dir = getenv("RUNTIME_DIRECTORY").map({ String(cString: $0) }), !dir.isEmpty {
            return (dir.split(separator: ":").first.map(String.init) ?? dir) + "/control"
        }
        if getuid() == 0 || fileExists("/run/jukebox/control") { return "/run/jukebox/control" }
        if let dir = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !dir.isEmpty { return dir + "/jukebox/control" }
        return SocketFolder.fallback() + "/control"
    }

    /// Listens at `path` (mode 0660). A stale socket file is replaced; a live one (another
    /// jukebox answers there) is an error, so two players never steal each other's socket. In
    /// the fallback folder, only when that folder is private (`SocketFolder.check`).
    /// `idleLimit` and `clock` (monotonic seconds) decide when a silent client counts as stalled or
    /// may give its slot up.
    public init(path: String, idleLimit: Double = ControlSocket.defaultIdleLimit,
                clock: @escaping () -> Double = monotonicNow) throws(SystemError) {
        self.path = path
        self.idleLimit = idleLimit
        self.clock = clock
        try SocketFolder.check(socket: path, create: true)
        let folder = Paths.directory(path)
        if !isDirectory(folder) { try makeDirectories(folder) }
        guard path.utf8.count < 108 else { throw SystemError(call: "bind", subject: path, errno: ENAMETOOLONG) }
        try UnixSocket.clearStale(path)
        let fd = Int32(try sys("socket", path) { Int(socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)) })
        var addr = UnixSocket.address(path)
        do {
            try sys("bind", path) {
                Int(withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } })
            }
            // Not through a link: whatever took the name since bind is not ours to change.
            fchmodat(AT_FDCWD, path, 0o660, AT_SYMLINK_NOFOLLOW)
            try sys("listen", path) { Int(listen(fd, 16)) }
        } catch {
            close(fd)
            throw error
        }
        listenFD = fd
        var info = stat()
        made = lstat(cPath(path), &info) == 0 ? (info.st_dev, info.st_ino) : nil
    }

    deinit {
        for client in clients.values { close(client.fd) }
        close(listenFD)
        // Only the socket this one made: what has taken its name since is someone else's.
        var info = stat()
        if let made, lstat(cPath(path), &info) == 0, info.st_dev == made.device, info.st_ino == made.inode { unlink(cPath(path)) }
    }

    // The socket file bind made (device and inode), removed at the end only if still there.
    private var made: (device: dev_t, inode: ino_t)?

    /// Connects to a listening socket (client side, blocking); the fd is the caller's to close.
    public static func connect(path: String) throws(SystemError) -> Int32 {
        try UnixSocket.connect(path: path)
    }

    /// The fds to poll: the listener and every client (with POLLOUT while replies wait).
    func pollFDs() -> [pollfd] {
        var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
        for client in clients.values.sorted(by: { $0.id < $1.id }) {
            // An ended client is polled for nothing but the hang-up poll always reports: its end
            // of file (POLLIN) would wake the loop again and again until its replies are ready,
            // while POLLHUP (the peer closed both ways: it exited) frees its slot at once.
            let reading = !client.ended && !client.peerEnded && client.pending.count < Self.maxPending
            let events = (reading ? Int16(POLLIN) : 0) | (client.output.isEmpty ? 0 : Int16(POLLOUT))
            fds.append(pollfd(fd: client.fd, events: events, revents: 0))
        }
        return fds
    }

    /// Accepts waiting connections. A client silent between commands keeps its connection for as
    /// long as it likes (phone apps, monitors and benchmarks hold one open) while there is room;
    /// with every slot taken, a newcomer gets the slot of the client silent longest, provided it has
    /// been silent for `idleLimit` and `evictable` says it holds nothing. Otherwise the newcomer is
    /// told there is no room. Returns the ids of the clients closed to make room.
    @discardableResult
    func acceptAll(evictable: (Client) -> Bool = { _ in true }) -> [Int] {
        var evicted: [Int] = []
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return evicted }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if live() >= Self.maxClients { noticeGonePeers() }
            if live() >= Self.maxClients || clients.count >= Self.maxClientsWithGone {
                let now = clock()
                let victim = clients.values.filter { !$0.closed && now - $0.lastHeard >= idleLimit && evictable($0) }
                    .min { $0.lastHeard < $1.lastHeard }
                guard let victim else {
                    // send(MSG_NOSIGNAL): a newcomer that already left must not raise SIGPIPE (the
                    // player ignores it; a process hosting a Runtime, like the tests, may not).
                    let reply = Array((ControlClient.noRoomReply + "\n").utf8)
                    _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    close(fd)
                    continue
                }
                drop(victim)
                evicted.append(victim.id)
            }
            let client = Client(id: nextID, fd: fd, now: clock())
            nextID += 1
            clients[client.id] = client
        }
    }

    /// Clients holding a slot: not closed, peer not gone.
    private func live() -> Int { clients.values.filter { !$0.closed && !$0.peerGone && !$0.hungUp }.count }

    /// Marks the clients whose peer has closed its socket (POLLHUP, polled at once): a burst of
    /// clients that sent a line and left, still in the listen queue when a newcomer came, took
    /// the slots the newcomer was then refused (StuckJobTests saw "too many connections").
    private func noticeGonePeers() {
        let open = clients.values.filter { !$0.closed && !$0.peerGone && !$0.hungUp }
        var fds = open.map { pollfd(fd: $0.fd, events: 0, revents: 0) }
        guard !fds.isEmpty, poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
        for (client, fd) in zip(open, fds) where fd.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 {
            client.peerGone = true
        }
    }

    /// Most lines read ahead of handling per client; the rest stay in the socket until a turn
    /// took them (the client's writes then wait: its own pace, nobody else's).
    static let maxPending = 64
    /// Most lines of one client handled per pass of the loop: one client's flood of commands
    /// delays another's `status` by a few lines of work, not by the whole flood.
    static let linesPerTurn = 16

    /// Reads what a client sent into its `pending` lines (over-long ones become nil entries so the
    /// caller can answer with an error), up to `maxPending`; returns whether the client has gone.
    func read(_ client: Client) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while client.pending.count < Self.maxPending {
            let n = Glibc.read(client.fd, &buffer, buffer.count)
            if n == 0 { return true }
            if n < 0 { return errno != EAGAIN && errno != EINTR }
            client.lastHeard = clock()
            client.input.feed(buffer[0..<n]) { line in client.pending.append(line.map { String(decoding: $0, as: UTF8.self) }) }
        }
        return false  // leave the rest for a later turn
    }

    /// The client's next lines to handle on this pass, at most `linesPerTurn`.
    func take(_ client: Client) -> [String?] {
        let turn = Array(client.pending.prefix(Self.linesPerTurn))
        client.pending.removeFirst(turn.count)
        return turn
    }

    /// Whether a client has lines read and not yet handled (the loop must not sleep then).
    var hasPending: Bool { clients.values.contains { !$0.closed && !$0.pending.isEmpty } }

    /// Queues a reply line, made inert (`DisplayText.inert`: a newline in a title cannot forge a
    /// second line); a client that lets replies pile up (more than `maxOutput` unsent before this
    /// line) is disconnected. A line longer than `maxOutput` on its own is answered all the same,
    /// as `bounded` makes it: no field can cost a client its reply.
    func reply(_ client: Client, _ text: String) {
        guard !client.closed else { return }
        if client.output.count > Self.maxOutput {
            client.closed = true
            return
        }
        client.output += Array((Self.bounded(DisplayText.inert(text)) + "\n").utf8)
        flush(client)
    }

    /// What a reply that would exceed the limit says instead.
    public static let tooLongReply = "error: the reply was longer than 64 KiB"

    /// `line` when it fits in `maxOutput` bytes; otherwise a continuation line (two spaces) cut
    /// on a character and ended with "…", and any other line (the final `ok …`, a status line, a
    /// JSON object, which a cut would make invalid) replaced by `tooLongReply`.
    static func bounded(_ line: String) -> String {
        guard line.utf8.count > maxOutput else { return line }
        guard line.hasPrefix("  ") else { return tooLongReply }
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in line.unicodeScalars {
            bytes += UTF8.width(scalar)
            if bytes > maxOutput - 4 { break }
            kept.append(scalar)
        }
        return String(kept) + "…"
    }

    /// Sends what the socket takes now, without blocking.
    func flush(_ client: Client) {
        while !client.output.isEmpty {
            let n = client.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { client.output.removeFirst(n) } else { break }
        }
    }

    /// Clients that began a line and then sent nothing for `idleLimit` seconds: a peer that
    /// trickles a line (or died mid-line) is dropped even while there is room. Silence between
    /// lines is not a fault (see `acceptAll`).
    func stalledClients() -> [Client] {
        let now = clock()
        return clients.values.filter { $0.input.midLine && now - $0.lastHeard >= idleLimit }
    }

    /// When the next client that began a line counts as stalled, nil when none has.
    func nextStallDeadline() -> Double? {
        if hasPending { return clock() }
        return clients.values.filter { !$0.closed && $0.input.midLine }.map { $0.lastHeard + idleLimit }.min()
    }

    /// Closes a client.
    func drop(_ client: Client) {
        close(client.fd)
        clients[client.id] = nil
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The MPD listener: non-blocking TCP (IPv4/IPv6) and Unix sockets, and the bytes of each client.
/// It only moves bytes and enforces bounds (line length, unsent output, clients, idle time);
/// `MPDSession` speaks the protocol. Nothing here can block the loop.
public final class MPDListener {
    /// A connected client: its socket, its unfinished line and its protocol session.
    final class Client {
        let id: Int
        let fd: Int32
        let session: MPDSession
        var input = LineSplitter(maxLength: MPDListener.maxLineLength)
        var lastHeard: Double
        var closed = false
        /// Lines read ahead of handling (nil: one too long), handed to the session a few per pass.
        var pending: [[UInt8]?] = []
        /// The peer ended its side (end of file, or an error): closed once `pending` is handled.
        var peerEnded = false
        /// The peer hung up, seen by `noticeGonePeers` before its end of file was read: what it
        /// sent is still read and handled, but it holds no slot against a newcomer.
        var peerGone = false
        init(id: Int, fd: Int32, session: MPDSession, now: Double) {
            self.id = id
            self.fd = fd
            self.session = session
            lastHeard = now
        }
    }

    /// Longest line accepted, in bytes (MPD's own input buffer is about this size).
    public static let maxLineLength = 4096
    /// Most unsent bytes kept for a client that does not read; beyond, it is closed.
    public static let maxOutput = 4 << 20
    /// Most lines read ahead of handling per client; the rest wait in the socket (the client's
    /// writes then wait: its own pace, nobody else's).
    static let maxPending = 64
    /// Most lines of one client handled per pass of the loop: four clients pipelining `status`
    /// as fast as they can delayed another's reply by 0.9-1.4 s when each read was handled whole.
    static let linesPerTurn = 16

    /// The settings listened with.
    public let settings: MPDSettings
    /// The listening sockets (those that could be opened) and what each is, for messages.
    private(set) var listeners: [(fd: Int32, name: String)] = []
    var clients: [Int: Client] = [:]
    private var nextID = 1
    /// Connections closed unanswered because their peer was not local (`MPDPeer`).
    private(set) var refusedPeers = 0
    private let clock: () -> Double
    private let makeSession: () -> MPDSession

    /// Opens every listener of `settings`; each that cannot be opened is one line in
    /// `problems` (the rest still listen). `makeSession` makes the session of a new client.
    public init(settings: MPDSettings, clock: @escaping () -> Double = monotonicNow,
                makeSession: @escaping () -> MPDSession) {
        self.settings = settings
        self.clock = clock
        self.makeSession = makeSession
        for bind in settings.binds {
            let name = MPDSettings.isPath(bind) ? bind : (bind.contains(":") ? "[\(bind)]" : bind) + ":\(settings.port)"
            do { listeners.append((try Self.listen(bind, port: settings.port), name)) } catch {
                problems.append("mpd: cannot listen on \(name): \(error.reason ?? errnoText(error.errno))"
                                + (error.errno == EAFNOSUPPORT || error.errno == EPERM || error.errno == EACCES
                                   ? " (a systemd unit restricted to AF_UNIX needs a drop-in for TCP)" : ""))
            }
        }
    }

    /// One line per listener that could not be opened.
    public private(set) var problems: [String] = []

    /// The addresses listened on, for `diag` and the log.
    public var listening: [String] { listeners.map(\.name) }

    deinit {
        for client in clients.values { close(client.fd) }
        for l in listeners {
            close(l.fd)
            if MPDSettings.isPath(l.name) { unlink(cPath(l.name)) }
        }
    }

    private static func listen(_ bind: String, port: Int) throws(SystemError) -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        if MPDSettings.isPath(bind) {
            // A stale socket file from an earlier run is replaced; a live one is not stolen, and
            // anything that is not a socket is not deleted.
            try UnixSocket.clearStale(bind)
            let fd = Int32(try sys("socket", bind) { Int(socket(AF_UNIX, flags, 0)) })
            var addr = UnixSocket.address(bind)
            return try finish(fd, bind) { withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } } }
        }
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        if inet_pton(AF_INET, bind, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            let fd = Int32(try sys("socket", bind) { Int(socket(AF_INET, flags, 0)) })
            return try finish(fd, bind) { withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } }
        }
        guard inet_pton(AF_INET6, bind, &v6.sin6_addr) == 1 else { throw SystemError(call: "bind", subject: bind, errno: EINVAL) }
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = in_port_t(UInt16(port).bigEndian)
        let fd = Int32(try sys("socket", bind) { Int(socket(AF_INET6, flags, 0)) })
        // "::" serves IPv6 only: "0.0.0.0" is listed separately when IPv4 is wanted too.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        return try finish(fd, bind) { withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } } }
    }

    private static func finish(_ fd: Int32, _ bind: String, _ doBind: () -> Int32) throws(SystemError) -> Int32 {
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        do {
            try sys("bind", bind) { Int(doBind()) }
            if MPDSettings.isPath(bind) { fchmodat(AT_FDCWD, bind, 0o660, AT_SYMLINK_NOFOLLOW) }
            try sys("listen", bind) { Int(Glibc.listen(fd, 16)) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// The fds to poll: the listeners, then every client (POLLOUT while bytes wait).
    func pollFDs() -> [pollfd] {
        var fds = listeners.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        for client in clients.values.sorted(by: { $0.id < $1.id }) {
            let reading = !client.session.closing && !client.peerEnded && client.pending.count < Self.maxPending
            let events = (reading ? Int16(POLLIN) : 0) | (client.session.output.isEmpty ? 0 : Int16(POLLOUT))
            fds.append(pollfd(fd: events == 0 ? -1 : client.fd, events: events, revents: 0))
        }
        return fds
    }

    /// Services what `poll` reported for `pollFDs()`'s fds: accepts, reads lines into the
    /// sessions, sends, closes what must close.
    func service(_ fds: [pollfd]) {
        for fd in fds.dropFirst(listeners.count) where fd.revents != 0 {
            guard let client = clients.values.first(where: { $0.fd == fd.fd }) else { continue }
            if fd.revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 { read(client) }
        }
        // A few lines of each client per pass, in turn: one client's flood delays another's
        // reply by a few lines of work, not by the whole flood.
        for client in clients.values.sorted(by: { $0.id < $1.id }) where !client.closed {
            let turn = client.pending.prefix(Self.linesPerTurn)
            client.pending.removeFirst(turn.count)
            for line in turn { client.session.receive(line) }
            if client.peerEnded && client.pending.isEmpty { client.closed = true }
        }
        // Clients that hung up are closed before newcomers are counted against `maxClients`.
        sweep()
        for (i, l) in listeners.enumerated() where fds.indices.contains(i) && fds[i].revents != 0 { accept(l.fd) }
        sweep()
    }

    /// Sends what each client's session has written, closes clients that finished, overflowed or
    /// stayed silent too long. The loop calls it after anything that may have written to a session.
    func sweep() {
        let now = clock()
        for client in clients.values {
            flush(client)
            if client.session.output.count > Self.maxOutput { client.closed = true }
            if client.session.closing && client.session.output.isEmpty { client.closed = true }
            // A client in `idle` waits on purpose; any other silence ends at the timeout.
            if !client.session.isIdle && now - client.lastHeard >= settings.timeout { client.closed = true }
        }
        for client in clients.values where client.closed {
            close(client.fd)
            clients[client.id] = nil
        }
    }

    /// Every live session (to tell them about changes).
    var sessions: [MPDSession] { clients.values.filter { !$0.closed }.map(\.session) }

    /// When the loop must come back: at once while lines wait for their turn, else when the next
    /// silent client times out; nil when none can.
    func nextDeadline() -> Double? {
        if clients.values.contains(where: { !$0.closed && !$0.pending.isEmpty }) { return clock() }
        return clients.values.filter { !$0.session.isIdle }.map { $0.lastHeard + settings.timeout }.min()
    }

    private func accept(_ listenFD: Int32) {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listenFD, $0, &length) }
            }
            if fd < 0 { return }
            // Only this machine and the local network (`MPDPeer`); others closed unanswered.
            guard MPDPeer.isLocal(peer) else {
                close(fd)
                refusedPeers += 1
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if live() >= settings.maxClients { noticeGonePeers() }
            // Clients that left still hold their fds until their lines are handled: bounded too.
            guard live() < settings.maxClients, clients.count < settings.maxClients * Self.goneFactor else {
                // As MPD does: closed without a word (a greeting would promise service).
                close(fd)
                continue
            }
            let client = Client(id: nextID, fd: fd, session: makeSession(), now: clock())
            nextID += 1
            clients[client.id] = client
            flush(client)
        }
    }

    /// How many times `maxClients` the clients may number, those that left and whose lines
    /// still wait for their turns included.
    static let goneFactor = 4

    /// Clients holding a slot: not closed, and their peer not known to have left.
    private func live() -> Int { clients.values.filter { !$0.closed && !$0.peerEnded && !$0.peerGone }.count }

    /// Marks the clients whose peer has closed its side (polled at once): clients that sent a
    /// line and left while one pass accepted a burst of newcomers held the slots the last
    /// newcomer was then refused (StuckJobTests saw it, 2 runs in 12 under load).
    private func noticeGonePeers() {
        let open = clients.values.filter { !$0.closed && !$0.peerEnded && !$0.peerGone }
        // POLLRDHUP (0x2000, which Glibc's module leaves out: it needs _GNU_SOURCE): a TCP peer's
        // FIN (POLLHUP comes only once both sides are shut).
        let rdhup: Int16 = 0x2000
        var fds = open.map { pollfd(fd: $0.fd, events: rdhup, revents: 0) }
        guard !fds.isEmpty, poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
        for (client, fd) in zip(open, fds) where fd.revents & (rdhup | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
            client.peerGone = true
        }
    }

    /// Reads what a client sent into its `pending` lines, up to `maxPending`.
    private func read(_ client: Client) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !client.session.closing && client.pending.count < Self.maxPending {
            let n = Glibc.read(client.fd, &buffer, buffer.count)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) {
                // What it sent before it went is still answered (as far as the socket takes it).
                client.peerEnded = true
                return
            }
            if n < 0 { return }
            client.lastHeard = clock()
            client.input.feed(buffer[0..<n]) { line in client.pending.append(line) }
        }
    }

    private func flush(_ client: Client) {
        while !client.session.output.isEmpty {
            let n = client.session.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { client.session.output.removeFirst(n) } else {
                if n < 0 && errno != EAGAIN && errno != EINTR { client.closed = true }
                break
            }
        }
    }
}

// SPDX-License-Identifier: MIT
import CWeb
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The web face: libmicrohttpd (CWeb) serving the assets folder and the API of docs/WEB.md. It
/// speaks to the player only through the control socket: every action is a control line the
/// core decides; the status is the player's own `status --json`. The decisions of its own (who
/// may connect, which lines need a session, the PIN's back-off) are the pure pieces beside it
/// (WebRoute, RequestGuard, ControlAccess, SessionTable, PinBackoff).
public final class WebServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var socketPath: String
        public var assets: String
        public var stateFolder: String
        /// The player's config file, which the settings page edits (nil: no settings page).
        public var configPath: String?
        /// Connections at once (each has a thread while it is open).
        public var connectionLimit: Int = 16
        /// A comment line on every event stream this often, so proxies and phones keep it.
        public var keepalive: Double = 15
        /// The first picture embedded in an audio file (TagLib's, from `jukebox web`), for covers.
        public var embeddedPicture: (@Sendable (_ path: String, _ limit: Int) -> [UInt8]?)?
        /// Uploads: the limits, and the player's own decision on a file (its decoder's refusal, nil when it plays).
        public var uploads = UploadRules.Limits()
        public var playable: (@Sendable (String) -> String?)?
        public init(socketPath: String, assets: String, stateFolder: String) {
            self.socketPath = socketPath
            self.assets = assets
            self.stateFolder = stateFolder
        }
    }

    public let options: Options
    public let hub: EventHub
    let pins: PinStore
    /// The PIN's hash the sessions were made under (`endSessionsIfThePinChanged`).
    var sessionsPinHash: String?
    let lock = Monitor()
    private let pinLock = Monitor()
    /// One settings change at a time (read, edit, write the config file).
    let settingsLock = Monitor()
    var sessions = SessionTable()
    /// The music folders, as the player lists them (covers are read only inside them).
    let musicRoots = MusicRoots()
    private var backoff = PinBackoff()
    var lastActivity = monotonicNow()
    let uploadGate = UploadGate()
    private var openStreams = 0
    private var server: OpaquePointer?
    /// This machine's name (`gethostname`): a `Host` the guard accepts besides addresses and local names.
    let machineName: String

    public init(options: Options) {
        self.options = options
        var name = [CChar](repeating: 0, count: 256)
        machineName = gethostname(&name, name.count - 1) == 0 ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : ""
        hub = EventHub(socketPath: options.socketPath)
        pins = PinStore(folder: options.stateFolder)
    }

    /// Serves on the listening socket `fd` (it becomes the server's); the error when it cannot.
    public func start(listening fd: Int32) -> String? {
        removeUploadsLeftBehind()
        hub.start()
        var error = [CChar](repeating: 0, count: 256)
        let handler: jb_web_handler = { context, request, response in
            guard let context, let request, let response else { return }
            Unmanaged<WebServer>.fromOpaque(context).takeUnretainedValue().serve(request.pointee, response)
        }
        var hooks = Self.uploadHooks
        let started = jb_web_start(fd, UInt32(options.connectionLimit), size_t(RequestGuard.bodyLimit), 60, handler, &hooks,
                                   Unmanaged.passUnretained(self).toOpaque(), &error, error.count)
        guard let started else {
            hub.stop()
            return error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
        server = started
        return nil
    }

    /// Ends every stream, closes the connections, stops.
    public func stop() {
        hub.stop()
        if let server { jb_web_stop(server) }
        server = nil
    }

    func touch() { lock.withLock { lastActivity = monotonicNow() } }

    /// Seconds since the last request, nil while an event stream is open (a page is showing) or an upload runs.
    public func idleSeconds() -> Double? {
        let uploading = uploadGate.running > 0  // an upload longer than the idle time is not cut
        return lock.withLock { openStreams > 0 || uploading ? nil : monotonicNow() - lastActivity }
    }

    // MARK: requests

    /// An answer before it goes to libmicrohttpd.
    struct Reply {
        var status: Int
        var body: String
        /// A binary body (an image), sent instead of `body`.
        var bytes: [UInt8]? = nil
        var contentType = "application/json; charset=utf-8"
        var headers: [(String, String)] = []
        var close = false
        var stream: EventStream?

        static func json(_ status: Int, _ body: String) -> Reply { Reply(status: status, body: body) }
        static func error(_ status: Int, _ message: String, _ extra: String = "") -> Reply {
            Reply(status: status, body: "{\"error\":" + JSONText.quoted(message) + extra + "}")
        }
    }

    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]

    private func serve(_ request: jb_web_request, _ response: OpaquePointer) {
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } }
        let method = text(request.method) ?? ""
        let path = text(request.url) ?? ""
        let body = request.body.map { Array(UnsafeRawBufferPointer(start: $0, count: request.body_length)) } ?? []
        lock.withLock { lastActivity = monotonicNow() }
        let incoming = Incoming(method: method, path: path, host: text(request.host), origin: text(request.origin),
                                contentType: text(request.content_type), cookie: text(request.cookie), csrf: text(request.csrf),
                                body: body, bodyTooLarge: request.body_too_large != 0, localPeer: MPDPeer.isLocal(request.peer))
        var incomingWithQuery = incoming
        incomingWithQuery.queryPath = text(request.query_path)
        incomingWithQuery.queryText = text(request.query_text)
        incomingWithQuery.ifNoneMatch = text(request.if_none_match)
        incomingWithQuery.queryFrom = text(request.query_from)
        var reply = request.sink.map(finishUpload) ?? answer(incomingWithQuery)
        reply.stream?.fd = request.fd
        jb_web_response_status(response, UInt32(reply.status))
        for (name, value) in Self.securityHeaders { jb_web_response_header(response, name, value) }
        if path.hasPrefix("/api/") && !reply.headers.contains(where: { $0.0 == "Cache-Control" }) { jb_web_response_header(response, "Cache-Control", "no-store") }
        jb_web_response_header(response, "Content-Type", reply.contentType)
        for (name, value) in reply.headers { jb_web_response_header(response, name, value) }
        if reply.close { jb_web_response_close(response) }
        if let stream = reply.stream {
            lock.withLock { openStreams += 1 }
            let reader: jb_web_stream_reader = { raw, buffer, max in
                guard let raw, let buffer else { return -1 }
                return Unmanaged<EventStream>.fromOpaque(raw).takeUnretainedValue().read(into: buffer, max: max)
            }
            let release: jb_web_stream_free = { raw in
                guard let raw else { return }
                let stream = Unmanaged<EventStream>.fromOpaque(raw).takeRetainedValue()
                stream.server?.streamEnded()
            }
            jb_web_response_stream(response, Unmanaged.passRetained(stream).toOpaque(), reader, release)
        } else {
            if method == "HEAD" { reply.body = ""; reply.bytes = reply.bytes.map { _ in [] } }
            if let bytes = reply.bytes {
                bytes.withUnsafeBytes { jb_web_response_body(response, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
            } else {
                jb_web_response_body(response, reply.body, reply.body.utf8.count)
            }
        }
    }

    fileprivate func streamEnded() {
        lock.withLock {
            openStreams -= 1
            lastActivity = monotonicNow()
        }
    }

    /// A request as the handler sees it (a value: the pure checks take it whole).
    struct Incoming {
        var method, path: String
        var host, origin, contentType, cookie, csrf: String?
        /// The query argument `path` (`/api/library?path=…`).
        var queryPath: String? = nil
        /// The query argument `q` (`/api/search?q=…`) and the If-None-Match header.
        var queryText: String? = nil
        var ifNoneMatch: String? = nil
        /// The query argument `from` (`/api/queue?from=N`: a page's first entry).
        var queryFrom: String? = nil
        var body: [UInt8]
        var bodyTooLarge: Bool
        var localPeer: Bool

        /// The `jb_session` cookie's value.
        var sessionToken: String? {
            guard let cookie else { return nil }
            for pair in cookie.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                if trimmed.hasPrefix("jb_session=") { return String(trimmed.dropFirst("jb_session=".count)) }
            }
            return nil
        }
    }

    func answer(_ request: Incoming) -> Reply {
        if let refusal = RequestGuard.check(method: request.method, localPeer: request.localPeer, host: request.host,
                                            origin: request.origin, contentType: request.contentType,
                                            bodyTooLarge: request.bodyTooLarge, machineName: machineName) {
            var reply = Reply.error(refusal.status, refusal.error)
            reply.close = refusal.close
            return reply
        }
        if request.path.hasPrefix("/api/") { endSessionsIfThePinChanged() }
        switch WebRoute.route(method: request.method, path: request.path) {
        case .asset(let name): return asset(name)
        case .notFound: return .error(404, "not found")
        case .methodNotAllowed: return .error(405, "method not allowed")
        case .status: return ask("status --json")
        case .queue: return PageQuery.from(request.queryFrom).map { ask("queue --json \($0)") } ?? PageQuery.refusal
        case .library: return PageQuery.from(request.queryFrom).map { library(request.queryPath, from: $0) } ?? PageQuery.refusal
        case .cover: return cover(request.queryPath, ifNoneMatch: request.ifNoneMatch)
        case .search: return search(request.queryText)
        case .stations: return stations()
        case .saveStations: return saveStations(request)
        case .events:
            var reply = Reply(status: 200, body: "", contentType: "text/event-stream; charset=utf-8")
            reply.headers = [("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")]
            reply.stream = EventStream(server: self, keepalive: options.keepalive)
            return reply
        case .session:
            let token = request.sessionToken
            let csrf = lock.withLock { sessions.csrf(for: token, now: monotonicNow()) }
            return .json(200, "{\"pinSet\":\(pins.hash() != nil),\"signedIn\":\(csrf != nil),\"csrf\":"
                + (csrf.map(JSONText.quoted) ?? "null") + "}")
        case .pin: return setPin(request)
        case .login: return login(request)
        case .logout:
            lock.withLock { sessions.end(request.sessionToken) }
            var reply = Reply.json(200, "{\"signedIn\":false}")
            reply.headers = [("Set-Cookie", "jb_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0")]
            return reply
        case .control: return control(request)
        case .settings: return settings(request)
        case .changeSettings: return changeSettings(request)
        case .system: return system(request)
        case .upload: return .error(400, "an upload needs a Content-Length")  // a streamed one is answered by finishUpload
        }
    }

    private func asset(_ name: String) -> Reply {
        guard let fd = try? openRegularFile(options.assets + "/" + name, noFollow: true) else { return .error(404, "not found") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= 8 << 20 {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        // Bytes as they are: an image or a font is not UTF-8.
        var reply = Reply(status: 200, body: "", bytes: bytes, contentType: WebRoute.contentType(of: name))
        reply.headers = [("Cache-Control", "no-cache")]
        return reply
    }

    /// One line to the player on a connection of its own: the answer's JSON after `ok `.
    /// `refused`: the status when the player answers `error: …` (its words as the error);
    /// `timeout`: how long the player may take (seconds).
    func ask(_ line: String, refused: Int = 502, timeout: Double = 10) -> Reply {
        guard let client = try? ControlClient(path: options.socketPath) else { return .error(502, "the player is not running") }
        guard let reply = client.request(line, timeout: timeout) else { return .error(502, "no answer from the player") }
        guard reply.hasPrefix("ok {") else {
            return reply.hasPrefix("error: ") ? .error(refused, String(reply.dropFirst(7))) : .error(502, "unexpected answer from the player")
        }
        return .json(200, String(reply.dropFirst(3)))
    }

    /// `ls --json [PATH]`: a path that would not stay one control line (a control character, a
    /// newline) or is too long for one is refused here; the player decides the rest.
    private func library(_ path: String?, from: Int) -> Reply {
        let path = path.flatMap { $0.isEmpty ? nil : $0 }
        if let path {
            guard path.utf8.count <= 900, !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return .error(400, "not a usable path")
            }
        }
        // The player's refusal (a path outside the music folders) is the client's error: 400. A
        // folder's first listing waits for the tag reader to read every file in it (to sort them;
        // later pages come from its cache): 1,000 files took over 10 s on a busy machine (a 502),
        // and an SD card is slower. As long as `add` and `load` may take.
        return ask("ls --json --from \(from)" + (path.map { " " + $0 } ?? ""), refused: 400, timeout: 60)
    }

    private struct LineBody: Decodable { var line: String }
    private struct PinBody: Decodable { var pin: String }

    /// The body decoded, nil when it is not that object. Bytes Swift 6.0's JSONDecoder traps on
    /// (a NUL or a lone surrogate in a key, bad UTF-8) are refused first, as for the config file.
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) -> T? {
        guard JSONText.problem(body) == nil else { return nil }
        return try? JSONDecoder().decode(type, from: Data(body))
    }

    private func control(_ request: Incoming) -> Reply {
        guard let body = decode(LineBody.self, request.body) else {
            return .error(400, "the body must be {\"line\":\"…\"}")
        }
        let line = body.line
        guard line.utf8.count <= ControlCommand.maxLineLength,
              !line.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return .error(400, "a control line is one line of at most \(ControlCommand.maxLineLength) bytes")
        }
        let command: ControlCommand
        switch ControlCommand.parse(line, seed: 0) {
        case .failure(let error): return .error(400, error.message)
        case .success(let parsed): command = parsed
        }
        switch ControlAccess.of(command) {
        case .refused:
            return .error(403, "this command is not available from the web")
        case .session:
            switch lock.withLock({ sessions.check(cookie: request.sessionToken, csrfHeader: request.csrf, now: monotonicNow()) }) {
            case .allowed: break
            case .signInFirst: return .error(401, "sign in first")
            case .badCSRF: return .error(403, "bad CSRF token")
            }
        case .open:
            break
        }
        guard let client = try? ControlClient(path: options.socketPath) else { return .error(502, "the player is not running") }
        // `add` and `load` wait for the tag reader and a save: longer than a button.
        guard let reply = client.request(line, timeout: 60) else { return .error(502, "no answer from the player") }
        let last = reply.split(separator: "\n").last.map(String.init) ?? reply
        if last.hasPrefix("error: ") { return .error(400, String(last.dropFirst(7))) }
        return .json(200, "{\"reply\":" + JSONText.quoted(reply) + "}")
    }

    private func signIn(_ what: String = "") -> Reply {
        let token = randomToken(), csrf = randomToken()
        lock.withLock { sessions.create(token: token, csrf: csrf, now: monotonicNow()) }
        var reply = Reply.json(200, "{\"signedIn\":true,\"csrf\":" + JSONText.quoted(csrf) + "}")
        reply.headers = [("Set-Cookie", "jb_session=\(token); HttpOnly; SameSite=Strict; Path=/")]
        return reply
    }

    /// The page never sets a PIN: whoever reached the page first would own the box. It is set on
    /// the box (`jukebox web-pin`), which proves a shell there (docs/WEB.md "Security").
    private func setPin(_ request: Incoming) -> Reply {
        .error(403, WebServer.setPinOnTheBox)
    }

    /// What the page says while no PIN is set.
    public static let setPinOnTheBox = "set the PIN on the box: sudo jukebox web-pin --config /etc/jukebox/config.json"

    private func login(_ request: Incoming) -> Reply {
        guard let body = decode(PinBody.self, request.body) else {
            return .error(400, "the body must be {\"pin\":\"…\"}")
        }
        // The slow hash runs one at a time, and the back-off is checked and counted inside.
        return pinLock.withLock {
            if let wait = lock.withLock({ backoff.wait(now: monotonicNow()) }) {
                var reply = Reply.error(429, "too many wrong PINs: wait", ",\"retryAfter\":\(wait)")
                reply.headers = [("Retry-After", "\(wait)")]
                return reply
            }
            guard pins.hash() != nil else { return .error(409, "no PIN is set yet") }
            guard pins.check(body.pin) else {
                let wait = lock.withLock { backoff.failed(now: monotonicNow()) }
                return .error(403, "wrong PIN", ",\"retryAfter\":\(wait)")
            }
            lock.withLock { backoff.succeeded() }
            return signIn()
        }
    }
}

/// One `/api/events` stream: reads the hub's generations on the connection's own thread.
final class EventStream: @unchecked Sendable {
    weak var server: WebServer?
    private let hub: EventHub
    private let keepalive: Double
    private var generation = -1
    private var sentQueue: String?
    private var wasOffline = false
    private var pending: [UInt8] = []
    /// The connection's socket, to notice a page that went away while nothing is sent.
    var fd: Int32 = -1

    init(server: WebServer, keepalive: Double) {
        self.server = server
        hub = server.hub
        self.keepalive = keepalive
    }

    /// Bytes for libmicrohttpd: what is pending, else waits (bounded by the keepalive) for the
    /// next generation; -1 ends the stream (the server stops).
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        if pending.isEmpty {
            // Waits in slices of a second, looking at the connection in between: a closed page
            // frees its thread (and lets an idle process exit) at once, not at the next keepalive.
            // The first read waits (up to 2 s) for the hub's first word, so a page opened as the
            // process starts is not told "offline" before the hub has even asked the player.
            let after = Swift.max(generation, 0)
            let deadline = monotonicNow() + (generation < 0 ? 2 : keepalive)
            var snapshot = hub.wait(after: after, timeout: min(1, deadline - monotonicNow()))
            while snapshot.generation == after && !snapshot.stopping && monotonicNow() < deadline {
                if jb_web_peer_closed(fd) != 0 { return -1 }
                snapshot = hub.wait(after: after, timeout: min(1, deadline - monotonicNow()))
            }
            if snapshot.stopping || jb_web_peer_closed(fd) != 0 { return -1 }
            pending = Array(Self.frames(snapshot, after: generation, sentQueue: &sentQueue, wasOffline: &wasOffline).utf8)
            generation = snapshot.generation
        }
        let n = min(max, pending.count)
        pending.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: n) }
        pending.removeFirst(n)
        return n
    }

    /// The event-stream text for `snapshot` (pure): `offline` once when the player went away,
    /// `status` on every generation, `queue` when it differs from the last sent; a keepalive
    /// comment when nothing changed.
    static func frames(_ snapshot: EventHub.Snapshot, after generation: Int, sentQueue: inout String?, wasOffline: inout Bool) -> String {
        guard snapshot.generation != generation else { return ": keepalive\n\n" }
        if snapshot.offline {
            defer { wasOffline = true }
            return wasOffline ? ": keepalive\n\n" : "event: offline\ndata: {}\n\n"
        }
        wasOffline = false
        var text = ""
        if let status = snapshot.status { text += "event: status\ndata: " + status + "\n\n" }
        if let queue = snapshot.queue, queue != sentQueue {
            text += "event: queue\ndata: " + queue + "\n\n"
            sentQueue = queue
        }
        return text.isEmpty ? ": keepalive\n\n" : text
    }
}

// SPDX-License-Identifier: MIT
import CMosquitto
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The MQTT face (the config's `"mqtt"`): a bridge between a broker and the control socket.
///
/// It is a client of the player's own control socket, so it runs exactly the socket's control
/// language and nothing the socket would not, and the loop never waits for it. It has two
/// threads: `jukebox-mqttnet` drives libmosquitto (`mosquitto_loop` in 0.2 s slices: connect,
/// keepalive, reads, writes; after a failed attempt or a lost connection it waits 1 s, doubling
/// to 60 s, before the next, and `close()` interrupts that wait), and `jukebox-mqtt` is the
/// socket client (`status --json` once a second and after every event, the `events --json` stream,
/// commands one at a time). The loop sees one more socket client, whose replies the socket
/// already bounds (64 KiB).
///
/// Retained under `topic`: `availability` (`online`; `offline` is the broker's last will),
/// `phase`, `title`, `artist`, `album`, `file`, `position`, `duration`, `volume`, `shuffle`,
/// `repeat`, `queue`, `message`, `chapter` (an audiobook's chapter title, empty without) and
/// `state` (all of them as one JSON object, the chapter as index, count and title), `sleep` (the
/// sleep timer's select: `off`, the minutes asked, `track`, `chapter`, `folder`), `sleep_left`
/// (whole minutes left, rounded up; 0 without a timer or while unknown), `battery` (whole percent)
/// and `battery_charging` (`ON`, `OFF`; both empty without a reading), `headphones` (`ON` while
/// headphones are in the jack, `OFF`; empty without a jack), `listening_left` (the parental daily
/// limit's whole minutes of listening left today, rounded up; empty without a limit), `speed` (the
/// playback speed of the current track, `1`, `1.25`; empty with nothing current), `output` (where
/// the sound is heard: `card`, `headphones`, `bluetooth`), and Home
/// Assistant's discovery configs (`MQTTDiscovery`). Not retained: `event` (each line of the
/// `events` stream, without its time), `card` (card ids), `button/<name>` (gestures), `reply`.
/// Commands: `topic/cmd/<command>` with the arguments as payload; `cmd/playlist NAME` loads a
/// playlist the select offers.
///
/// Nothing waits for the broker: the bridge hands libmosquitto at most `maxQueued` messages
/// that are not yet written to the socket; beyond that, events are dropped (counted) and the
/// retained topics keep only their newest value, published once the broker reads again.
public final class MQTTBridge: @unchecked Sendable {
    /// Payloads above this many bytes are refused (a control line is at most 1024 bytes).
    public static let maxPayload = 1000
    /// Commands waiting to run; more are answered `error: busy`.
    public static let maxPending = 16
    /// Messages handed to libmosquitto and not yet written to the broker's socket, at most.
    public static let maxQueued = 100
    /// The MQTT socket's send buffer (SO_SNDBUF), in bytes: ample for MQTT's small messages (a
    /// burst beyond it, the discovery configs at a connect, waits in libmosquitto's queue).
    static let socketBuffer: Int32 = 16 << 10
    /// Playlists offered by the select, at most (the first by name).
    public static let maxPlaylists = 100
    /// Seconds between two looks at the playlist folders.
    static let playlistRescan = 30.0
    /// Control words the bridge does not pass on: `events` belongs to the bridge's own stream, a
    /// `yield` and `source` live as long as their connection (MQTT has none to tie them to).
    static let refused: Set<String> = ["events", "yield", "source"]
    /// The retained state topics, under `topic`.
    public static let stateTopics = ["availability", "phase", "title", "artist", "album", "file", "position", "duration",
                                     "volume", "shuffle", "repeat", "queue", "message", "chapter", "state", "sleep", "sleep_left",
                                     "battery", "battery_charging", "headphones", "listening_left", "speed",
                                     "output"]

    /// What the player tells the bridge besides the settings.
    public struct Context: Sendable {
        /// The control socket.
        public var socketPath: String
        /// The host name (the default topic is `jukebox/<hostname>`).
        public var hostname = MQTTBridge.hostname()
        /// The volume limits (Home Assistant's number).
        public var volumeRange: ClosedRange<Int> = 0...100
        /// The buttons wired on the box, with their bindings: Home Assistant's device triggers.
        public var buttons: [Button] = []
        /// The gestures bound to each button.
        public var bindings: [Button: ButtonBinding] = ButtonBinding.defaults
        /// Folders whose M3U/M3U8 playlists the playlist select offers (top level only).
        public var playlistFolders: [String] = []
        /// What was announced, so that it can be taken away (`MQTTRecord`); nil: not recorded.
        public var record: MQTTRecord?
        /// The config file, checked like a password file when it holds the password.
        public var configPath: String?
        /// The player's version.
        public var version = "jukebox"
        /// Whether a battery monitor is configured (Home Assistant's battery sensors).
        public var battery = false
        /// Whether a headphone jack is watched (Home Assistant's headphones sensor).
        public var headphones = false

        /// A context for the socket at `socketPath`, the rest as defaults.
        public init(socketPath: String) { self.socketPath = socketPath }
    }

    let settings: MQTTSettings
    let context: Context
    /// The topic prefix (`jukebox/<hostname>` by default).
    public let topic: String
    let port: Int
    let log: @Sendable (LogLevel, String) -> Void

    private var mosq: OpaquePointer?
    private let monitor = Monitor()
    // Under `monitor`: set by libmosquitto's thread, read by the bridge's.
    private var connected = false
    private var everConnected = false
    private var republish = false
    private var pending: [(command: String, arguments: String)] = []
    private var stopping = false
    private var queued = 0
    private var counters = Counters()
    private var netStopping = false
    private var netDone = false
    private var thread: NativeThread?
    private var net: NativeThread?
    private var forgetter: MQTTForgetter?
    private var password: String?

    // The bridge thread's own.
    /// What the broker should hold: retained topic → payload ("" deletes it).
    private var desired: [String: String] = [:]
    /// What was handed to libmosquitto since the last connect.
    private var sent: [String: String] = [:]
    /// Retained topics recorded earlier for this broker that this run does not publish: emptied.
    private var stale: Set<String> = []
    private var recorded: Set<String>?
    private var positions: PositionPublisher
    private var statusClient: ControlClient?
    private var eventClient: ControlClient?
    private var lastStatusAt = -Double.infinity
    private var socketProblemLogged = false
    private var lastProblem = ""
    private var playlists: [(name: String, path: String)] = []
    private var playlistsScannedAt = -Double.infinity
    private var discoveryTopics: Set<String> = []
    /// Whether the listening-left sensor is announced: while the status has a daily limit, which
    /// a `reload` (the web's Settings page) may add or take away.
    private var listeningAnnounced = false

    /// What the bridge has done, for tests and `diag`.
    public struct Counters: Equatable, Sendable {
        /// Connections made (the first and every reconnect).
        public var connects = 0
        /// Non-retained messages dropped because the broker did not read.
        public var dropped = 0
        /// Messages handed to libmosquitto.
        public var handed = 0
        /// Statuses read from the player.
        public var statusReads = 0
    }

    /// A bridge for `settings`; `log` is called from the bridge's threads (the caller routes it to
    /// the loop).
    public init(settings: MQTTSettings, context: Context, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.settings = settings
        self.context = context
        let host = context.hostname.isEmpty ? "jukebox" : context.hostname
        topic = settings.topic ?? "jukebox/\(host)"
        port = settings.port ?? (settings.tls == nil ? 1883 : 8883)
        self.log = log
        positions = PositionPublisher(interval: settings.positionInterval ?? 10)
    }

    /// This machine's host name ("" when unknown).
    public static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The counters so far.
    public var stats: Counters { monitor.withLock { counters } }

    /// Whether the broker has acknowledged the connection (and it has not been lost since).
    public var isConnected: Bool { monitor.withLock { connected } }

    /// Starts libmosquitto's thread and the bridge's; returns the problem when the settings cannot
    /// be applied (a secret file others can read, a TLS file missing…). A broker that is down is
    /// no problem: it is retried.
    public func start() -> String? {
        if let problem = MQTTClientSetup.libraryProblem { return problem }
        let problems = MQTTClientSetup.fileProblems(settings, configPath: context.configPath)
        if !problems.isEmpty { return problems.joined(separator: "; ") }
        password = settings.password
        if let file = settings.passwordFile {
            switch MQTTClientSetup.password(from: file) {
            case .success(let p): password = p
            case .failure(let problem): return problem.text
            }
        }
        guard let m = jb_mosquitto_new("jukebox-\(MQTTDiscovery.nodeID(topic))", true, Unmanaged.passUnretained(self).toOpaque()) else {
            return "mqtt: cannot create a client: \(errnoText(errno))"
        }
        mosq = m
        // Publishes from the bridge's thread only queue; the network thread writes them.
        _ = jb_mosquitto_threaded_set(m, true)
        let will = Array("offline".utf8)
        let rc = jb_mosquitto_will_set(m, topic + "/availability", Int32(will.count), will, 1, true)
        if rc != MOSQ_ERR_SUCCESS.rawValue { return "mqtt: " + String(cString: jb_mosquitto_strerror(rc)) }
        if let problem = MQTTClientSetup.configure(m, username: settings.username, password: password, tls: settings.tls) { return problem }
        jb_mosquitto_connect_callback_set(m) { _, me, rc in MQTTBridge.from(me).connectedCallback(rc) }
        jb_mosquitto_disconnect_callback_set(m) { _, me, rc in MQTTBridge.from(me).disconnectedCallback(rc) }
        jb_mosquitto_publish_callback_set(m) { _, me, _ in MQTTBridge.from(me).writtenCallback() }
        jb_mosquitto_message_callback_set(m) { _, me, message in
            guard let message else { return }
            MQTTBridge.from(me).messageCallback(message.pointee)
        }
        // What earlier runs announced: on this broker, what this run no longer publishes is
        // emptied once connected; on another broker (the config changed), all of it, by the forgetter.
        if let record = context.record {
            let mine = MQTTAnnouncement(settings, port: port, topic: topic, retained: [])
            let earlier = record.load()
            stale = Set(earlier.filter { $0.sameBroker(mine) }.flatMap(\.retained))
            if earlier.contains(where: { !$0.sameBroker(mine) }) {
                forgetter = MQTTForgetter(record: record, only: { !$0.sameBroker(mine) }, log: log)
            }
        }
        net = NativeThread(name: "jukebox-mqttnet") { [self] in network() }
        thread = NativeThread(name: "jukebox-mqtt") { [self] in run() }
        return nil
    }

    /// Says `offline`, disconnects and joins the threads, within about two seconds even when the
    /// broker has stopped reading. A network thread still held after 3 s (a name lookup that
    /// hangs: libmosquitto resolves the host on it) is left behind with its client, for the
    /// process's exit to end, so the player's stop never waits for DNS.
    public func close() {
        monitor.withLock { stopping = true; monitor.broadcast() }
        thread?.join()
        thread = nil
        forgetter?.close()
        forgetter = nil
        let ended = monitor.withLock {
            netStopping = true
            monitor.broadcast()
            let deadline = monotonicNow() + 3
            while !netDone, net != nil, monotonicNow() < deadline { monitor.wait(seconds: 0.1) }
            return netDone || net == nil
        }
        if ended {
            net?.join()
            if let m = mosq { jb_mosquitto_destroy(m) }
        } else {
            net?.detach()
            log(.warning, "mqtt: the connection to \(settings.host) did not end within 3 s (a name lookup?); left to the exit")
        }
        net = nil
        mosq = nil
    }

    deinit { close() }

    private static func from(_ pointer: UnsafeMutableRawPointer?) -> MQTTBridge {
        Unmanaged<MQTTBridge>.fromOpaque(pointer!).takeUnretainedValue()
    }

    // MARK: the network thread

    /// Drives libmosquitto: connects, reconnects after a pause (1 s, doubling to 60 s; back to 1 s
    /// once connected), and at the end says `offline` and disconnects, for at most 2 s.
    private func network() {
        defer { monitor.withLock { netDone = true; monitor.broadcast() } }
        guard let m = mosq else { return }
        var pause = 1.0
        var retryAt = 0.0
        var socketOpen = false
        var first = true
        var lastProblem = ""
        func failed(_ problem: String) {
            if problem != lastProblem { log(.warning, "mqtt: \(settings.host):\(port): \(problem); retrying (after 1 s, doubling to 60 s)") }
            lastProblem = problem
            retryAt = monotonicNow() + pause
            pause = min(pause * 2, 60)
            socketOpen = false
        }
        while true {
            let (stop, connectedNow) = monitor.withLock { (netStopping, connected) }
            if stop { break }
            if connectedNow {
                pause = 1
                lastProblem = ""
            }
            if !socketOpen {
                let wait = retryAt - monotonicNow()
                if wait > 0 {
                    monitor.withLock { if !netStopping { monitor.wait(seconds: wait) } }
                    continue
                }
                // Asynchronous: the TCP connect and the TLS handshake go on in the loop below.
                let rc = first ? jb_mosquitto_connect_async(m, settings.host, Int32(port), 30) : jb_mosquitto_reconnect_async(m)
                first = false
                guard rc == MOSQ_ERR_SUCCESS.rawValue else { failed(MQTTForget.reason(rc)); continue }
                socketOpen = true
            }
            let rc = jb_mosquitto_loop(m, 200, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue { failed(MQTTForget.reason(rc)) }
        }
        guard socketOpen else { return }
        if isConnected {
            _ = publishRaw(topic + "/availability", "offline", retain: true)
            jb_mosquitto_disconnect(m)
        }
        let deadline = monotonicNow() + 2
        while isConnected, monotonicNow() < deadline {
            if jb_mosquitto_loop(m, 100, 1) != MOSQ_ERR_SUCCESS.rawValue { break }
        }
    }

    // MARK: libmosquitto's callbacks (on the network thread)

    private func connectedCallback(_ rc: Int32) {
        guard rc == 0 else {
            log(.warning, "mqtt: \(settings.host):\(port) refused the connection: " + String(cString: jb_mosquitto_connack_string(rc)))
            return
        }
        _ = jb_mosquitto_subscribe(mosq, nil, topic + "/cmd/+", 1)
        // What waits in the kernel for a broker that stops reading is bounded too (the kernel
        // doubles this; left alone, it grows the buffer up to tcp_wmem's 4 MiB).
        var bytes = Self.socketBuffer
        _ = setsockopt(jb_mosquitto_socket(mosq), SOL_SOCKET, SO_SNDBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        let first = monitor.withLock {
            // libmosquitto dropped what was queued for the old connection.
            queued = 0
            connected = true
            republish = true
            counters.connects += 1
            defer { everConnected = true }
            monitor.broadcast()
            return !everConnected
        }
        log(first ? .info : .warning, "mqtt: connected to \(settings.host):\(port)")
    }

    private func disconnectedCallback(_ rc: Int32) {
        // The network thread's `mosquitto_loop` returns the reason and says it.
        monitor.withLock { connected = false; monitor.broadcast() }
    }

    private func writtenCallback() {
        monitor.withLock { queued = max(0, queued - 1) }
    }

    private func messageCallback(_ message: mosquitto_message) {
        guard let name = message.topic.map({ String(cString: $0) }), name.hasPrefix(topic + "/cmd/") else { return }
        let command = String(name.dropFirst(topic.count + 5))
        var arguments = ""
        if message.payloadlen > 0, let payload = message.payload {
            guard message.payloadlen <= Self.maxPayload else {
                send("reply", "error: payload above \(Self.maxPayload) bytes")
                return
            }
            let bytes = UnsafeRawBufferPointer(start: payload, count: Int(message.payloadlen))
            arguments = String(decoding: bytes, as: UTF8.self)
        }
        let accepted = monitor.withLock {
            guard pending.count < Self.maxPending else { return false }
            pending.append((command, arguments))
            monitor.broadcast()
            return true
        }
        if !accepted { send("reply", "error: busy") }
    }

    // MARK: the bridge's thread

    private func run() {
        desired[topic + "/availability"] = "online"
        while true {
            let (stop, isConnected, again, commands) = monitor.withLock {
                // With an event stream, its read below is the wait.
                if !stopping, pending.isEmpty, !republish, eventClient == nil { monitor.wait(seconds: 0.25) }
                let work = pending
                pending = []
                let again = republish
                republish = false
                return (stopping, connected, again, work)
            }
            if stop { return }
            if again {
                sent = [:]
                positions.forget()
            }
            connectSocket()
            let now = monotonicNow()
            if now - playlistsScannedAt >= Self.playlistRescan { scanPlaylists(now: now) }
            var changed = again || !commands.isEmpty
            for (command, arguments) in commands { run(command, arguments) }
            if let client = eventClient {
                var lines = 0
                while lines < 64, let line = client.readLine(timeout: lines == 0 && !changed ? 0.1 : 0.001) {
                    lines += 1
                    event(line)
                    changed = true
                }
                if client.isClosed { eventClient = nil }
            }
            let later = monotonicNow()
            if changed || later - lastStatusAt >= 1 {
                lastStatusAt = later
                refreshStatus(now: later)
            }
            if isConnected { flush() }
        }
    }

    /// Opens the two socket connections when missing: one for requests, one streaming `events`.
    private func connectSocket() {
        if statusClient == nil {
            do {
                statusClient = try ControlClient(path: context.socketPath)
                socketProblemLogged = false
            } catch {
                if !socketProblemLogged { log(.warning, "mqtt: no control socket at \(context.socketPath): \(error)") }
                socketProblemLogged = true
                return
            }
        }
        if eventClient == nil, let client = try? ControlClient(path: context.socketPath) {
            if ask(client, "events --json", timeout: 5)?.hasPrefix("ok") == true { eventClient = client }
        }
    }

    private func run(_ command: String, _ arguments: String) {
        let word = DisplayText.inert(command)
        guard !word.isEmpty, word.utf8.count <= 32, word.allSatisfy({ $0.isLetter || $0.isNumber }) else {
            send("reply", "error: not a command: \(word)")
            return
        }
        guard !Self.refused.contains(word.lowercased()) else {
            send("reply", "error: \(word) is not available over MQTT")
            return
        }
        var line = arguments.isEmpty ? word : word + " " + arguments
        if word.lowercased() == "playlist" {
            guard let path = playlists.first(where: { $0.name == arguments })?.path else {
                send("reply", "error: no playlist \"\(DisplayText.inert(arguments))\" (see the select's options)")
                return
            }
            line = "load " + path
        }
        // Control characters (a newline would start a second command) become inert; the escaped
        // bytes of a playlist's name that is not UTF-8 stay (they name the file).
        line = DisplayText.lineSafe(line)
        guard let client = statusClient else { send("reply", "error: the player's control socket is not open"); return }
        if let answer = ask(client, line, timeout: 30) {
            send("reply", answer)
        } else {
            statusClient = nil
            send("reply", "error: no reply from the player")
        }
    }

    /// `ControlClient.request`, cut short by `close()`: a player that has stopped reading (its
    /// loop ended, the socket not yet closed) must not hold the bridge, and so the exit, for the
    /// whole timeout.
    private func ask(_ client: ControlClient, _ line: String, timeout: Double) -> String? {
        guard client.send(line) else { return nil }
        let deadline = monotonicNow() + timeout
        var lines: [String] = []
        while monotonicNow() < deadline, !client.isClosed, !monitor.withLock({ stopping }) {
            guard let got = client.readLine(timeout: 0.1) else { continue }
            lines.append(got)
            // Continuation lines start with two spaces; the last is `ok …` or `error: …`.
            if !got.hasPrefix("  ") { return lines.joined(separator: "\n") }
        }
        return nil
    }

    /// One line of the `events --json` stream, read as the player wrote it (`EventLine`: the card
    /// and the gesture are fields, never words parsed out of `what`, whose wording is for people).
    private func event(_ line: String) {
        guard line.hasPrefix("event {") else {
            if line.hasPrefix("ok events ended") || line.hasPrefix("error") { eventClient = nil }
            return
        }
        guard let event = EventLine(json: line) else { return }
        for (name, payload) in Self.messages(for: event) { send(name, payload) }
    }

    /// The messages (topic under `topic`, payload) an event is published as: `event` (what, and
    /// the phase after it), `card` for a card, `button/<name>` for a gesture.
    static func messages(for event: EventLine) -> [(name: String, payload: String)] {
        var out = [("event", event.what + (event.phase.isEmpty ? "" : " → " + event.phase))]
        if let card = event.card { out.append(("card", card)) }
        if let g = event.gesture { out.append(("button/" + g.button.rawValue, g.kind.rawValue)) }
        return out
    }

    private func refreshStatus(now: Double) {
        guard let client = statusClient else { return }
        guard let answer = ask(client, "status --json", timeout: 10) else {
            // The player went away (restarted?): both connections are opened again.
            statusClient = nil
            eventClient = nil
            return
        }
        let status: PlayerStatusJSON
        do {
            guard answer.hasPrefix("ok {") else { throw MQTTProblem(text: answer) }
            status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(answer.dropFirst(3).utf8))
        } catch {
            let text = "mqtt: unexpected status from the player: \(error)"
            if text != lastProblem { log(.warning, text) }
            lastProblem = text
            return
        }
        monitor.withLock { counters.statusReads += 1 }
        let file = status.path ?? ""
        set("phase", status.phase)
        set("title", status.title ?? "")
        set("artist", status.artist ?? "")
        set("album", status.album ?? "")
        set("file", file)
        set("duration", status.duration.map(Self.seconds) ?? "")
        set("volume", String(status.volume))
        set("shuffle", status.shuffle ? "on" : "off")
        set("repeat", status.repeat)
        set("queue", String(status.count))
        set("message", status.message ?? "")
        set("chapter", status.chapter?.title ?? "")
        set("sleep", Self.sleepOption(status.sleep))
        set("sleep_left", String(status.sleep?.left.map { Int((Double($0) / 60).rounded(.up)) } ?? 0))
        let battery = Self.battery(status.battery)
        set("battery", battery.percent)
        set("battery_charging", battery.charging)
        set("headphones", Self.headphones(status.headphones))
        set("listening_left", Self.listeningLeft(status.parental))
        set("speed", Self.speed(status.speed))
        set("output", Self.output(status.output))
        if (status.parental?.limitLeft != nil) != listeningAnnounced {
            listeningAnnounced.toggle()
            announce()
        }
        // Position: when `PositionPublisher` says (every `positionInterval` while it runs as expected,
        // at once after a jump).
        let position = status.position
        if positions.observe(position, file: file, phase: status.phase, running: ShownPhase(rawValue: status.phase) == .playing, now: now) {
            set("position", position.map(Self.seconds) ?? "")
        }
        set("state", Self.state(status, published: position == nil ? nil : positions.published).text)
    }

    /// The `state` topic's object: the status's fields, with the position last published (so it
    /// does not change every second); seconds to the tenth, as the topics of their own.
    static func state(_ status: PlayerStatusJSON, published: Double?) -> JSONValue {
        func seconds(_ v: Double?) -> JSONValue { v.flatMap { $0.isFinite ? .number(($0 * 10).rounded() / 10) : nil } ?? .null }
        // The current track's playback speed; null with nothing current. Apart: Swift 6.0.3 gives
        // up on a long literal with closures in it.
        let speed: JSONValue = status.speed.flatMap { $0.isFinite ? JSONValue.number($0) : nil } ?? .null
        return .fields([
            .init("phase", .string(status.phase)), .init("title", .orNull(status.title)), .init("artist", .orNull(status.artist)),
            .init("album", .orNull(status.album)), .init("file", .orNull(status.path)), .init("position", seconds(published)),
            .init("duration", seconds(status.duration)), .init("volume", .integer(status.volume)), .init("shuffle", .bool(status.shuffle)),
            .init("repeat", .string(status.repeat)), .init("queue", .integer(status.count)), .init("message", .orNull(status.message)),
            // An audiobook's chapter playing: its number from 1, of how many, its title; null without chapters.
            .init("chapter", status.chapter.map { c in
                .fields([.init("index", .integer(c.index)), .init("count", .integer(c.count)), .init("title", .string(c.title))])
            } ?? .null),
            .init("speed", speed),
        ])
    }

    /// The battery topics' values: whole percent, `ON`/`OFF`; empty (no retained value) for what the
    /// reading does not say.
    static func battery(_ battery: PlayerStatusJSON.BatteryStatus?) -> (percent: String, charging: String) {
        let percent = battery?.percent.flatMap { $0.isFinite ? String(Int($0.rounded())) : nil } ?? ""
        return (percent, battery?.charging.map { $0 ? "ON" : "OFF" } ?? "")
    }

    /// The headphones topic's value: `ON` while they are in, `OFF`; empty (no retained value) without a jack.
    static func headphones(_ plugged: Bool?) -> String { plugged.map { $0 ? "ON" : "OFF" } ?? "" }

    /// The output topic's value: `card`, `headphones` or `bluetooth`; empty (no retained value) for
    /// an older player or a word it does not know.
    static func output(_ output: String?) -> String {
        output.flatMap { ["card", "headphones", "bluetooth"].contains($0) ? $0 : nil } ?? ""
    }

    /// The listening-left topic's value: whole minutes, rounded up; empty (no retained value)
    /// without a daily limit.
    static func listeningLeft(_ parental: PlayerStatusJSON.ParentalStatus?) -> String {
        parental?.limitLeft.map { String(max(0, $0)) } ?? ""
    }

    /// The speed topic's value: `1`, `1.25` (as the status line says it); empty (no retained
    /// value) with nothing current.
    static func speed(_ speed: Double?) -> String {
        guard let speed, speed.isFinite else { return "" }
        return Speed.text(speed)
    }

    /// The sleep select's state: `off`, the minutes asked (`30`), or the end (`track`).
    static func sleepOption(_ sleep: PlayerStatusJSON.SleepStatus?) -> String {
        guard let sleep else { return "off" }
        guard let minutes = sleep.minutes else { return sleep.mode }
        return minutes == minutes.rounded() ? String(Int(minutes)) : String(minutes)
    }

    static func seconds(_ value: Double) -> String {
        value.isFinite ? String((value * 10).rounded() / 10) : ""
    }

    /// The retained value of `topic/name` from now on (sent by `flush`).
    private func set(_ name: String, _ value: String) {
        desired[topic + "/" + name] = value
    }

    // MARK: playlists and discovery

    private func scanPlaylists(now: Double) {
        playlistsScannedAt = now
        var found: [(name: String, path: String)] = []
        var names = Set<String>()
        for folder in context.playlistFolders {
            guard let entries = try? directoryEntries(folder) else { continue }
            for entry in entries.sorted() where Library.isPlaylist(entry) && !entry.hasPrefix(".") {
                let name = entry.split(separator: ".", omittingEmptySubsequences: false).dropLast().joined(separator: ".")
                if !name.isEmpty, names.insert(name).inserted { found.append((name, folder + "/" + entry)) }
            }
        }
        found.sort { $0.name < $1.name }
        let kept = Array(found.prefix(Self.maxPlaylists))
        let changed = kept.map { $0.name } != playlists.map { $0.name } || discoveryTopics.isEmpty
        playlists = kept
        if changed { announce() }
    }

    /// Puts the discovery configs among the retained topics; those no longer wanted are emptied.
    private func announce() {
        let discovery = MQTTDiscovery(prefix: settings.discoveryPrefix ?? "homeassistant", topic: topic, version: context.version,
                                      volumeRange: context.volumeRange, playlists: playlists.map { $0.name },
                                      gestures: MQTTDiscovery.gestures(buttons: context.buttons, bindings: context.bindings),
                                      battery: context.battery, headphones: context.headphones,
                                      listeningLimit: listeningAnnounced)
        let configs = discovery.configs()
        let now = Set(configs.map { $0.topic })
        for gone in discoveryTopics.subtracting(now) { desired[gone] = "" }
        for (name, payload) in configs { desired[name] = payload }
        discoveryTopics = now
    }

    // MARK: publishing

    /// Hands libmosquitto every retained topic whose value it has not been given since the last
    /// connect: availability first, then the discovery configs, then the state (so Home
    /// Assistant knows the entities when their state arrives). Stops when the queue is full.
    private func flush() {
        if !stale.isEmpty {
            for name in stale where desired[name] == nil { desired[name] = "" }
            stale = []
        }
        let availability = topic + "/availability"
        let order = desired.keys.sorted { a, b in
            func rank(_ t: String) -> Int { t == availability ? 0 : discoveryTopics.contains(t) ? 1 : 2 }
            return (rank(a), a) < (rank(b), b)
        }
        for name in order {
            guard let value = desired[name], sent[name] != value else { continue }
            guard publishRaw(name, value, retain: true) else { return }
            sent[name] = value
        }
        noteAnnounced()
    }

    /// Keeps the record of what this broker holds from this box current (once everything wanted
    /// was handed over).
    private func noteAnnounced() {
        guard let record = context.record else { return }
        let retained = Set(desired.keys)
        guard retained != recorded else { return }
        let mine = MQTTAnnouncement(settings, port: port, topic: topic, retained: retained.sorted())
        if let problem = record.update({ list in
            list.removeAll { $0.sameBroker(mine) }
            list.append(mine)
        }) {
            if problem != lastProblem { log(.warning, problem) }
            lastProblem = problem
            return
        }
        recorded = retained
    }

    /// Publishes a non-retained message under `topic/name`; dropped (counted) when the broker is
    /// not connected or not reading.
    private func send(_ name: String, _ value: String) {
        if !publishRaw(topic + "/" + name, value, retain: false) { monitor.withLock { counters.dropped += 1 } }
    }

    private func publishRaw(_ full: String, _ value: String, retain: Bool) -> Bool {
        guard let m = mosq else { return false }
        let room = monitor.withLock {
            guard connected, queued < Self.maxQueued else { return false }
            queued += 1
            counters.handed += 1
            return true
        }
        guard room else { return false }
        let bytes = Array(value.utf8)
        let rc = bytes.withUnsafeBytes { jb_mosquitto_publish(m, nil, full, Int32(bytes.count), $0.baseAddress, 0, retain) }
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            monitor.withLock { queued = max(0, queued - 1) }
            return false
        }
        return true
    }
}

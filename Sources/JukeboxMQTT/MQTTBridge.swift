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
/// language and nothing the socket would not, and the loop never waits for it: libmosquitto runs
/// on its own thread (`mosquitto_loop_start`: connect, reconnect with back-off 1 s → 60 s, keepalive)
/// and the bridge on another (`jukebox-mqtt`: `status --json` once a second and after every event,
/// the `events` stream, commands one at a time). The loop sees one more socket client, whose
/// replies the socket already bounds (64 KiB).
///
/// Retained under `topic`: `availability` (`online`; `offline` is the broker's last will),
/// `phase`, `title`, `artist`, `album`, `file`, `position`, `duration`, `volume`, `shuffle`,
/// `repeat`, `queue`, `message` and `state` (the whole `status --json`). Not retained: `event`
/// (each line of the `events` stream, without its time), `card` (card ids), `reply`.
/// Commands: `topic/cmd/<command>` with the arguments as payload.
public final class MQTTBridge: @unchecked Sendable {
    /// Payloads above this many bytes are refused (a control line is at most 1024 bytes).
    public static let maxPayload = 1000
    /// Commands waiting to run; more are answered `error: busy`.
    public static let maxPending = 16
    /// Control words the bridge does not pass on: `events` belongs to the bridge's own stream, a
    /// `yield` lives as long as its connection (MQTT has none to tie it to).
    static let refused: Set<String> = ["events", "yield"]

    let settings: MQTTSettings
    let socketPath: String
    /// The topic prefix (`jukebox/<hostname>` by default).
    public let topic: String
    let nodeID: String
    let volumeRange: ClosedRange<Int>
    let log: @Sendable (String) -> Void
    let interval: Double

    private var mosq: OpaquePointer?
    private let monitor = Monitor()
    // Under `monitor`: set by libmosquitto's thread, read by the bridge's.
    private var connected = false
    private var republish = false
    private var pending: [(command: String, arguments: String)] = []
    private var stopping = false
    private var thread: NativeThread?

    // The bridge thread's own.
    private var published: [String: String] = [:]
    private var lastPosition: (value: Double, at: Double, published: Double)?
    private var statusClient: ControlClient?
    private var eventClient: ControlClient?
    private var lastStatusAt = -Double.infinity
    private var socketProblemLogged = false
    private var lastProblem = ""

    /// A bridge for `settings` to the control socket at `socketPath`; `volumeRange` is the
    /// config's volume limits (Home Assistant's number entity), `log` is called from the bridge's
    /// threads (the caller routes it to the loop).
    public init(settings: MQTTSettings, socketPath: String, hostname: String = MQTTBridge.hostname(),
                volumeRange: ClosedRange<Int> = 0...100, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.socketPath = socketPath
        let host = hostname.isEmpty ? "jukebox" : hostname
        topic = settings.topic ?? "jukebox/\(host)"
        nodeID = String(String.UnicodeScalarView(topic.unicodeScalars.map {
            ($0.properties.isAlphabetic && $0.isASCII) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" ? $0 : "_"
        }))
        self.volumeRange = volumeRange
        self.log = log
        interval = settings.positionInterval ?? 10
    }

    /// This machine's host name ("" when unknown).
    public static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts libmosquitto's thread and the bridge's; returns the problem when the settings cannot
    /// be applied (a TLS file missing…). A broker that is down is no problem: it is retried.
    public func start() -> String? {
        _ = Self.initLibrary
        guard let m = mosquitto_new("jukebox-\(nodeID)", true, Unmanaged.passUnretained(self).toOpaque()) else {
            return "mqtt: cannot create a client: \(errnoText(errno))"
        }
        mosq = m
        let will = "offline"
        var rc = mosquitto_will_set(m, topic + "/availability", Int32(will.utf8.count), will, 1, true)
        if rc == MOSQ_ERR_SUCCESS.rawValue, settings.username != nil || settings.password != nil {
            rc = mosquitto_username_pw_set(m, settings.username, settings.password)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, let tls = settings.tls {
            rc = mosquitto_tls_set(m, tls.ca, nil, tls.cert, tls.key, nil)
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue { return "mqtt: " + String(cString: mosquitto_strerror(rc)) }
        // QoS 1 messages in flight and queued are bounded by libmosquitto; QoS 0 ones are not, so
        // the bridge itself publishes only while the socket has nothing left to write (`flush`).
        _ = mosquitto_max_inflight_messages_set(m, 20)
        mosquitto_reconnect_delay_set(m, 1, 60, true)
        mosquitto_connect_callback_set(m) { _, me, rc in MQTTBridge.from(me).connectedCallback(rc) }
        mosquitto_disconnect_callback_set(m) { _, me, _ in MQTTBridge.from(me).disconnectedCallback() }
        mosquitto_message_callback_set(m) { _, me, message in
            guard let message else { return }
            MQTTBridge.from(me).messageCallback(message.pointee)
        }
        let port = Int32(settings.port ?? (settings.tls == nil ? 1883 : 8883))
        // Asynchronous: a broker that is down now is retried by the loop thread, with back-off.
        rc = mosquitto_connect_async(m, settings.host, port, 30)
        if rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_ERRNO.rawValue {
            return "mqtt: " + String(cString: mosquitto_strerror(rc))
        }
        if rc == MOSQ_ERR_ERRNO.rawValue { log("mqtt: \(settings.host):\(port): \(errnoText(errno)); retrying") }
        rc = mosquitto_loop_start(m)
        if rc != MOSQ_ERR_SUCCESS.rawValue { return "mqtt: " + String(cString: mosquitto_strerror(rc)) }
        thread = NativeThread(name: "jukebox-mqtt") { [self] in run() }
        return nil
    }

    /// Says `offline`, disconnects and joins both threads.
    public func close() {
        monitor.withLock { stopping = true; monitor.broadcast() }
        thread?.join()
        thread = nil
        guard let m = mosq else { return }
        if monitor.withLock({ connected }) {
            publish("availability", "offline", retain: true, force: true)
        }
        mosquitto_disconnect(m)
        mosquitto_loop_stop(m, false)
        mosquitto_destroy(m)
        mosq = nil
    }

    deinit { close() }

    private static let initLibrary: Void = { mosquitto_lib_init() }()

    private static func from(_ pointer: UnsafeMutableRawPointer?) -> MQTTBridge {
        Unmanaged<MQTTBridge>.fromOpaque(pointer!).takeUnretainedValue()
    }

    // MARK: libmosquitto's thread

    private func connectedCallback(_ rc: Int32) {
        guard rc == 0 else { log("mqtt: broker refused: " + String(cString: mosquitto_connack_string(rc))); return }
        _ = mosquitto_subscribe(mosq, nil, topic + "/cmd/+", 0)
        monitor.withLock { connected = true; republish = true; monitor.broadcast() }
        log("mqtt: connected to \(settings.host)")
    }

    private func disconnectedCallback() {
        monitor.withLock { connected = false }
    }

    private func messageCallback(_ message: mosquitto_message) {
        guard let name = message.topic.map({ String(cString: $0) }), name.hasPrefix(topic + "/cmd/") else { return }
        let command = String(name.dropFirst(topic.count + 5))
        var arguments = ""
        if message.payloadlen > 0, let payload = message.payload {
            guard message.payloadlen <= Self.maxPayload else {
                reply(command, "error: payload above \(Self.maxPayload) bytes")
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
        if !accepted { reply(command, "error: busy") }
    }

    // MARK: the bridge's thread

    private func run() {
        while true {
            let (stop, isConnected, again, commands) = monitor.withLock {
                // With an event stream, its read below is the wait.
                if !stopping, pending.isEmpty, eventClient == nil { monitor.wait(seconds: 0.25) }
                let work = pending
                pending = []
                let again = republish
                republish = false
                return (stopping, connected, again, work)
            }
            if stop { return }
            if again {
                published = [:]
                lastPosition = nil
                publish("availability", "online", retain: true, force: true)
                publishDiscovery()
            }
            connectSocket()
            var changed = again || !commands.isEmpty
            for (command, arguments) in commands { run(command, arguments) }
            if let client = eventClient {
                var lines = 0
                while lines < 64, let line = client.readLine(timeout: lines == 0 && !changed ? 0.1 : 0.001) {
                    lines += 1
                    event(line)
                    changed = true
                }
            }
            let now = monotonicNow()
            if isConnected, changed || now - lastStatusAt >= 1 {
                lastStatusAt = now
                refreshStatus(now: now)
            }
        }
    }

    /// Opens the two socket connections when missing: one for requests, one streaming `events`.
    private func connectSocket() {
        if statusClient == nil {
            do {
                statusClient = try ControlClient(path: socketPath)
                socketProblemLogged = false
            } catch {
                if !socketProblemLogged { log("mqtt: no control socket at \(socketPath): \(error)") }
                socketProblemLogged = true
                return
            }
        }
        if eventClient == nil, let client = try? ControlClient(path: socketPath) {
            if ask(client, "events", timeout: 5)?.hasPrefix("ok") == true { eventClient = client }
        }
    }

    private func run(_ command: String, _ arguments: String) {
        let word = DisplayText.inert(command)
        guard !word.isEmpty, word.utf8.count <= 32, word.allSatisfy({ $0.isLetter || $0.isNumber }) else {
            reply(command, "error: not a command: \(word)")
            return
        }
        guard !Self.refused.contains(word.lowercased()) else {
            reply(word, "error: \(word) is not available over MQTT")
            return
        }
        // Control characters (a newline would start a second command) become inert.
        let line = DisplayText.inert(arguments.isEmpty ? word : word + " " + arguments)
        guard let client = statusClient else { reply(word, "error: the player's control socket is not open"); return }
        if let answer = ask(client, line, timeout: 30) {
            reply(word, answer)
        } else {
            statusClient = nil
            reply(word, "error: no reply from the player")
        }
    }

    /// `ControlClient.request`, cut short by `close()`: a player that has stopped reading (its
    /// loop ended, the socket not yet closed) must not hold the bridge, and so the exit, for the
    /// whole timeout.
    private func ask(_ client: ControlClient, _ line: String, timeout: Double) -> String? {
        guard client.send(line) else { return nil }
        let deadline = monotonicNow() + timeout
        var lines: [String] = []
        while monotonicNow() < deadline, !monitor.withLock({ stopping }) {
            guard let got = client.readLine(timeout: 0.1) else { continue }
            lines.append(got)
            // Continuation lines start with two spaces; the last is `ok …` or `error: …`.
            if !got.hasPrefix("  ") { return lines.joined(separator: "\n") }
        }
        return nil
    }

    private func reply(_ command: String, _ text: String) {
        publish("reply", text, retain: false, force: true)
    }

    private func event(_ line: String) {
        // "event 04:47:43.250 card 1234 → playing": what happened, without the time.
        var words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == "event" else {
            if line.hasPrefix("ok events ended") || line.hasPrefix("error") { eventClient = nil }
            return
        }
        words.removeFirst(2)
        let what = String(words[0])
        publish("event", what, retain: false, force: true)
        if what.hasPrefix("card ") {
            let id = what.dropFirst(5).split(separator: " ").first.map(String.init) ?? ""
            if !id.isEmpty { publish("card", id, retain: false, force: true) }
        }
    }

    /// The `status json` fields.
    struct Status: Decodable {
        var phase: String
        var title: String?
        var artist: String?
        var album: String?
        var path: String?
        var position: Double?
        var duration: Double?
        var count: Int
        var volume: Int
        var shuffle: Bool
        var `repeat`: String
        var message: String?
    }

    private func refreshStatus(now: Double) {
        guard let client = statusClient else { return }
        guard let answer = ask(client, "status --json", timeout: 10) else {
            // The player went away (restarted?): both connections are opened again.
            statusClient = nil
            eventClient = nil
            return
        }
        let status: Status
        do {
            guard answer.hasPrefix("ok {") else { throw MQTTProblem(text: answer) }
            status = try JSONDecoder().decode(Status.self, from: Data(answer.dropFirst(3).utf8))
        } catch {
            let text = "mqtt: unexpected status from the player: \(error)"
            if text != lastProblem { log(text) }
            lastProblem = text
            return
        }
        publish("phase", status.phase)
        publish("title", status.title ?? "")
        publish("artist", status.artist ?? "")
        publish("album", status.album ?? "")
        publish("file", status.path ?? "")
        publish("duration", status.duration.map(Self.seconds) ?? "")
        publish("volume", String(status.volume))
        publish("shuffle", status.shuffle ? "on" : "off")
        publish("repeat", status.repeat)
        publish("queue", String(status.count))
        publish("message", status.message ?? "")
        // Position: at most every `interval` seconds while it runs as expected; at once after a
        // jump (a seek, another track, a pause).
        let position = status.position
        var send = true
        if let p = position, let last = lastPosition {
            let expected = status.phase == "playing" ? last.value + (now - last.at) : last.value
            send = abs(p - expected) > 1.5 || (status.phase == "playing" && now - last.published >= interval)
            if !send { lastPosition = (p, now, last.published) }
        }
        if send, publish("position", position.map(Self.seconds) ?? "", force: true) {
            lastPosition = position.map { ($0, now, now) }
        }
        // `state` carries the published position, so it does not change every second.
        let q = JSONText.quoted
        func text(_ v: String?) -> String { v.map(q) ?? "null" }
        func number(_ v: Double?) -> String { v.flatMap { $0.isFinite ? Self.seconds($0) : nil } ?? "null" }
        let state = "{\"phase\":\(q(status.phase)),\"title\":\(text(status.title)),\"artist\":\(text(status.artist)),"
            + "\"album\":\(text(status.album)),\"file\":\(text(status.path)),\"position\":\(number(position == nil ? nil : lastPosition?.value)),"
            + "\"duration\":\(number(status.duration)),\"volume\":\(status.volume),\"shuffle\":\(status.shuffle),"
            + "\"repeat\":\(q(status.repeat)),\"queue\":\(status.count),\"message\":\(text(status.message))}"
        publish("state", state)
    }

    static func seconds(_ value: Double) -> String {
        value.isFinite ? String((value * 10).rounded() / 10) : ""
    }

    /// Publishes `value` under `topic/name` (retained unless said otherwise) when it differs from
    /// what was published there, the broker is connected and libmosquitto has nothing left to
    /// write: a broker that stops reading gets no queue, only the newest values once it reads
    /// again. Returns whether it was handed to libmosquitto.
    @discardableResult
    private func publish(_ name: String, _ value: String, retain: Bool = true, force: Bool = false) -> Bool {
        let full = topic + "/" + name
        if !force, published[full] == value { return false }
        guard publishRaw(full, value, retain: retain) else { return false }
        if retain { published[full] = value }
        return true
    }

    private func publishRaw(_ full: String, _ value: String, retain: Bool) -> Bool {
        guard let m = mosq, monitor.withLock({ connected }) else { return false }
        // A few packets may wait (one refresh's worth); beyond that the broker is not reading.
        if mosquitto_want_write(m), backlog >= 64 { return false }
        backlog = mosquitto_want_write(m) ? backlog + 1 : 0
        let rc = value.withCString { mosquitto_publish(m, nil, full, Int32(strlen($0)), $0, 0, retain) }
        return rc == MOSQ_ERR_SUCCESS.rawValue
    }
    private var backlog = 0

    // MARK: Home Assistant discovery

    /// The discovery configs (topic → JSON), retained on every connect.
    public func discoveryConfigs() -> [(topic: String, payload: String)] {
        guard let prefix = settings.discoveryPrefix ?? Optional("homeassistant"), !prefix.isEmpty else { return [] }
        let q = JSONText.quoted
        let t = topic
        let device = "\"device\":{\"identifiers\":[\(q("jukebox_" + nodeID))],\"name\":\(q("jukebox " + (topic.split(separator: "/").last.map(String.init) ?? nodeID))),\"manufacturer\":\"jukebox\",\"model\":\"jukebox\"}"
        let availability = "\"availability_topic\":\(q(t + "/availability")),\"payload_available\":\"online\",\"payload_not_available\":\"offline\""
        func entity(_ component: String, _ object: String, _ name: String, _ fields: [String]) -> (String, String) {
            let body = ["\"name\":" + q(name), "\"unique_id\":" + q(nodeID + "_" + object), "\"object_id\":" + q(nodeID + "_" + object)]
                + fields + [availability, device]
            return ("\(prefix)/\(component)/\(nodeID)/\(object)/config", "{" + body.joined(separator: ",") + "}")
        }
        var configs = [
            entity("sensor", "now_playing", "Now playing", [
                "\"state_topic\":" + q(t + "/state"), "\"value_template\":" + q("{{ value_json.title or '' }}"),
                "\"json_attributes_topic\":" + q(t + "/state"),
                "\"json_attributes_template\":" + q("{{ {'artist': value_json.artist, 'album': value_json.album, 'position': value_json.position, 'duration': value_json.duration, 'phase': value_json.phase} | tojson }}"),
                "\"icon\":\"mdi:music\""]),
        ]
        for (object, name, command) in [("play_pause", "Play/pause", "toggle"), ("next", "Next", "next"),
                                        ("previous", "Previous", "prev"), ("stop", "Stop", "stop")] {
            configs.append(entity("button", object, name, ["\"command_topic\":" + q(t + "/cmd/" + command), "\"payload_press\":\"\""]))
        }
        configs.append(entity("number", "volume", "Volume", [
            "\"command_topic\":" + q(t + "/cmd/volume"), "\"state_topic\":" + q(t + "/volume"),
            "\"min\":\(volumeRange.lowerBound)", "\"max\":\(volumeRange.upperBound)", "\"step\":1", "\"mode\":\"slider\""]))
        configs.append(entity("select", "repeat", "Repeat", [
            "\"command_topic\":" + q(t + "/cmd/repeat"), "\"state_topic\":" + q(t + "/repeat"),
            "\"options\":[" + RepeatMode.allCases.map { q($0.rawValue) }.joined(separator: ",") + "]"]))
        configs.append(entity("switch", "shuffle", "Shuffle", [
            "\"command_topic\":" + q(t + "/cmd/shuffle"), "\"state_topic\":" + q(t + "/shuffle"),
            "\"payload_on\":\"on\"", "\"payload_off\":\"off\"", "\"state_on\":\"on\"", "\"state_off\":\"off\""]))
        // A tag scanner: HA's `tag` integration takes the id as the payload.
        configs.append(("\(prefix)/tag/\(nodeID)/card/config",
                        "{\"topic\":\(q(t + "/card")),\"value_template\":\"{{ value }}\",\(device)}"))
        return configs
    }

    private func publishDiscovery() {
        for (name, payload) in discoveryConfigs() { _ = publishRaw(name, payload, retain: true) }
    }
}

struct MQTTProblem: Error { var text: String }

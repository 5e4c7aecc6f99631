// SPDX-License-Identifier: MIT
import CMosquitto
import Foundation
import JukeboxApp
import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

// What MQTTBridgeTests run against: a real mosquitto on 127.0.0.1 (a free port, a private
// config), an MQTT observer (libmosquitto in the test), a player with the real engine on the
// paced silent output (so its position moves in real time), and a fake broker that stops reading.

/// A private folder for one test.
func makeTemporaryFolder() -> String {
    var template = Array((NSTemporaryDirectory() + "jukebox-mqtt-XXXXXX").utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// A TCP port nobody listens on now.
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

func loopback(port: Int) -> sockaddr_in {
    sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: in_port_t(UInt16(port).bigEndian),
                sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
}

func canConnect(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// Runs a program to its end (bounded); its output, or a failure.
@discardableResult
func runTool(_ path: String, _ arguments: [String], in folder: String) throws -> String {
    let p = Process(), out = Pipe()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    p.currentDirectoryURL = URL(fileURLWithPath: folder)
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard p.terminationStatus == 0 else { throw MQTTTestFailure("\(path) \(arguments.joined(separator: " ")): \(text)") }
    return text
}

struct MQTTTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// mosquitto on 127.0.0.1 with a private config (no persistence: a restart forgets everything).
final class Broker {
    static let binary = "/usr/sbin/mosquitto"
    let folder: String
    let port: Int
    let extra: String
    private var process: Process?

    init(folder: String, port: Int = freePort(), extra: String = "allow_anonymous true\n") {
        self.folder = folder
        self.port = port
        self.extra = extra
    }

    func start() throws {
        let conf = folder + "/mosquitto-\(port).conf"
        // As root, mosquitto would become user mosquitto, which cannot read this private folder.
        let user = geteuid() == 0 ? "user root\n" : ""
        try "listener \(port) 127.0.0.1\npersistence false\n\(user)\(extra)".write(toFile: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["-c", conf]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        guard waitFor(60, { canConnect(self.port) }) else { throw MQTTTestFailure("mosquitto did not listen on \(port)") }
    }

    func kill() {
        guard let p = process else { return }
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    deinit { kill() }
}

/// An MQTT client in the test: records every message it receives (retained ones flagged) and
/// publishes. libmosquitto's loop runs on the observer's own thread, in 0.1 s slices.
final class Observer: @unchecked Sendable {
    struct Message: Equatable {
        var topic: String
        var payload: String
        var retained: Bool
        var at: Double
    }
    let monitor = Monitor()
    private(set) var messagesSeen: [Message] = []
    private var connack: Int32?
    private var stopping = false
    private var mosq: OpaquePointer?
    private var thread: NativeThread?
    let filter: String

    /// Connects to `port` and subscribes to `filter`; waits (bounded) for the subscription.
    init(port: Int, filter: String = "#", tls: (ca: String, cert: String, key: String)? = nil,
         username: String? = nil, password: String? = nil) throws {
        self.filter = filter
        _ = jb_mosquitto_load()
        let m = jb_mosquitto_new("observer-\(UInt32.random(in: 0...UInt32.max))", true, Unmanaged.passUnretained(self).toOpaque())!
        mosq = m
        _ = jb_mosquitto_threaded_set(m, true)
        if let username { _ = jb_mosquitto_username_pw_set(m, username, password) }
        if let tls { _ = jb_mosquitto_tls_set(m, tls.ca, nil, tls.cert, tls.key, nil) }
        jb_mosquitto_connect_callback_set(m) { m, me, rc in
            let o = Unmanaged<Observer>.fromOpaque(me!).takeUnretainedValue()
            if rc == 0 { _ = jb_mosquitto_subscribe(m, nil, o.filter, 1) }
        }
        jb_mosquitto_subscribe_callback_set(m) { _, me, _, _, _ in
            let o = Unmanaged<Observer>.fromOpaque(me!).takeUnretainedValue()
            o.monitor.withLock { o.connack = 0 }
        }
        jb_mosquitto_message_callback_set(m) { _, me, message in
            let o = Unmanaged<Observer>.fromOpaque(me!).takeUnretainedValue()
            guard let message = message?.pointee else { return }
            let payload = message.payloadlen > 0
                ? String(decoding: UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen)), as: UTF8.self) : ""
            let m = Message(topic: String(cString: message.topic), payload: payload, retained: message.retain, at: monotonicNow())
            o.monitor.withLock { o.messagesSeen.append(m) }
        }
        guard jb_mosquitto_connect_async(m, "127.0.0.1", Int32(port), 30) == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTTestFailure("observer cannot connect to \(port)")
        }
        thread = NativeThread(name: "observer") { [self] in
            while !monitor.withLock({ stopping }) {
                if jb_mosquitto_loop(mosq, 100, 1) != MOSQ_ERR_SUCCESS.rawValue { usleep(50_000) }
            }
        }
        guard waitFor(60, { self.monitor.withLock { self.connack != nil } }) else { throw MQTTTestFailure("observer not subscribed on \(port)") }
    }

    var messages: [Message] { monitor.withLock { messagesSeen } }

    /// The latest payload on `topic`.
    func latest(_ topic: String) -> String? { messages.last { $0.topic == topic }?.payload }

    /// The retained messages this observer was given on subscribing (topic → payload; an empty
    /// payload is no retained message).
    func retained(under prefix: String = "") -> [String: String] {
        var found: [String: String] = [:]
        for m in messages where m.retained && m.topic.hasPrefix(prefix) { found[m.topic] = m.payload.isEmpty ? nil : m.payload }
        return found
    }

    /// Whether `topic`'s latest payload is (or becomes, within `seconds`) `value`.
    func sees(_ topic: String, _ value: String, seconds: Double = 60) -> Bool {
        waitFor(seconds) { self.latest(topic) == value }
    }

    func publish(_ topic: String, _ payload: String, retain: Bool = false) {
        let bytes = Array(payload.utf8)
        _ = bytes.withUnsafeBytes { jb_mosquitto_publish(mosq, nil, topic, Int32(bytes.count), $0.baseAddress, 1, retain) }
    }

    /// Publishes a command and returns the reply that follows it on `topic/reply`.
    func command(_ topic: String, _ command: String, _ payload: String = "", seconds: Double = 60) -> String? {
        let before = messages.count
        publish(topic + "/cmd/" + command, payload)
        var reply: String?
        _ = waitFor(seconds) {
            reply = self.messages.dropFirst(before).first { $0.topic == topic + "/reply" }?.payload
            return reply != nil
        }
        return reply
    }

    func close() {
        guard let m = mosq else { return }
        monitor.withLock { stopping = true }
        thread?.join()
        thread = nil
        jb_mosquitto_disconnect(m)
        jb_mosquitto_destroy(m)
        mosq = nil
    }

    deinit { close() }
}

/// A player as the service runs one, without a sound card: the loop on a thread of its own, the
/// real engine on the paced silent output, a state file, the control socket; two tracks queued
/// (120 s and 60 s of 8 kHz mono WAV, tagged in the queue).
final class TestPlayer: @unchecked Sendable {
    let folder: String
    let socketPath: String
    let runtime: Runtime
    private let done = DispatchSemaphore(value: 0)

    init(folder: String, stateFile: Bool = true, settings: Settings = Settings()) throws {
        self.folder = folder
        socketPath = folder + "/control"
        let a = folder + "/a.wav", b = folder + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 8000 * 120, sampleRate: 8000, channels: 1)
        try TestAudio.write(path: b, kind: .wav16, frames: 8000 * 60, sampleRate: 8000, channels: 1)
        let mailbox = Mailbox()
        // A second of virtual device buffer: a test machine under load (the CI builds alongside)
        // starves the writer now and then, which a 0.1 s buffer would hear as underruns.
        let engine = AudioEngine(makeOutput: { SilentOutput(bufferSeconds: 1) }) { report in
            if let event = AudioWiring.event(for: report) { mailbox.post(event) }
        }
        var state = State(settings: settings)
        state.now = monotonicNow()
        runtime = Runtime(state: state, audio: engine, store: stateFile ? StateStore(path: folder + "/state.json") : nil, status: RecordingStatus(),
                          log: Log(level: .error), mailbox: mailbox, control: try ControlSocket(path: socketPath))
        runtime.loadTracks = { LibraryLoader(readInfo: AudioWiring.trackInfo(path:)).load($0) }
        let tracks = [TrackInfo(path: a, title: "Alpha", artist: "Ann", album: "First", duration: 120),
                      TrackInfo(path: b, title: "Beta", artist: "Bob", album: "Second", duration: 60)]
        let box = self
        Thread { _ = box.runtime.run(initial: [.add(tracks)]); box.done.signal() }.start()
        guard waitFor(60, { (try? ControlClient(path: self.socketPath)) != nil }) else {
            throw MQTTTestFailure("no control socket")
        }
    }

    /// A request on a connection of its own.
    func ask(_ line: String, timeout: Double = 30) -> String? {
        (try? ControlClient(path: socketPath))?.request(line, timeout: timeout)
    }

    /// `status --json`, decoded.
    func status() -> [String: Any]? {
        guard let reply = ask("status --json"), reply.hasPrefix("ok ") else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(reply.dropFirst(3).utf8)) as? [String: Any]
    }

    func post(_ event: Event) { runtime.mailbox.post(event) }

    func quit() {
        runtime.mailbox.post(.quit)
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "the loop did not end")
    }
}

/// A TCP "broker" that accepts one client, answers its CONNECT and SUBSCRIBE, then never reads
/// again (its receive buffer kept small, so the client's writes back up at once).
final class StuckBroker: @unchecked Sendable {
    let port = freePort()
    private let listener: Int32
    private var client: Int32 = -1
    private var thread: NativeThread?
    private let monitor = Monitor()
    private var answered = false

    init() throws {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw MQTTTestFailure("fake broker: \(errnoText(errno))") }
        let fd = listener
        thread = NativeThread(name: "stuck-broker") { [self] in
            let c = accept(fd, nil, nil)
            guard c >= 0 else { return }
            monitor.withLock { client = c }
            // CONNECT → CONNACK (accepted); SUBSCRIBE → SUBACK (QoS 1 granted); then silence.
            guard let connect = Self.packet(c), connect.type == 1 else { return }
            _ = [UInt8]([0x20, 0x02, 0x00, 0x00]).withUnsafeBytes { write(c, $0.baseAddress, 4) }
            while let p = Self.packet(c) {
                if p.type == 8, p.body.count >= 2 {
                    _ = [UInt8]([0x90, 0x03, p.body[0], p.body[1], 0x01]).withUnsafeBytes { write(c, $0.baseAddress, 5) }
                    break
                }
            }
            monitor.withLock { answered = true }
        }
    }

    /// Whether the client was answered (and reading stopped).
    var isStuck: Bool { monitor.withLock { answered } }

    private static func packet(_ fd: Int32) -> (type: UInt8, body: [UInt8])? {
        func byte() -> UInt8? {
            var b: UInt8 = 0
            return read(fd, &b, 1) == 1 ? b : nil
        }
        guard let head = byte() else { return nil }
        var length = 0, shift = 0
        while let b = byte() {
            length |= Int(b & 0x7F) << shift
            shift += 7
            if b & 0x80 == 0 { break }
        }
        var body = [UInt8](repeating: 0, count: length), got = 0
        while got < length {
            let n = body[got...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            got += n
        }
        return (head >> 4, body)
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        monitor.withLock { if client >= 0 { Glibc.close(client); client = -1 } }
        thread?.join()
        thread = nil
    }
}

/// A test CA, a broker certificate for 127.0.0.1 and a client certificate, made with the openssl
/// command (EC P-256: quick, also under emulation). Keys are 0600.
struct TestCA {
    let ca: String, serverCert: String, serverKey: String, clientCert: String, clientKey: String

    init(folder: String, name: String = "ca") throws {
        let openssl = "/usr/bin/openssl"
        let dir = folder + "/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try runTool(openssl, ["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=jukebox test CA"], in: dir)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: dir + "/server.ext", atomically: true, encoding: .utf8)
        for (who, subject, ext) in [("server", "/CN=127.0.0.1", ["-extfile", "server.ext"]), ("client", "/CN=jukebox", [])] {
            try runTool(openssl, ["req"] + ec + ["-keyout", "\(who).key", "-out", "\(who).csr", "-subj", subject], in: dir)
            try runTool(openssl, ["x509", "-req", "-in", "\(who).csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                                  "-out", "\(who).crt", "-days", "2"] + ext, in: dir)
            chmod(dir + "/\(who).key", 0o600)
        }
        ca = dir + "/ca.crt"
        serverCert = dir + "/server.crt"
        serverKey = dir + "/server.key"
        clientCert = dir + "/client.crt"
        clientKey = dir + "/client.key"
    }
}

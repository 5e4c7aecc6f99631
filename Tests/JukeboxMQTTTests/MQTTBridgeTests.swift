// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxMQTT
import JukeboxService
import JukeboxTestSupport
import JukeboxWaiting
import XCTest

/// The MQTT bridge between a real `mosquitto` (started here on 127.0.0.1, a free port) and a loop
/// with fake audio, observed with `mosquitto_sub`/`mosquitto_pub` (Debian's mosquitto-clients).
/// Waits are generous: the suite also runs under qemu-aarch64.
final class MQTTBridgeTests: XCTestCase {
    final class Box: @unchecked Sendable {
        let runtime: Runtime
        init(_ r: Runtime) { runtime = r }
    }

    var dir: String!
    var box: Box!
    var finished: DispatchSemaphore!
    var socketPath: String!
    var broker: Process?
    var port = 0
    var bridge: MQTTBridge?
    let topic = "jukebox/test"

    override func setUpWithError() throws {
        for tool in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) missing (board/setup.sh installs mosquitto and mosquitto-clients)")
        }
        var template = Array((NSTemporaryDirectory() + "jukebox-mqtt-XXXXXX").utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        socketPath = dir + "/control"
        let mailbox = Mailbox()
        let audio = RecordingAudio(mailbox: mailbox)
        let control = try ControlSocket(path: socketPath)
        var state = State()
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 100), TrackInfo(path: "/m/b.flac", duration: 50)]))
        box = Box(Runtime(state: state, audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error),
                          mailbox: mailbox, control: control))
        finished = DispatchSemaphore(value: 0)
        let box = box!, done = finished!
        Thread { _ = box.runtime.run(initial: []); done.signal() }.start()
    }

    override func tearDown() {
        bridge?.close()
        bridge = nil
        stopBroker()
        box?.runtime.mailbox.post(.quit)
        XCTAssertEqual(finished?.wait(timeout: .now() + 10), .success, "loop did not end")
        box = nil
        if let dir { try? FileManager.default.removeItem(atPath: dir) }
    }

    // MARK: helpers

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func startBroker() throws {
        if port == 0 { port = Self.freePort() }
        let conf = dir + "/mosquitto.conf"
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", conf]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        broker = p
        XCTAssertTrue(waitFor(60) { self.canConnect(self.port) }, "mosquitto did not listen on \(port)")
    }

    func stopBroker() {
        guard let p = broker else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        broker = nil
    }

    func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: in_port_t(UInt16(port).bigEndian), sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }

    func startBridge(discovery: String? = nil, host: String = "127.0.0.1") {
        var settings = MQTTSettings(host: host, port: port, topic: topic, positionInterval: 1)
        settings.discoveryPrefix = discovery
        let made = MQTTBridge(settings: settings, socketPath: socketPath, volumeRange: 10...90) { print("bridge: \($0)") }
        XCTAssertNil(made.start())
        bridge = made
    }

    /// Runs a client tool and returns its output (it must end by itself: `-W`, `-C`).
    func run(_ tool: String, _ arguments: [String]) throws -> (Process, Pipe) {
        let p = Process(), out = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
        p.arguments = ["-h", "127.0.0.1", "-p", String(port)] + arguments
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, out)
    }

    func output(_ started: (Process, Pipe)) -> String {
        let data = started.1.fileHandleForReading.readDataToEndOfFile()
        started.0.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The retained messages under `filter`: topic → payload.
    func retained(_ filter: String) throws -> [String: String] {
        let text = output(try run("mosquitto_sub", ["-t", filter, "-v", "--retained-only", "-W", "2"]))
        var found: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            found[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return found
    }

    func waitForRetained(_ name: String, _ value: String, _ seconds: Double = 60) -> Bool {
        waitFor(seconds) { (try? self.retained(self.topic + "/" + name))?[self.topic + "/" + name] == value }
    }

    /// Publishes `payload` to `cmd/command` and returns the reply.
    func command(_ command: String, _ payload: String) throws -> String {
        let sub = try run("mosquitto_sub", ["-t", topic + "/reply", "-C", "1", "-W", "60"])
        // The subscriber must be subscribed before the command goes: publish until a reply comes.
        var reply = ""
        let got = waitFor(60) {
            _ = self.output(try! self.run("mosquitto_pub", ["-t", self.topic + "/cmd/" + command, "-m", payload]))
            return waitFor(3) { !sub.0.isRunning }
        }
        if got { reply = output(sub) } else { sub.0.terminate() }
        return reply.trimmingCharacters(in: .newlines)
    }

    func status() -> String? {
        (try? ControlClient(path: socketPath))?.request("status", timeout: 10)
    }

    // MARK: tests

    func testRetainedStateCommandsAndRepliesDiscovery() throws {
        try startBroker()
        startBridge()
        XCTAssertTrue(waitForRetained("availability", "online"), "no availability")
        XCTAssertTrue(waitForRetained("queue", "2"), "no queue length")
        let state = try retained(topic + "/#")
        XCTAssertEqual(state[topic + "/phase"], "stopped")
        // Nothing current: an empty retained payload clears the topic (MQTT's rule).
        XCTAssertNil(state[topic + "/file"])
        XCTAssertEqual(state[topic + "/repeat"], "off")
        XCTAssertEqual(state[topic + "/shuffle"], "off")
        XCTAssertNotNil(state[topic + "/volume"])

        // A command runs as on the socket and its reply comes back; the state follows.
        XCTAssertTrue(try command("volume", "40").hasPrefix("ok "))
        XCTAssertTrue(waitForRetained("volume", "40"))
        XCTAssertTrue(try command("play", "").hasPrefix("ok "))
        XCTAssertTrue(waitFor(60) { (try? self.retained(self.topic + "/phase"))?[self.topic + "/phase"].map { $0 != "stopped" } == true })
        XCTAssertTrue(waitForRetained("file", "/m/a.flac"))
        XCTAssertTrue(try command("repeat", "all").hasPrefix("ok "))
        XCTAssertTrue(waitForRetained("repeat", "all"))
        // Untrusted payloads: a newline does not start a second command, the stream is the bridge's.
        XCTAssertTrue(try command("volume", "30\nstop").hasPrefix("error"))
        XCTAssertEqual(status()?.contains("stopped"), false, "the smuggled stop ran: \(status() ?? "")")
        XCTAssertTrue(try command("events", "").hasPrefix("error"))
        XCTAssertTrue(try command("nosuch", "").hasPrefix("error"))

        // Discovery: every config parses, has its unique id, the device and the availability.
        let configs = try retained("homeassistant/#")
        XCTAssertEqual(configs.count, 9, "\(configs.keys.sorted())")
        var ids = Set<String>()
        for (name, payload) in configs {
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any], name)
            let device = try XCTUnwrap(json["device"] as? [String: Any], name)
            XCTAssertNotNil(device["identifiers"] as? [String], name)
            if name.hasPrefix("homeassistant/tag/") {
                XCTAssertEqual(json["topic"] as? String, topic + "/card")
                continue
            }
            let id = try XCTUnwrap(json["unique_id"] as? String, name)
            XCTAssertTrue(ids.insert(id).inserted, "unique_id \(id) twice")
            XCTAssertEqual(json["availability_topic"] as? String, topic + "/availability", name)
            XCTAssertNotNil(json["name"] as? String, name)
            if name.contains("/button/") || name.contains("/number/") || name.contains("/select/") || name.contains("/switch/") {
                XCTAssertTrue((json["command_topic"] as? String)?.hasPrefix(topic + "/cmd/") == true, name)
            }
        }
        let volume = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(XCTUnwrap(configs["homeassistant/number/jukebox_test/volume/config"]).utf8)) as? [String: Any])
        XCTAssertEqual(volume["min"] as? Int, 10)
        XCTAssertEqual(volume["max"] as? Int, 90)
        let select = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(XCTUnwrap(configs["homeassistant/select/jukebox_test/repeat/config"]).utf8)) as? [String: Any])
        XCTAssertEqual(Set(select["options"] as? [String] ?? []), ["off", "one", "all"])

        // Closing says offline (the will covers a crash).
        bridge?.close()
        bridge = nil
        XCTAssertTrue(waitForRetained("availability", "offline"))
    }

    func testEventsArePublishedNotRetained() throws {
        try startBroker()
        startBridge(discovery: "")
        XCTAssertTrue(waitForRetained("queue", "2"))
        let sub = try run("mosquitto_sub", ["-t", topic + "/event", "-C", "1", "-W", "60"])
        let client = try ControlClient(path: socketPath)
        // Until the subscriber is in place, events go unseen: change the volume until one is seen.
        var volume = 20
        XCTAssertTrue(waitFor(60) {
            volume += 1
            _ = client.request("volume \(volume)", timeout: 10)
            return waitFor(1) { !sub.0.isRunning }
        }, "no event published")
        let line = output(sub)
        XCTAssertTrue(line.contains("volume") && line.contains("→"), line)
        XCTAssertFalse(line.hasPrefix("event "), "the stream's prefix and time are left out: \(line)")
        XCTAssertNil(try retained(topic + "/event")[topic + "/event"], "events are not retained")
    }

    func testBrokerRestartReconnectsAndRepublishes() throws {
        try startBroker()
        startBridge(discovery: "")
        XCTAssertTrue(waitForRetained("queue", "2"))
        stopBroker()
        // Meanwhile the player changes: the new broker (no persistence) must learn it from the bridge.
        XCTAssertEqual((try ControlClient(path: socketPath)).request("volume 55", timeout: 10)?.hasPrefix("ok"), true)
        let start = Date()
        try startBroker()
        XCTAssertTrue(waitForRetained("volume", "55", 90), "not republished after the broker came back")
        XCTAssertTrue(waitForRetained("availability", "online"))
        print("MQTT: republished \(String(format: "%.1f", Date().timeIntervalSince(start))) s after the broker restarted")
    }

    func testABrokerThatNeverReadsStallsNothing() throws {
        // A TCP server that accepts and never reads or answers.
        port = Self.freePort()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: in_port_t(UInt16(port).bigEndian), sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        XCTAssertEqual(withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }, 0)
        XCTAssertEqual(listen(listener, 8), 0)
        startBridge()
        let client = try ControlClient(path: socketPath)
        XCTAssertEqual(client.request("play", timeout: 10)?.hasPrefix("ok"), true)
        var slowest = 0.0
        for i in 0..<20 {
            let t = Date()
            XCTAssertEqual(client.request(i % 2 == 0 ? "status" : "volume \(20 + i)", timeout: 20)?.hasPrefix("ok"), true)
            slowest = max(slowest, Date().timeIntervalSince(t))
            usleep(100_000)
        }
        print("MQTT: slowest status with a broker that never reads: \(Int(slowest * 1000)) ms")
        XCTAssertLessThan(slowest, 5)
        XCTAssertEqual(status()?.contains("stopped"), false)
        let t = Date()
        bridge?.close()
        bridge = nil
        XCTAssertLessThan(Date().timeIntervalSince(t), 30, "closing waited for the broker")
    }
}

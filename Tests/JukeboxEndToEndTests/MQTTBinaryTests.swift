// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The MQTT face through the real binary and a real mosquitto on 127.0.0.1: `run` with an
/// `mqtt` object announces and records; stopped, it says offline; started again without one, it
/// takes everything away; `jukebox mqtt-forget` (the package's prerm) does the same. Observed with
/// `mosquitto_sub`.
final class MQTTBinaryTests: DaemonTestCase {
    var broker: Process?
    var port = 0

    override func setUpWithError() throws {
        for tool in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw missingPeer("\(tool) missing (board/setup.sh installs mosquitto and mosquitto-clients)")
        }
        try super.setUpWithError()
        // A free port: bound by the kernel, then given to mosquitto.
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        close(fd)
        port = Int(UInt16(bigEndian: address.sin_port))
        let conf = dir + "/mosquitto.conf"
        let user = geteuid() == 0 ? "user root\n" : ""
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\n\(user)".write(toFile: conf, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", conf]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        broker = p
        XCTAssertTrue(waitFor(60) { self.retained("none/none", wait: 0.1) != nil }, "mosquitto did not listen")
    }

    override func tearDown() {
        if let p = broker {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        super.tearDown()
    }

    /// The retained messages under `filter` (topic → payload), read for `wait` seconds; nil when
    /// the broker cannot be reached.
    func retained(_ filter: String, wait: Double = 1) -> [String: String]? {
        let p = Process(), out = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        p.arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", filter, "-v", "--retained-only", "-W", String(max(1, Int(wait.rounded(.up))))]
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        // 27: timed out (after what was retained), the normal end here.
        guard p.terminationStatus == 0 || p.terminationStatus == 27 else { return nil }
        var found: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            found[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return found
    }

    func testTheDaemonAnnouncesSaysOfflineAndTakesItAwayWhenMQTTIsOffOrByMQTTForget() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 8000 * 120, sampleRate: 8000, channels: 1)
        let state = dir + "/state.json", record = dir + "/mqtt-announced.json"
        let mqtt: [String: Any] = ["host": "127.0.0.1", "port": port, "topic": "jukebox/cli", "positionInterval": 5]
        var daemon = try startDaemon([song], extra: ["state": state, "mqtt": mqtt])
        // 11 entities (the sleep timer's select and sensor, the speed number among them) and the tag
        // scanner (no buttons wired, no playlists, no battery).
        var configs: [String: String] = [:]
        XCTAssertTrue(waitFor(60) {
            configs = self.retained("homeassistant/#") ?? [:]
            return configs.count == 12 && FileManager.default.fileExists(atPath: record)
        }, "\(configs.keys.sorted())")
        XCTAssertEqual(retained("jukebox/cli/phase")?["jukebox/cli/phase"], "playing")
        daemon.process.terminate()
        XCTAssertEqual(daemon.wait(timeout: 20)?.status, 0)
        XCTAssertEqual(retained("jukebox/cli/availability")?["jukebox/cli/availability"], "offline", "no offline when stopped")

        // Started without "mqtt": what the record lists goes, then the record.
        daemon = try startDaemon([song], extra: ["state": state])
        XCTAssertTrue(waitFor(60) { !FileManager.default.fileExists(atPath: record) }, "the record stayed")
        XCTAssertEqual(retained("#"), [:], "still retained with MQTT off")
        daemon.process.terminate()
        _ = daemon.wait(timeout: 20)

        // Announced again, killed (the broker says `offline` for it: the last will), then
        // `mqtt-forget` (what the package's prerm runs once the service stopped).
        daemon = try startDaemon([song], extra: ["state": state, "mqtt": mqtt])
        XCTAssertTrue(waitFor(60) {
            (self.retained("homeassistant/#") ?? [:]).count == 12 && self.retained("jukebox/cli/availability")?["jukebox/cli/availability"] == "online"
        })
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.wait(timeout: 20)
        XCTAssertTrue(waitFor(60) { self.retained("jukebox/cli/availability")?["jukebox/cli/availability"] == "offline" }, "no last will")
        let forget = try Jukebox.run(["mqtt-forget", "--config", dir + "/c.json", "--timeout", "20"], timeout: 30)
        XCTAssertEqual(forget.status, 0, forget.stdout)
        XCTAssertTrue(forget.stdout.contains("127.0.0.1:\(port):"), forget.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: record))
        XCTAssertEqual(retained("#"), [:], "still retained after mqtt-forget")
        // Nothing left to do is no failure (a removal without MQTT ever on).
        XCTAssertEqual(try Jukebox.run(["mqtt-forget", "--config", dir + "/c.json"]).status, 0)
    }
}

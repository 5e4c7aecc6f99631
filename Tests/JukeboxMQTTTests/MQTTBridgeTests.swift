// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxFixtures
import JukeboxMQTT
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// The MQTT bridge between a real `mosquitto` (started here on 127.0.0.1, a free port) and a
/// player with the real engine on the paced silent output, observed by an MQTT client in the
/// test. Waits are generous and poll for what they wait for (the suite also runs under
/// qemu-aarch64, 20 times slower); bounds that must hold are lower bounds on gaps, or checks
/// that something did not happen where nothing but a fault could make it happen.
final class MQTTBridgeTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        private let monitor = Monitor()
        private var lines: [String] = []
        func add(_ line: String) { monitor.withLock { lines.append(line) } }
        var all: [String] { monitor.withLock { lines } }
    }

    var folder: String!
    var player: TestPlayer?
    var brokers: [Broker] = []
    var bridges: [MQTTBridge] = []
    var observers: [Observer] = []
    let topic = "jukebox/test"
    let logged = Lines()

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Broker.binary) else {
            throw missingPeer("\(Broker.binary) missing (board/setup.sh installs mosquitto)")
        }
        folder = makeTemporaryFolder()
    }

    override func tearDown() {
        for o in observers { o.close() }
        for b in bridges { b.close() }
        player?.quit()
        for b in brokers { b.kill() }
        observers = []
        bridges = []
        brokers = []
        player = nil
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }

    // MARK: helpers

    func startPlayer(stateFile: Bool = true, settings: Settings = Settings()) throws -> TestPlayer {
        let p = try TestPlayer(folder: folder, stateFile: stateFile, settings: settings)
        player = p
        return p
    }

    func startBroker(extra: String = "allow_anonymous true\n") throws -> Broker {
        let b = Broker(folder: folder, extra: extra)
        try b.start()
        brokers.append(b)
        return b
    }

    func observe(_ port: Int, filter: String = "#") throws -> Observer {
        let o = try Observer(port: port, filter: filter)
        observers.append(o)
        return o
    }

    /// A started bridge to 127.0.0.1:`port` for the test player (topic `jukebox/test`).
    @discardableResult
    func startBridge(port: Int, file: StaticString = #filePath, line: UInt = #line,
                     _ configure: (inout MQTTSettings, inout MQTTBridge.Context) -> Void = { _, _ in }) -> MQTTBridge {
        var settings = MQTTSettings(host: "127.0.0.1", port: port, topic: topic, positionInterval: 1)
        var context = MQTTBridge.Context(socketPath: folder + "/control")
        context.volumeRange = 10...90
        context.version = "jukebox test"
        configure(&settings, &context)
        let logged = self.logged
        let bridge = MQTTBridge(settings: settings, context: context) { level, text in logged.add("\(level) \(text)") }
        XCTAssertNil(bridge.start(), file: file, line: line)
        bridges.append(bridge)
        return bridge
    }

    func json(_ text: String?) -> [String: Any]? {
        text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func number(_ any: Any?) -> Double? { (any as? NSNumber)?.doubleValue }

    // MARK: Home Assistant discovery

    func testDiscoveryFollowsHomeAssistantsSchemaRules() throws {
        _ = try startPlayer()
        let broker = try startBroker()
        let lists = folder + "/playlists"
        try FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: false)
        for name in ["Morning.m3u", "Bedtime songs.m3u8", ".hidden.m3u", "notes.txt"] {
            try "../a.wav\n".write(toFile: lists + "/" + name, atomically: true, encoding: .utf8)
        }
        startBridge(port: broker.port) { _, c in
            c.buttons = [.play, .next, .stop]
            c.playlistFolders = [lists]
        }
        let o = try observe(broker.port)
        // 13 entities and the tag scanner, and 5 device triggers: play and next short and long
        // (tap plus long or hold bound by default), stop short (it only has a press).
        let expected = 18
        var configs: [String: String] = [:]
        XCTAssertTrue(waitFor(60) {
            configs = o.messages.reduce(into: [:]) { $0[$1.topic] = $1.payload }.filter { $0.key.hasPrefix("homeassistant/") && !$0.value.isEmpty }
            // The state topics too (under emulation the volume came after the configs and the state).
            return configs.count >= expected && o.latest(self.topic + "/state") != nil && o.latest(self.topic + "/volume") != nil
        }, "discovery: \(configs.keys.sorted())")
        XCTAssertEqual(configs.count, expected, "\(configs.keys.sorted())")
        let retained = o.messages.reduce(into: [String: String]()) { $0[$1.topic] = $1.payload }

        // HA's rules (homeassistant/components/mqtt: the schemas of each platform, discovery.py).
        func isTopic(_ t: Any?) -> Bool {
            guard let t = t as? String else { return false }
            return !t.isEmpty && !t.contains("+") && !t.contains("#") && t.utf8.count < 65536
        }
        let required: [String: [String]] = [
            "sensor": ["state_topic"], "button": ["command_topic"], "number": ["command_topic"], "select": ["command_topic", "options"],
            "switch": ["command_topic"], "tag": ["topic"], "device_automation": ["automation_type", "topic", "type", "subtype", "device"],
        ]
        var uniqueIDs = Set<String>(), triggers = Set<String>(), listed: [String] = []
        for (name, payload) in configs.sorted(by: { $0.key < $1.key }) {
            let parts = name.split(separator: "/").map(String.init)
            XCTAssertEqual(parts.count, 5, name)
            XCTAssertEqual(parts.last, "config", name)
            for id in parts[2...3] {
                XCTAssertTrue(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }, "node or object id \(id)")
            }
            let component = parts[1]
            let c = try XCTUnwrap(json(payload), "\(name) is not a JSON object: \(payload)")
            for key in required[component] ?? ["?"] { XCTAssertNotNil(c[key], "\(name) lacks \(key)") }
            let device = try XCTUnwrap(c["device"] as? [String: Any], "\(name): no device block")
            XCTAssertFalse((device["identifiers"] as? [String] ?? []).isEmpty, "\(name): a device needs an identifier")
            XCTAssertEqual(device["identifiers"] as? [String], ["jukebox_jukebox_test"], name)
            XCTAssertEqual(device["name"] as? String, "jukebox test", name)
            for (key, value) in c where key.hasSuffix("_topic") || key == "topic" {
                XCTAssertTrue(isTopic(value), "\(name): \(key) \(value)")
            }
            if let command = c["command_topic"] as? String { XCTAssertTrue(command.hasPrefix(topic + "/cmd/"), "\(name): \(command)") }
            // Every state the entity reads is there, retained.
            for key in ["state_topic", "json_attributes_topic"] {
                if let state = c[key] as? String { XCTAssertNotNil(retained[state], "\(name): nothing on \(state)") }
            }
            switch component {
            case "tag":
                XCTAssertEqual(c["topic"] as? String, topic + "/card")
                listed.append("tag scanner (card ids on \(topic)/card)")
            case "device_automation":
                XCTAssertEqual(c["automation_type"] as? String, "trigger")
                let pair = "\(c["type"] ?? "")/\(c["subtype"] ?? "")"
                XCTAssertTrue(triggers.insert(pair).inserted, "type and subtype twice: \(pair)")
                XCTAssertTrue((c["topic"] as? String)?.hasPrefix(topic + "/button/") == true, name)
                XCTAssertNotNil(c["payload"] as? String, name)
                listed.append("device trigger \(c["type"]!) \(c["subtype"]!)")
            default:
                let id = try XCTUnwrap(c["unique_id"] as? String, "\(name): an entity on a device needs a unique_id")
                XCTAssertTrue(uniqueIDs.insert(id).inserted, "unique_id \(id) twice")
                XCTAssertEqual(c["availability_topic"] as? String, topic + "/availability", name)
                XCTAssertEqual(c["payload_available"] as? String, "online", name)
                XCTAssertEqual(c["payload_not_available"] as? String, "offline", name)
                XCTAssertNil(c["object_id"], "\(name): object_id is deprecated in HA")
                let label = try XCTUnwrap(c["name"] as? String, name)
                // Home Assistant's entity id: the device's name and the entity's, slugified.
                let slug = "jukebox test \(label)".lowercased().split { !($0.isLetter || $0.isNumber) }.joined(separator: "_")
                listed.append("\(component).\(slug) \"\(label)\"")
            }
        }
        print("MQTT: Home Assistant lists the device \"jukebox test\" with:\n  " + listed.joined(separator: "\n  "))

        // What each entity is.
        let volume = try XCTUnwrap(json(configs["homeassistant/number/jukebox_test/volume/config"]))
        XCTAssertEqual(number(volume["min"]), 10)
        XCTAssertEqual(number(volume["max"]), 90)
        XCTAssertLessThan(number(volume["min"]) ?? 1, number(volume["max"]) ?? 0)
        let speed = try XCTUnwrap(json(configs["homeassistant/number/jukebox_test/speed/config"]))
        XCTAssertEqual(number(speed["min"]), 0.75)
        XCTAssertEqual(number(speed["max"]), 2)
        XCTAssertEqual(speed["command_topic"] as? String, topic + "/cmd/speed")
        XCTAssertEqual(speed["value_template"] as? String, "{{ value if value else 'None' }}", "an empty topic is unknown, not a bad number")
        let repeatSelect = try XCTUnwrap(json(configs["homeassistant/select/jukebox_test/repeat/config"]))
        XCTAssertEqual(repeatSelect["options"] as? [String], ["off", "one", "all"])
        let sleepSelect = try XCTUnwrap(json(configs["homeassistant/select/jukebox_test/sleep/config"]))
        XCTAssertEqual(sleepSelect["options"] as? [String], ["off", "15", "30", "45", "60", "90", "track", "chapter", "folder"])
        XCTAssertEqual(retained[topic + "/sleep"], "off")
        let playlists = try XCTUnwrap(json(configs["homeassistant/select/jukebox_test/playlist/config"]))
        XCTAssertEqual(playlists["options"] as? [String], ["Bedtime songs", "Morning"])
        let sensor = try XCTUnwrap(json(configs["homeassistant/sensor/jukebox_test/now_playing/config"]))
        XCTAssertEqual(sensor["json_attributes_topic"] as? String, topic + "/state")
        for attribute in ["artist", "album", "position", "duration"] {
            XCTAssertTrue((sensor["json_attributes_template"] as? String)?.contains("'\(attribute)'") == true, attribute)
        }
        for object in ["play_pause", "next", "previous", "stop"] {
            XCTAssertNotNil(configs["homeassistant/button/jukebox_test/\(object)/config"], object)
        }
        XCTAssertNotNil(configs["homeassistant/switch/jukebox_test/shuffle/config"])
        XCTAssertEqual(triggers, ["button_short_press/play", "button_long_press/play", "button_short_press/next",
                                  "button_long_press/next", "button_short_press/stop"])
    }

    // MARK: commands

    func testEveryControlCommandRoundTripsAndTheRetainedStateFollows() throws {
        let player = try startPlayer()
        let broker = try startBroker()
        let lists = folder + "/playlists"
        try FileManager.default.createDirectory(atPath: lists, withIntermediateDirectories: false)
        try "../b.wav\n../a.wav\n".write(toFile: lists + "/Morning.m3u", atomically: true, encoding: .utf8)
        startBridge(port: broker.port) { _, c in c.playlistFolders = [lists] }
        let o = try observe(broker.port)
        XCTAssertTrue(o.sees(topic + "/queue", "2"), "no queue length")
        func state(_ name: String, _ value: String, _ why: String) {
            XCTAssertTrue(o.sees(topic + "/" + name, value), "\(why): \(name) is \(o.latest(topic + "/" + name) ?? "nothing"), not \(value)")
        }
        // Command, payload, what the reply starts with.
        let commands: [(String, String, String)] = [
            ("status", "", "ok ■"), ("status", "--json", "ok {"), ("version", "", "ok jukebox"), ("help", "", "ok status"),
            ("queue", "", "  "), ("play", "", "ok ▶"), ("pause", "", "ok ⏸"), ("toggle", "", "ok ▶"),
            ("seek", "1:00", "ok ▶"), ("next", "", "ok ▶"), ("prev", "", "ok ▶"), ("previous", "", "ok ▶"),
            ("volume", "40", "ok"), ("vol", "+5", "ok"), ("shuffle", "on", "ok"), ("shuffle", "off", "ok"), ("repeat", "one", "ok"),
            ("add", folder + "/b.wav", "ok 1 track added"), ("save", "", "ok saved to"), ("sleep", "30", "ok"), ("sleep", "off", "ok"),
            ("interrupt", "begin a test", "ok released"), ("interrupt", "end", "ok"), ("diag", "", "  jukebox"), ("log", "5", "ok"),
            ("card", "assign 1234 /srv/x", "error: no cards map"), ("load", lists + "/Morning.m3u", "ok 2 tracks loaded"),
            ("playlist", "Morning", "ok 2 tracks loaded"), ("stop", "", "ok ■"), ("clear", "", "ok"),
        ]
        for (command, payload, starts) in commands {
            let reply = o.command(topic, command, payload)
            XCTAssertTrue(reply?.hasPrefix(starts) == true, "\(command) \(payload): \(reply ?? "no reply")")
            switch (command, payload) {
            case ("play", _): state("phase", "playing", "play"); state("file", folder + "/a.wav", "play"); state("title", "Alpha", "play")
                state("artist", "Ann", "play"); state("album", "First", "play"); state("duration", "120.0", "play")
            case ("pause", _): state("phase", "paused", "pause")
            case ("seek", _):
                XCTAssertTrue(waitFor(60) { (Double(o.latest(self.topic + "/position") ?? "") ?? 0) >= 59.5 }, "seek: position \(o.latest(topic + "/position") ?? "")")
            case ("next", _): state("file", folder + "/b.wav", "next"); state("title", "Beta", "next")
            case ("previous", _): state("file", folder + "/a.wav", "previous")
            case ("volume", _): state("volume", "40", "volume")
            case ("vol", _): state("volume", "45", "vol +5")
            case ("shuffle", "on"): state("shuffle", "on", "shuffle on")
            case ("shuffle", "off"): state("shuffle", "off", "shuffle off")
            case ("repeat", _): state("repeat", "one", "repeat")
            case ("add", _): state("queue", "3", "add")
            case ("sleep", "30"): state("sleep", "30", "sleep 30"); state("sleep_left", "30", "sleep 30")
            case ("sleep", "off"): state("sleep", "off", "sleep off"); state("sleep_left", "0", "sleep off")
            case ("interrupt", "begin a test"): state("phase", "interrupted", "interrupt")
            case ("playlist", _): state("queue", "2", "playlist"); state("file", folder + "/b.wav", "playlist")
            case ("stop", _): state("phase", "stopped", "stop")
            case ("clear", _): state("queue", "0", "clear")
            default: break
            }
        }
        // What Home Assistant's entities send: an empty press, a number as "41.0", a select's option.
        XCTAssertEqual(o.command(topic, "volume", "41.0")?.hasPrefix("error"), true, "the number entity's command_template makes it an integer")
        XCTAssertEqual(o.command(topic, "repeat", "all")?.hasPrefix("ok"), true)
        state("repeat", "all", "the select")
        // Untrusted payloads: a newline does not start a second command; the stream and a yield
        // are the bridge's or need a connection; an unknown playlist or command is an error.
        XCTAssertNotNil(player.ask("add " + folder + "/a.wav"))
        XCTAssertEqual(o.command(topic, "play", "")?.hasPrefix("ok ▶"), true)
        XCTAssertTrue(o.command(topic, "volume", "30\nstop")?.hasPrefix("error") == true)
        XCTAssertEqual(player.status()?["phase"] as? String, "playing", "the smuggled stop ran")
        // The speed number sends what Home Assistant formats: "1.25", "1.0".
        XCTAssertEqual(o.command(topic, "speed", "1.25")?.hasPrefix("ok"), true)
        state("speed", "1.25", "the speed number")
        XCTAssertEqual(o.command(topic, "speed", "1.0")?.hasPrefix("ok"), true)
        state("speed", "1", "the speed number back at 1")
        for (command, payload) in [("events", ""), ("yield", "begin"), ("source", "begin airplay"), ("playlist", "Nope"), ("nosuch", ""), ("a.b", "")] {
            XCTAssertTrue(o.command(topic, command, payload)?.hasPrefix("error") == true, command)
        }
        XCTAssertTrue(o.command(topic, "volume", String(repeating: "9", count: 2000))?.hasPrefix("error: payload above") == true)
    }

    // MARK: position

    func testPositionIsPublishedAtMostEveryIntervalWhilePlayingAndAtOnceOnAJump() throws {
        let player = try startPlayer()
        let broker = try startBroker()
        startBridge(port: broker.port) { s, _ in s.positionInterval = 2 }
        let o = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(o.sees(topic + "/queue", "2"))
        XCTAssertEqual(player.ask("play")?.hasPrefix("ok ▶"), true)
        XCTAssertTrue(o.sees(topic + "/phase", "playing"))
        let start = o.messages.count
        // The player's status is read about once a second: positions published on every read
        // would come about a second apart.
        XCTAssertTrue(waitFor(60) { o.messages.dropFirst(start).filter { $0.topic == self.topic + "/position" }.count >= 3 })
        let times = o.messages.dropFirst(start).filter { $0.topic == topic + "/position" }.map(\.at)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        print("MQTT: position gaps while playing with positionInterval 2: \(gaps.map { String(format: "%.2f", $0) }.joined(separator: ", ")) s")
        // Published every read would be about 1 s apart; delivery jitter under emulation is allowed for.
        for gap in gaps { XCTAssertGreaterThanOrEqual(gap, 1.5, "positions \(gaps)") }
        // The state object carries the published position, so it changes with it, not with every
        // read: while the three positions went out, at most one state each (and the first).
        let window = o.messages.dropFirst(start).prefix { $0.at <= times[times.count - 1] }
        let states = window.filter { $0.topic == topic + "/state" }.count
        XCTAssertLessThanOrEqual(states, times.count + 1, "state messages \(states) for \(times.count) positions")
        // Paused, the position does not run: nothing is due but a jump, which goes out at once.
        XCTAssertEqual(player.ask("pause")?.hasPrefix("ok ⏸"), true)
        XCTAssertTrue(o.sees(topic + "/phase", "paused"))
        XCTAssertEqual(player.ask("seek 1:30")?.hasPrefix("ok"), true)
        XCTAssertTrue(o.sees(topic + "/position", "90.0"), "a seek while paused: \(o.latest(topic + "/position") ?? "nothing")")
        // The state object is its own message, published after the position's: waited for too.
        XCTAssertTrue(waitFor(10) { self.number(self.json(o.latest(self.topic + "/state"))?["position"]) == 90 },
                      "the state after the seek: \(o.latest(topic + "/state") ?? "nothing")")
        XCTAssertEqual(player.ask("next")?.hasPrefix("ok"), true)
        XCTAssertTrue(o.sees(topic + "/position", "0.0"), "another track: \(o.latest(topic + "/position") ?? "nothing")")
    }

    // MARK: chapters

    /// An audiobook's chapter (an MP3 with ID3 chapters, read by the real tag reader): its title
    /// retained under `chapter`, and index, count and title in `state`; `next` moves by chapter.
    func testTheChapterPlayingIsInTheStateAndItsTopic() throws {
        let player = try startPlayer()
        let broker = try startBroker()
        let book = folder + "/book.mp3"
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/chapters.mp3").path, toPath: book)
        startBridge(port: broker.port) { s, _ in s.discoveryPrefix = "" }
        let o = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(o.sees(topic + "/queue", "2"))
        XCTAssertTrue(o.sees(topic + "/chapter", ""), "no chapter: empty")
        // The state object is its own message, which may come after the chapter's: waited for.
        XCTAssertTrue(waitFor(10) { self.json(o.latest(self.topic + "/state"))?["chapter"] is NSNull },
                      "no chapter in the state: \(o.latest(topic + "/state") ?? "nothing")")
        // Paused in the book, so the chapter stays while the test looks.
        XCTAssertEqual(player.ask("load " + book)?.hasPrefix("ok"), true)
        XCTAssertEqual(player.ask("pause")?.hasPrefix("ok"), true)
        XCTAssertTrue(o.sees(topic + "/chapter", "Opening"), "chapter: \(o.latest(topic + "/chapter") ?? "nothing")")
        XCTAssertEqual(player.ask("next")?.hasPrefix("ok"), true)
        XCTAssertTrue(o.sees(topic + "/chapter", "Café au lait"), "chapter: \(o.latest(topic + "/chapter") ?? "nothing")")
        XCTAssertTrue(waitFor(60) { (self.json(o.latest(self.topic + "/state"))?["chapter"] as? [String: Any])?["index"] as? Int == 2 })
        let chapter = json(o.latest(topic + "/state"))?["chapter"] as? [String: Any]
        XCTAssertEqual(chapter?["count"] as? Int, 3)
        XCTAssertEqual(chapter?["title"] as? String, "Café au lait")
        XCTAssertEqual(o.latest(topic + "/title"), "Chapters in ID3", "the title stays the file's")
        XCTAssertEqual(player.ask("clear")?.hasPrefix("ok"), true)
        XCTAssertTrue(o.sees(topic + "/chapter", ""), "no file, no chapter")
    }

    // MARK: events

    func testEventsCardsAndGesturesArePublishedNotRetained() throws {
        let player = try startPlayer()
        let broker = try startBroker()
        startBridge(port: broker.port) { s, _ in s.discoveryPrefix = "" }
        let o = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(o.sees(topic + "/queue", "2"))
        // The bridge's events stream may open after its first status: repeat until an event is seen.
        var volume = 20
        XCTAssertTrue(waitFor(60) {
            volume += 1
            _ = player.ask("volume \(volume)")
            return waitFor(1) { o.latest(self.topic + "/event")?.hasPrefix("volume \(volume)") == true }
        }, "no event published")
        let line = o.latest(topic + "/event") ?? ""
        XCTAssertTrue(line.hasSuffix("→ stopped"), "the event and the phase after it, without the time: \(line)")
        player.post(.cardRead(id: "04A1B2C3", at: monotonicNow()))
        XCTAssertTrue(o.sees(topic + "/card", "04A1B2C3"), "card: \(o.latest(topic + "/card") ?? "nothing")")
        // A short press of next (the loop's clock is CLOCK_MONOTONIC), then a long one of play.
        // The release follows the press at once: waiting for the press's event first let the
        // loop's hold timer call it long when the emulator took over a second to publish it.
        let pressed = monotonicNow()
        player.post(.buttonEdge(.next, pressed: true, at: pressed))
        player.post(.buttonEdge(.next, pressed: false, at: pressed + 0.05))
        XCTAssertTrue(o.sees(topic + "/button/next", "short"), "gesture: \(o.latest(topic + "/button/next") ?? "nothing")")
        XCTAssertTrue(waitFor(10) { o.messages.contains { $0.topic == self.topic + "/event" && $0.payload.hasPrefix("button next down") } },
                      "the press's own event")
        player.post(.buttonEdge(.play, pressed: true, at: monotonicNow()))
        XCTAssertTrue(o.sees(topic + "/button/play", "long"), "held: \(o.latest(topic + "/button/play") ?? "nothing")")
        player.post(.buttonEdge(.play, pressed: false, at: monotonicNow()))
        XCTAssertTrue(o.messages.contains { $0.topic == topic + "/event" && $0.payload.hasPrefix("gesture next short") })
        // A card's tracks and a removal are no card read.
        XCTAssertEqual(o.messages.filter { $0.topic == topic + "/card" }.map(\.payload), ["04A1B2C3"])
        // The last message: a file that is no audio, skipped.
        let bad = folder + "/bad.wav"
        try Data(repeating: 0x42, count: 5000).write(to: URL(fileURLWithPath: bad))
        XCTAssertEqual(player.ask("clear")?.hasPrefix("ok"), true)
        XCTAssertEqual(player.ask("add " + bad)?.hasPrefix("ok"), true)
        XCTAssertEqual(player.ask("add " + folder + "/b.wav")?.hasPrefix("ok"), true)
        _ = player.ask("play")
        func said() -> [String] { o.messages.filter { $0.topic == self.topic + "/message" && !$0.payload.isEmpty }.map { $0.payload } }
        XCTAssertTrue(waitFor(60) { o.latest(self.topic + "/message")?.contains("bad.wav") == true && o.latest(self.topic + "/title") == "b" },
                      "messages: \(said())")
        print("MQTT: \(topic)/message after a file that is no audio: \(said())")
        // None of it is retained: a new subscriber gets the state, not the events.
        let late = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(waitFor(60) { late.retained()[self.topic + "/volume"] == String(volume) })
        for name in ["event", "card", "button/next", "button/play", "reply"] { XCTAssertNil(late.retained()[topic + "/" + name], name) }
    }

    // MARK: the broker goes away

    func testBrokerKilledAndRestartedMidPlayReconnectsRepublishesAndPlaybackNeverPauses() throws {
        let player = try startPlayer()
        let broker = try startBroker()
        let bridge = startBridge(port: broker.port)
        let o = try observe(broker.port, filter: topic + "/#")
        XCTAssertEqual(player.ask("play")?.hasPrefix("ok ▶"), true)
        XCTAssertTrue(o.sees(topic + "/phase", "playing"))
        o.close()
        XCTAssertTrue(waitFor(60) { (self.number(player.status()?["position"]) ?? 0) > 0.2 }, "not playing")
        let before = try XCTUnwrap(number(player.status()?["position"])), start = monotonicNow()
        broker.kill()
        XCTAssertTrue(waitFor(60) { !bridge.isConnected }, "the loss was not noticed")
        // Meanwhile the player changes; a new broker (no persistence) must learn it from the bridge.
        XCTAssertEqual(player.ask("volume 55")?.hasPrefix("ok"), true)
        XCTAssertEqual(player.status()?["phase"] as? String, "playing")
        try broker.start()
        let listening = monotonicNow()
        let again = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(waitFor(90) { again.latest(self.topic + "/volume") == "55" && again.latest(self.topic + "/availability") == "online" },
                      "not republished after the broker came back")
        let republished = monotonicNow() - listening
        print("MQTT: state republished \(String(format: "%.2f", republished)) s after the broker listened again "
              + "(\(String(format: "%.2f", monotonicNow() - start)) s after it was killed)")
        XCTAssertEqual(bridge.stats.connects, 2)
        // Retained, complete and current, for whoever subscribes next.
        // The broker hands the retained messages over one by one: wait for every one asserted (under
        // emulation the discovery config came after the state and the queue had).
        let late = try observe(broker.port)
        let expected = ["availability", "phase", "title", "file", "volume", "queue", "state"].map { topic + "/" + $0 }
            + ["homeassistant/sensor/jukebox_test/now_playing/config"]
        XCTAssertTrue(waitFor(60) { let r = late.retained(); return expected.allSatisfy { r[$0] != nil } }, "retained: \(late.retained().keys.sorted())")
        let retained = late.retained()
        XCTAssertEqual(retained[topic + "/availability"], "online")
        XCTAssertEqual(retained[topic + "/phase"], "playing")
        XCTAssertEqual(retained[topic + "/title"], "Alpha")
        XCTAssertEqual(retained[topic + "/file"], folder + "/a.wav")
        XCTAssertEqual(retained[topic + "/volume"], "55")
        XCTAssertEqual(retained[topic + "/queue"], "2")
        XCTAssertEqual(json(retained[topic + "/state"])?["volume"] as? Int, 55)
        XCTAssertNotNil(retained["homeassistant/sensor/jukebox_test/now_playing/config"])
        // Playback went on all along: still playing, and the heard position ran with the clock.
        let status = try XCTUnwrap(player.status())
        XCTAssertEqual(status["phase"] as? String, "playing")
        let ran = (number(status["position"]) ?? 0) - before, elapsed = monotonicNow() - start
        XCTAssertGreaterThan(ran, elapsed * 0.5, "the position ran \(ran) s in \(elapsed) s")
    }

    func testABrokerThatStopsReadingStallsNeitherThePlayerNorTheBridge() throws {
        let player = try startPlayer(stateFile: false)
        let stuck = try StuckBroker()
        defer { stuck.close() }
        // A long topic (every message carries it) fills the buffers in fewer changes.
        let bridge = startBridge(port: stuck.port) { s, _ in s.topic = "jukebox/" + String(repeating: "t", count: 180) }
        XCTAssertTrue(waitFor(60) { stuck.isStuck && bridge.isConnected }, "the fake broker did not take the connection")
        let control = try ControlClient(path: player.socketPath)
        XCTAssertEqual(player.ask("play")?.hasPrefix("ok ▶"), true)
        XCTAssertTrue(waitFor(60) { (self.number(player.status()?["position"]) ?? 0) > 0.2 }, "not playing")
        let p0 = try XCTUnwrap(number(player.status()?["position"])), t0 = monotonicNow()
        // Changes make events and state to publish, which the broker does not read: the socket's
        // buffers fill, then the bridge's own queue; from then on events are dropped.
        var slowest = 0.0, changes = 0
        func change() {
            let t = monotonicNow()
            let reply = control.request("volume \(20 + changes % 60)", timeout: 30)
            slowest = max(slowest, monotonicNow() - t)
            XCTAssertEqual(reply?.hasPrefix("ok"), true, "change \(changes): \(reply ?? "no reply")")
            changes += 1
        }
        while bridge.stats.dropped == 0, changes < 5000 { change() }
        let flood = changes
        // Then two seconds of a change every 0.1 s, the broker still not reading: a player held
        // up by it would show in its replies and its position.
        let calmUntil = monotonicNow() + 2
        while monotonicNow() < calmUntil {
            change()
            usleep(100_000)
        }
        XCTAssertGreaterThan(bridge.stats.dropped, 0, "the broker's backlog never filled in \(changes) changes")
        // The bridge's thread is not held by the broker either: it keeps reading the player.
        let reads = bridge.stats.statusReads
        XCTAssertTrue(waitFor(60) { _ = player.ask("volume +1"); return bridge.stats.statusReads >= reads + 3 }, "the bridge stopped reading the player")
        let status = try XCTUnwrap(player.status())
        let ran = (number(status["position"]) ?? 0) - p0, elapsed = monotonicNow() - t0
        print("MQTT: broker not reading: \(flood) changes until the queue was full, \(changes) in all, \(bridge.stats.dropped) events dropped, "
              + "slowest reply \(Int(slowest * 1000)) ms, position ran \(String(format: "%.1f", ran)) s in \(String(format: "%.1f", elapsed)) s")
        XCTAssertEqual(status["phase"] as? String, "playing")
        XCTAssertGreaterThan(ran, elapsed * 0.5, "the position ran \(ran) s in \(elapsed) s")
        XCTAssertLessThan(slowest, 5, "a reply took \(slowest) s")
        let t = monotonicNow()
        bridge.close()
        bridges = []
        XCTAssertLessThan(monotonicNow() - t, 10, "closing waited for the broker")
    }

    func testASubscriberThatNeverReadsHoldsUpNoOne() throws {
        let player = try startPlayer(stateFile: false)
        let broker = try startBroker()
        startBridge(port: broker.port)
        let o = try observe(broker.port, filter: topic + "/#")
        XCTAssertTrue(o.sees(topic + "/queue", "2"))
        // A client that subscribes to everything and never reads again (a small receive buffer).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: broker.port)
        XCTAssertEqual(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }, 0)
        // CONNECT then SUBSCRIBE "#", appended in steps (Swift 6.0.3 cannot type-check one sum).
        var hello: [UInt8] = [0x10, 17, 0, 4]
        hello += Array("MQTT".utf8)
        hello += [4, 0x02, 0, 60, 0, 5]
        hello += Array("stuck".utf8)
        hello += [0x82, 6, 0, 1, 0, 1]
        hello += Array("#".utf8)
        hello += [0]
        XCTAssertEqual(hello.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, hello.count)
        var slowest = 0.0
        for i in 0..<200 {
            let t = monotonicNow()
            XCTAssertEqual(player.ask("volume \(20 + i % 60)")?.hasPrefix("ok"), true)
            slowest = max(slowest, monotonicNow() - t)
        }
        XCTAssertLessThan(slowest, 5)
        XCTAssertTrue(o.sees(topic + "/volume", String(20 + 199 % 60)), "the others still hear: \(o.latest(topic + "/volume") ?? "")")
        XCTAssertEqual(o.command(topic, "status")?.hasPrefix("ok"), true)
    }

    // MARK: TLS and secrets

    func testTLSWithATestCAAndAPasswordFileReadableOnlyByTheService() throws {
        for tool in ["/usr/bin/openssl", "/usr/bin/mosquitto_passwd"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw missingPeer("\(tool) missing")
        }
        _ = try startPlayer(stateFile: false)
        let ca = try TestCA(folder: folder)
        try runTool("/usr/bin/mosquitto_passwd", ["-b", "-c", folder + "/passwd", "box", "s3cret"], in: folder)
        let broker = try startBroker(extra: """
            cafile \(ca.ca)
            certfile \(ca.serverCert)
            keyfile \(ca.serverKey)
            require_certificate true
            allow_anonymous false
            password_file \(folder!)/passwd

            """)
        let passwordFile = folder + "/mqtt-password"
        try "s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o640)
        func configure(_ s: inout MQTTSettings, _ c: inout MQTTBridge.Context) {
            s.tls = MQTTSettings.TLS(ca: ca.ca, cert: ca.clientCert, key: ca.clientKey)
            s.username = "box"
            s.passwordFile = passwordFile
        }
        let bridge = startBridge(port: broker.port, configure)
        let o = try Observer(port: broker.port, filter: topic + "/#", tls: (ca.ca, ca.clientCert, ca.clientKey), username: "box", password: "s3cret")
        observers.append(o)
        XCTAssertTrue(o.sees(topic + "/availability", "online"), "no TLS connection: \(logged.all)")
        XCTAssertTrue(o.sees(topic + "/queue", "2"))
        XCTAssertTrue(bridge.isConnected)

        // Files with a secret that every user can read are refused, with what to do.
        for (file, key) in [(passwordFile, "passwordFile"), (ca.clientKey, "tls.key")] {
            chmod(file, 0o644)
            var settings = MQTTSettings(host: "127.0.0.1", port: broker.port, topic: "jukebox/other")
            var context = MQTTBridge.Context(socketPath: folder + "/control")
            configure(&settings, &context)
            let refused = MQTTBridge(settings: settings, context: context) { _, _ in }
            let problem = refused.start() ?? ""
            refused.close()
            XCTAssertTrue(problem.contains(key) && problem.contains("readable by every user") && problem.contains("chmod 640"), problem)
            chmod(file, 0o600)
        }
        // The password in the config: the config itself must not be readable by everyone.
        let config = folder + "/config.json"
        try "{}".write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o644)
        var inline = MQTTSettings(host: "127.0.0.1", port: broker.port, topic: "jukebox/other")
        inline.username = "box"
        inline.password = "s3cret"
        var context = MQTTBridge.Context(socketPath: folder + "/control")
        context.configPath = config
        let refused = MQTTBridge(settings: inline, context: context) { _, _ in }
        XCTAssertTrue(refused.start()?.contains("the config, which holds the password,") == true)
        refused.close()

        // A broker whose certificate another CA signed is not trusted: no connection, said why.
        let other = try TestCA(folder: folder, name: "other")
        let untrusting = startBridge(port: broker.port) { s, c in
            configure(&s, &c)
            s.topic = "jukebox/untrusting"
            s.tls?.ca = other.ca
        }
        // libmosquitto's words for it differ by version: Debian 12's says "TLS", Debian 13's (the
        // arm64 suite) "Protocol error"; either way it names the broker and does not connect.
        XCTAssertTrue(waitFor(60) {
            self.logged.all.contains { line in
                line.contains("127.0.0.1:\(broker.port)") && ["TLS", "certificate", "Protocol error"].contains { line.contains($0) }
            }
        }, "\(logged.all)")
        XCTAssertFalse(untrusting.isConnected)
        XCTAssertNil(o.latest("jukebox/untrusting/availability"))
    }

    // MARK: taking it away

    /// `mqtt-forget` runs as root (the package's prerm): what it leaves stays the service's.
    func testTheRecordWrittenByRootBelongsToTheFoldersOwner() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to own files as another user") }
        let owned = folder + "/service-owned"
        XCTAssertEqual(mkdir(owned, 0o700), 0)
        XCTAssertEqual(chown(owned, 65534, 65534), 0)
        let record = MQTTRecord(path: owned + "/" + MQTTRecord.fileName)
        let settings = MQTTSettings(host: "broker.example")
        XCTAssertNil(record.update { $0 = [MQTTAnnouncement(settings, port: 1883, topic: "jukebox/x", retained: ["jukebox/x/state"])] })
        var st = stat()
        XCTAssertEqual(stat(record.path, &st), 0)
        XCTAssertEqual(st.st_uid, 65534)
        XCTAssertEqual(st.st_gid, 65534)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(record.load().first?.retained, ["jukebox/x/state"])
    }

    func testDiscoveryIsRemovedWhenTurnedOffAndWhenMQTTIsOff() throws {
        _ = try startPlayer(stateFile: false)
        let broker = try startBroker()
        let record = MQTTRecord(path: folder + "/" + MQTTRecord.fileName)
        let first = startBridge(port: broker.port) { _, c in
            c.record = record
            c.buttons = [.play]
        }
        let o = try observe(broker.port)
        let sensor = "homeassistant/sensor/jukebox_test/now_playing/config"
        XCTAssertTrue(waitFor(60) { record.load().first?.retained.contains(sensor) == true }, "nothing recorded")
        let announced = try XCTUnwrap(record.load().first)
        XCTAssertEqual(announced.topic, topic)
        XCTAssertEqual(announced.port, broker.port)
        XCTAssertTrue(announced.retained.contains(topic + "/availability"))
        let configs = announced.retained.filter { $0.hasPrefix("homeassistant/") }
        XCTAssertEqual(configs.count, 14, "\(configs)")
        var st = stat()
        XCTAssertEqual(stat(record.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600, "the record may hold the password")
        XCTAssertTrue(waitFor(60) { configs.allSatisfy { o.latest($0)?.isEmpty == false } }, "configs not seen")
        first.close()
        bridges = []

        // Discovery turned off on the same broker: the next run empties the configs it no longer has.
        let second = startBridge(port: broker.port) { s, c in
            s.discoveryPrefix = ""
            c.record = record
        }
        XCTAssertTrue(waitFor(60) { configs.allSatisfy { o.latest($0) == "" } }, "configs left: \(configs.filter { o.latest($0) != "" })")
        XCTAssertTrue(o.sees(topic + "/availability", "online"))
        second.close()
        bridges = []

        // MQTT turned off: what the record lists goes, state and all, and then the record.
        let logged = self.logged
        let forgetter = MQTTForgetter(record: record) { level, text in logged.add("\(level) \(text)") }
        XCTAssertTrue(waitFor(60) { !FileManager.default.fileExists(atPath: record.path) }, "\(logged.all)")
        forgetter.close()
        let late = try observe(broker.port)
        // Retained messages come right after the subscription, before anything published later.
        late.publish("sync/late", "x")
        XCTAssertTrue(waitFor(60) { late.latest("sync/late") == "x" })
        let left = late.retained().filter { $0.key != "sync/late" }
        XCTAssertEqual(left, [:], "still retained after MQTT was turned off")
    }
}

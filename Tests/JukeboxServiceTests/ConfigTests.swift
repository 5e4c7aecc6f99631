// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import XCTest

final class ConfigTests: XCTestCase {
    func parse(_ text: String) throws -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testSourcesAreReadAndWrongOnesRefused() throws {
        let (c, w) = try parse(#"{"sources": {"airplay": "stay-paused", "bluetooth": "forbidden", "other": "resume"}}"#)
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.settings.sources, SourceSettings(named: ["airplay": .stayPaused, "bluetooth": .forbidden], other: .resume))
        XCTAssertEqual(try parse(#"{"sources": {"other": "forbidden"}}"#).config.settings.sources.policy(for: "airplay"), .forbidden)
        XCTAssertEqual(Config().settings.sources.policy(for: "airplay"), .resume)
        for text in [#"{"sources": {"airplay": "pause"}}"#, #"{"sources": {"Air Play": "resume"}}"#, #"{"sources": ["airplay"]}"#] {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertTrue("\($0)".hasPrefix("c.json: sources: must be an object of source name"), "\($0)") }
        }
    }

    /// A reload names, in the file's words, what waits for the next start; policy alone waits
    /// for nothing, and the reply says which.
    func testAReloadNamesWhatWaitsForTheNextStart() throws {
        let running = try parse(#"{"device": "hw:0", "volumeMax": 80, "bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "volumeMax": 40}}"#).config
        let policy = try parse(#"{"device": "hw:0", "volumeMax": 60, "bluetooth": {"speaker": "aa:bb:cc:dd:ee:ff", "volumeMax": 30}}"#).config
        XCTAssertEqual(running.waitingForRestart(policy), [])
        XCTAssertEqual(ConfigReload(settings: policy.settings).reply, "ok configuration reloaded")
        let moved = try parse(#"{"device": "hw:1", "socket": "/run/x", "buttons": {"play": "GPIO17"}, "bluetooth": {"speaker": "11:22:33:44:55:66"}, "mixer": "PCM"}"#).config
        XCTAssertEqual(running.waitingForRestart(moved), ["device", "socket", "mixer", "bluetooth", "buttons"])
        XCTAssertEqual(ConfigReload(settings: moved.settings, waiting: ["device", "bluetooth"]).reply,
                       "ok configuration reloaded; at the next start: device, bluetooth")
        let gone = try parse(#"{"device": "hw:0"}"#).config
        XCTAssertEqual(running.waitingForRestart(gone), ["bluetooth"], "the section gone")
    }

    func testEmptyObjectGivesTheDefaults() throws {
        let (c, w) = try parse("{}")
        XCTAssertEqual(c, Config())
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.device, "default")
        XCTAssertEqual(c.statePath, "/var/lib/jukebox/state.json")
        XCTAssertEqual(c.settings.saveInterval, 5)
    }

    func testEveryKeyIsRead() throws {
        let (c, w) = try parse("""
        {"device": "hw:CARD=DAC", "audio": "null", "state": "/tmp/s.json", "music": ["/srv/music"],
         "resume": "paused", "saveInterval": 2, "volumeMin": 10, "volumeMax": 90, "volumeStep": 3,
         "seekStep": 15, "logLevel": "debug", "bookmarks": "audiobooks", "bookmarkLimit": 20,
         "audiobookFolders": ["/srv/books"]}
        """)
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.device, "hw:CARD=DAC")
        XCTAssertEqual(c.audio, .null)
        XCTAssertEqual(c.statePath, "/tmp/s.json")
        XCTAssertEqual(c.music, ["/srv/music"])
        XCTAssertEqual(c.logLevel, .debug)
        let s = c.settings
        XCTAssertEqual([s.saveInterval, s.seekStep], [2, 15])
        XCTAssertEqual([s.volumeMin, s.volumeMax, s.volumeStep], [10, 90, 3])
        XCTAssertFalse(s.resumePlaying)
        XCTAssertEqual(s.bookmarks, .audiobooks)
        XCTAssertEqual(s.bookmarkLimit, 20)
        XCTAssertEqual(s.audiobookFolders, ["/srv/books"])
    }

    func testTheShippedExampleConfigIsValidAndComplete() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let (c, w) = try Config.load(path: repo.appendingPathComponent("board/config.example.json").path)
        XCTAssertEqual(w, [])
        XCTAssertEqual(c.music, ["/srv/music"])
        // The pi4 profile, with the config's own button line on top.
        XCTAssertEqual(c.hardware.board, "Raspberry Pi 4")
        XCTAssertEqual(c.hardware.gpio?.chip, "pinctrl-bcm2711")
        XCTAssertEqual(c.hardware.buttons?["play"], "GPIO17")
        XCTAssertEqual(c.hardware.buttons?["next"], "GPIO27")
        XCTAssertEqual(c.hardware.encoder?.a, "GPIO5")
        XCTAssertEqual(c.settings.display, .lcd16x2)
        let text = try String(contentsOf: repo.appendingPathComponent("board/config.example.json"), encoding: .utf8)
        for key in ["device", "audio", "state", "setupProblems", "music", "resume", "saveInterval", "volumeMin", "volumeMax", "volumeStep", "seekStep", "logLevel",
                    "socket", "releaseDelay", "resumeAfterDeviceLoss", "bootVolume", "mixer", "mixerCard",
                    "board", "gpio", "buttons", "encoder", "input", "display", "powerCommand", "resumeRewind", "console", "consoleBaud", "chime", "warningChime",
                    "mpd", "idlePowerOff", "rfid", "bookmarks", "bookmarkLimit", "audiobookFolders", "usb", "battery", "headphones", "mqtt", "radio", "sleep",
                    "loudness", "parental"] {
            XCTAssertTrue(text.contains("\"\(key)\""), "example lacks \(key)")
            let reference = try String(contentsOf: repo.appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8)
            XCTAssertTrue(reference.contains("| `\(key)` |"), "docs/CONFIGURATION.md does not document \(key)")
        }
    }

    /// The profile's policy parts reach the core's settings; the config's own keys win.
    func testTheBoardProfilesPolicyReachesTheSettingsUnderTheConfigsOwn() throws {
        let dir = TempDir()
        let profile = dir.write("p.json", """
        {"gpio": {"debounceMs": 30}, "encoder": {"a": "GPIO5", "b": "GPIO6", "stepsPerDetent": 2, "acceleration": false},
         "powerCommand": ["halt"], "display": {"type": "ssd1306"}}
        """)
        let path = dir.write("c.json", """
        {"board": "\(profile)", "encoder": {"a": "GPIO5", "b": "GPIO6", "stepsPerDetent": 1}, "volumeMax": 80}
        """)
        let s = try Config.load(path: path).config.settings
        XCTAssertEqual(s.debounce, 0.03)
        XCTAssertEqual(s.encoderStepsPerDetent, 1, "the config's own encoder replaces the profile's")
        XCTAssertTrue(s.encoderAcceleration, "the config's own encoder replaces the profile's")
        XCTAssertEqual(s.powerCommand, ["halt"])
        XCTAssertEqual(s.display, .oled128x64)
        XCTAssertEqual(s.volumeMax, 80)
    }

    func testEveryBoardProfileLoadsAndUsesTheSameHeaderLines() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = repo.appendingPathComponent("board/profiles").path
        for name in ["pi-zero-2w", "pi3", "pi4", "pi5"] {
            let p = try BoardConfig.profile(name, folders: [folder])
            try p.validate(source: name)
            XCTAssertEqual(p.buttons?["play"], "GPIO17", name)
            XCTAssertNotNil(p.gpio?.chip, name)
            // The profile's wiring table names a header pin for every line it uses.
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/\(name).json"))) as? [String: Any]
            let wired = ((json?["wiring"] as? [[String: Any]]) ?? []).compactMap { $0["line"] as? String }
            let used = Array((p.buttons ?? [:]).values) + [p.encoder?.a, p.encoder?.b, p.encoder?.push].compactMap { $0 }
            for line in used { XCTAssertTrue(wired.contains(line), "\(name): \(line) has no header pin in its wiring table") }
        }
        XCTAssertEqual(try BoardConfig.profile("pi5", folders: [folder]).gpio?.chip, "pinctrl-rp1", "the Pi 5's header is found by label")
        XCTAssertThrowsError(try BoardConfig.profile("pi9", folders: [folder])) { XCTAssertTrue("\($0)".contains("board profile \"pi9\" not found"), "\($0)") }
    }

    func testHardwareMistakesSayWhatToFix() {
        let cases: [(String, String)] = [
            (#"{"buttons": {"jump": "GPIO4"}}"#, #"c.json: buttons: unknown role "jump""#),
            (#"{"gpio": {"bias": "up"}}"#, #"c.json: gpio.bias: must be "pull-up", "pull-down" or "none""#),
            (#"{"encoder": {"a": "GPIO5", "b": "GPIO6", "stepsPerDetent": 3}}"#, "c.json: encoder.stepsPerDetent: must be 1, 2 or 4"),
            (#"{"display": {"type": "vfd"}}"#, #"c.json: display.type: must be "hd44780-16x2", "hd44780-20x4", "ssd1306", "sh1106" or "terminal""#),
            (#"{"display": {"type": "ssd1306", "address": 300}}"#, "c.json: display.address: must be a 7-bit address"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertTrue("\($0)".hasPrefix(message), "\($0)") }
        }
    }

    func testEmptyStateMeansNoStateFile() throws {
        XCTAssertNil(try parse(#"{"state": ""}"#).config.statePath)
    }

    /// The appliance image's problems file: the image's path unless set; `""` reads none.
    func testSetupProblemsIsTheImagesPathUnlessSet() throws {
        XCTAssertEqual(try parse("{}").config.setupProblemsPath, "/run/jukebox-setup/problems")
        XCTAssertEqual(try parse(#"{"setupProblems": "/tmp/p"}"#).config.setupProblemsPath, "/tmp/p")
        XCTAssertNil(try parse(#"{"setupProblems": ""}"#).config.setupProblemsPath)
        XCTAssertThrowsError(try parse(#"{"setupProblems": 3}"#))
    }

    func testUnknownKeysWarnButDoNotFail() throws {
        let (_, w) = try parse(#"{"devcie": "x", "zzz": 1}"#)
        XCTAssertEqual(w, [#"c.json: unknown key "devcie" ignored"#, #"c.json: unknown key "zzz" ignored"#])
    }

    func testBadValuesSayWhatToFix() {
        let battery = #"must be {"chip": "max17048" or "ina219", "bus": "/dev/i2c-1" or a bus number, "address": 3-119, "interval": 1-3600 s, "warnPercent": 0-100, "criticalPercent": 0-100 and below warnPercent, "chargingWhenPositive": true or false, "lowPin": "GPIO4" or "CHIP:OFFSET", "lowPinActive": "low" or "high"; a chip, a lowPin or both}"#
        let cases: [(String, String)] = [
            (#"{"audio": "pulse"}"#, #"c.json: audio: must be "alsa" or "null""#),
            (#"{"saveInterval": 0}"#, "c.json: saveInterval: must be seconds from 1 to 300"),
            (#"{"saveInterval": "5"}"#, "c.json: saveInterval: must be seconds from 1 to 300"),
            (#"{"volumeMin": 50, "volumeMax": 40}"#, "c.json: volumeMin: must be 0 to 100, with volumeMin <= volumeMax"),
            (#"{"resume": "yes"}"#, #"c.json: resume: must be "playing" or "paused""#),
            (#"{"bookmarks": "sometimes"}"#, #"c.json: bookmarks: must be "always", "audiobooks" or "never""#),
            (#"{"bookmarkLimit": 0}"#, "c.json: bookmarkLimit: must be 1 to 10000"),
            (#"{"audiobookFolders": ["books"]}"#, "c.json: audiobookFolders: must be a list of absolute folder paths"),
            (#"{"usb": {"roots": ["media"]}}"#, #"c.json: usb: must be {"roots": [absolute folder paths, 1 to 16], "autoplay": true or false}"#),
            (#"{"usb": {"roots": []}}"#, #"c.json: usb: must be {"roots": [absolute folder paths, 1 to 16], "autoplay": true or false}"#),
            (#"{"battery": {"chip": "bq27441"}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"chip": "max17048", "warnPercent": 5, "criticalPercent": 10}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"chip": "ina219", "address": 200}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"chip": "ina219", "interval": 0}}"#, "c.json: battery: " + battery),
            (#"{"battery": {}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"lowPin": ""}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"lowPin": "GPIO4\u0007"}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"lowPin": "GPIO4", "lowPinActive": "sometimes"}}"#, "c.json: battery: " + battery),
            (#"{"battery": {"chip": "max17048", "lowPinActive": "high"}}"#, "c.json: battery: " + battery),
            (#"{"radio": {"bufferSeconds": 0.1}}"#, #"c.json: radio: must be {"bufferSeconds": 0.5 to 30, "giveUpSeconds": 5 to 86400, "network": true|false, "caFile": an absolute path}"#),
            (#"{"radio": {"giveUpSeconds": 1}}"#, #"c.json: radio: must be {"bufferSeconds": 0.5 to 30, "giveUpSeconds": 5 to 86400, "network": true|false, "caFile": an absolute path}"#),
            (#"{"device": ""}"#, #"c.json: device: must be a non-empty ALSA PCM name such as "default" or "hw:CARD=DAC""#),
            ("{not json", "c.json: not valid JSON (not valid JSON)"),
            ("[1]", #"c.json: must be a JSON object, like {"device": "default"}"#),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", message, text) }
        }
    }

    func testRadioBufferAndGiveUpTimeAreRead() throws {
        let plain = try parse("{}").config
        XCTAssertEqual(plain.radioBufferSeconds, 2)
        XCTAssertEqual(plain.settings.streamGiveUp, 120)
        let set = try parse(#"{"radio": {"bufferSeconds": 5, "giveUpSeconds": 600}}"#).config
        XCTAssertEqual(set.radioBufferSeconds, 5)
        XCTAssertEqual(set.settings.streamGiveUp, 600)
    }

    func testRadioCAFileIsCheckedAtLoadAndAnUnusableOneIsAWarning() throws {
        let dir = TempDir()
        let pem = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        let good = try parse(#"{"radio": {"caFile": "\#(pem)"}}"#)
        XCTAssertEqual(good.warnings, [])
        XCTAssertEqual(good.config.radioCAFile, pem)
        XCTAssertNil(try parse("{}").config.radioCAFile)
        // Missing, or not a certificate: warned and left out (the system's store still serves).
        let missing = try parse(#"{"radio": {"caFile": "\#(dir.file("none.pem"))"}}"#)
        XCTAssertNil(missing.config.radioCAFile)
        XCTAssertEqual(missing.warnings.count, 1)
        XCTAssertTrue(missing.warnings[0].hasPrefix("c.json: radio.caFile: cannot read \(dir.file("none.pem"))"), "\(missing.warnings)")
        let text = dir.write("notes.txt", "hello")
        let notPEM = try parse(#"{"radio": {"caFile": "\#(text)"}}"#)
        XCTAssertNil(notPEM.config.radioCAFile)
        XCTAssertEqual(notPEM.warnings, ["c.json: radio.caFile: \(text) holds no PEM certificate; HTTPS streams trust the system's certificates only"])
        // A relative path is an error: relative to what is not obvious for a service.
        XCTAssertThrowsError(try parse(#"{"radio": {"caFile": "ca.pem"}}"#))
    }

    func testPodcastsAreReadAndSayWhatToFix() throws {
        XCTAssertEqual(try parse("{}").config.settings.podcasts, PodcastSettings())
        XCTAssertFalse(try parse("{}").config.radioNetwork)
        let (c, w) = try parse("""
            {"podcasts": {"feeds": [{"name": "Bedtime Stories", "url": "https://feeds.example/bed.xml", "order": "oldest", "download": 3},
                                    {"name": "News", "url": "http://news.example/rss"}],
                          "refreshMinutes": 30, "budgetMiB": 200, "budget": 1}}
            """)
        XCTAssertEqual(w, ["c.json: unknown key \"podcasts.budget\" ignored"])
        var expected = PodcastSettings()
        expected.feeds = [PodcastSource(name: "Bedtime Stories", url: "https://feeds.example/bed.xml", order: .oldest, downloadAhead: 3),
                          PodcastSource(name: "News", url: "http://news.example/rss", order: .newest, downloadAhead: 0)]
        expected.refreshMinutes = 30
        expected.budgetMiB = 200
        XCTAssertEqual(c.settings.podcasts, expected)
        XCTAssertTrue(c.radioNetwork, "a feed needs the network")
        let message = #"c.json: podcasts: must be {"feeds": [{"name": a name without "/" (1 to 64 bytes, each once), "url": an http(s) feed URL, "order": "newest" or "oldest", "download": episodes ahead, 0 to 50}, at most 100], "refreshMinutes": 5 to 1440, "budgetMiB": 0 to 1048576}"#
        let bad: [String] = [
            #"{"podcasts": {"feeds": [{"name": "a/b", "url": "https://h/f"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "", "url": "https://h/f"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "..", "url": "https://h/f"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a\u001bb", "url": "https://h/f"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a", "url": "file:///etc/passwd"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a", "url": "https://h/f"}, {"name": "a", "url": "https://h/g"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a", "url": "https://h/f", "order": "random"}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a", "url": "https://h/f", "download": 51}]}}"#,
            #"{"podcasts": {"feeds": [{"name": "a", "url": "https://h/f", "download": "3"}]}}"#,
            #"{"podcasts": {"feeds": [{"url": "https://h/f"}]}}"#,
            #"{"podcasts": {"refreshMinutes": 1}}"#,
            #"{"podcasts": {"budgetMiB": -1}}"#,
            #"{"podcasts": []}"#,
        ]
        for text in bad {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", message, text) }
        }
    }

    func testUnknownRadioKeysAreWarned() throws {
        XCTAssertEqual(try parse(#"{"radio": {"bufferSecond": 3}}"#).warnings, ["c.json: unknown key \"radio.bufferSecond\" ignored"])
    }

    func testTheBatteryIsOffUnlessConfiguredAndItsLevelsReachTheCore() throws {
        XCTAssertNil(try parse("{}").config.battery)
        XCTAssertNil(try parse("{}").config.settings.battery)
        let plain = try parse(#"{"battery": {"chip": "max17048"}}"#).config
        XCTAssertEqual(plain.battery, BatteryMonitorSettings(chip: .max17048, bus: "/dev/i2c-1", address: nil, interval: 30, chargingWhenPositive: false))
        XCTAssertEqual(plain.settings.battery, BatterySettings(warnPercent: 15, criticalPercent: 5))
        let set = try parse(#"{"battery": {"chip": "ina219", "bus": "3", "address": 65, "interval": 10, "warnPercent": 25, "criticalPercent": 8, "chargingWhenPositive": true}}"#)
        XCTAssertEqual(set.config.battery, BatteryMonitorSettings(chip: .ina219, bus: "3", address: 65, interval: 10, chargingWhenPositive: true))
        XCTAssertEqual(set.config.settings.battery, BatterySettings(warnPercent: 25, criticalPercent: 8))
        XCTAssertNil(set.config.batteryPin)
        XCTAssertEqual(try parse(#"{"warningChime": "/usr/share/jukebox/w.wav"}"#).config.settings.warningChime, "/usr/share/jukebox/w.wav")
        XCTAssertNil(try parse(#"{"warningChime": ""}"#).config.settings.warningChime)
        // A pin alone (a PowerBoost's LBO), or beside a chip.
        let pin = try parse(#"{"battery": {"lowPin": "GPIO4"}}"#).config
        XCTAssertNil(pin.battery)
        XCTAssertEqual(pin.batteryPin, BatteryPinSettings(line: "GPIO4", activeHigh: false))
        XCTAssertEqual(pin.settings.battery, BatterySettings(warnPercent: 15, criticalPercent: 5))
        let both = try parse(#"{"battery": {"chip": "max17048", "lowPin": "gpiochip0:4", "lowPinActive": "high"}}"#).config
        XCTAssertEqual(both.battery?.chip, .max17048)
        XCTAssertEqual(both.batteryPin, BatteryPinSettings(line: "gpiochip0:4", activeHigh: true))
        XCTAssertEqual(set.warnings, [])
        XCTAssertEqual(try parse(#"{"battery": {"chip": "ina219", "shunt": 0.1}}"#).warnings, ["c.json: unknown key \"battery.shunt\" ignored"])
    }

    func testTheHeadphoneJackIsOffUnlessConfiguredAndItsRulesReachTheCore() throws {
        XCTAssertNil(try parse("{}").config.headphones)
        XCTAssertNil(try parse("{}").config.settings.headphones)
        let plain = try parse(#"{"headphones": {}}"#).config
        XCTAssertEqual(plain.headphones, HeadphoneJackSettings(card: "default", control: "Headphone Jack"))
        XCTAssertEqual(plain.settings.headphones, HeadphoneSettings(pauseOnUnplug: true, volumeMax: nil))
        let set = try parse(#"{"volumeMin": 10, "headphones": {"card": "hw:CARD=Headphones", "control": "Headphone Jack", "pauseOnUnplug": false, "volumeMax": 60}}"#)
        XCTAssertEqual(set.config.headphones, HeadphoneJackSettings(card: "hw:CARD=Headphones", control: "Headphone Jack"))
        XCTAssertEqual(set.config.settings.headphones, HeadphoneSettings(pauseOnUnplug: false, volumeMax: 60))
        XCTAssertEqual(set.warnings, [])
        XCTAssertEqual(try parse(#"{"headphones": {"pin": 1}}"#).warnings, ["c.json: unknown key \"headphones.pin\" ignored"])
        for bad in [#"{"headphones": {"volumeMax": 101}}"#, #"{"volumeMin": 30, "headphones": {"volumeMax": 20}}"#,
                    #"{"headphones": {"card": ""}}"#, "{\"headphones\": {\"control\": \"Jack\\u001b[2J\"}}"] {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".hasPrefix("c.json: headphones: must be {\"card\""), "\(error)")
            }
        }
    }

    func testTheBluetoothSpeakerIsOffUnlessConfiguredAndItsRulesReachTheCore() throws {
        XCTAssertNil(try parse("{}").config.bluetooth)
        XCTAssertNil(try parse("{}").config.settings.bluetooth)
        let plain = try parse(#"{"bluetooth": {"speaker": "aa:bb:cc:dd:ee:0f"}}"#).config
        XCTAssertEqual(plain.bluetooth, BluetoothSpeakerSettings(address: "AA:BB:CC:DD:EE:0F"))
        XCTAssertEqual(plain.bluetooth?.device, "bluealsa:DEV=AA:BB:CC:DD:EE:0F,PROFILE=a2dp")
        XCTAssertEqual(plain.settings.bluetooth, BluetoothSettings(whenGone: .card, volumeMax: nil))
        let set = try parse(#"{"volumeMin": 10, "bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "device": "bt", "whenGone": "pause", "volumeMax": 70}}"#)
        XCTAssertEqual(set.config.bluetooth, BluetoothSpeakerSettings(address: "AA:BB:CC:DD:EE:FF", device: "bt"))
        XCTAssertEqual(set.config.settings.bluetooth, BluetoothSettings(whenGone: .pause, volumeMax: 70))
        XCTAssertEqual(set.warnings, [])
        XCTAssertEqual(try parse(#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "pin": 1}}"#).warnings, ["c.json: unknown key \"bluetooth.pin\" ignored"])
        let rows: [(String, String)] = [
            (#"{"bluetooth": {}}"#, "c.json: bluetooth: \"speaker\" is missing; must be {"),
            (#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE"}}"#, "c.json: bluetooth: \"speaker\" must be an address of six pairs of hex digits such as \"AA:BB:CC:DD:EE:FF\", not \"AA:BB:CC:DD:EE\""),
            (#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FG"}}"#, "c.json: bluetooth: \"speaker\" must be an address"),
            (#"{"bluetooth": {"speaker": "AA-BB-CC-DD-EE-FF"}}"#, "c.json: bluetooth: \"speaker\" must be an address"),
            ("{\"bluetooth\": {\"speaker\": \"AA:BB:CC:DD:EE:F\\u001b\"}}", "c.json: bluetooth: \"speaker\" must be an address of six pairs of hex digits such as \"AA:BB:CC:DD:EE:FF\", not \"AA:BB:CC:DD:EE:F\u{FFFD}\""),
            (#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "whenGone": "stop"}}"#, "c.json: bluetooth: \"whenGone\" must be \"card\" or \"pause\""),
            (#"{"volumeMin": 30, "bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "volumeMax": 20}}"#, "c.json: bluetooth: \"volumeMax\" must be 30 to 100 (not below volumeMin)"),
            (#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "volumeMax": 101}}"#, "c.json: bluetooth: \"volumeMax\" must be 0 to 100"),
            (#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "device": ""}}"#, "c.json: bluetooth: \"device\" must be an ALSA PCM name"),
            (#"{"bluetooth": "AA:BB:CC:DD:EE:FF"}"#, "c.json: bluetooth: must be {\"speaker\""),
        ]
        for (bad, reason) in rows {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".hasPrefix(reason), "\(error)")
            }
        }
    }

    /// `bluetooth.adapter`: the address of the box's adapter a pair uses, with a speaker, a phone
    /// or alone (a box that only pairs); `hciN` is refused (its number can change at boot).
    func testTheAdapterAPairUsesIsAnAddressWithOrWithoutASpeaker() throws {
        XCTAssertNil(try parse(#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF"}}"#).config.bluetoothAdapter)
        let alone = try parse(#"{"bluetooth": {"adapter": "00:aa:01:00:00:00"}}"#)
        XCTAssertEqual(alone.config.bluetoothAdapter, "00:AA:01:00:00:00")
        XCTAssertNil(alone.config.bluetooth, "no speaker")
        XCTAssertFalse(alone.config.bluetoothPhone)
        XCTAssertEqual(alone.warnings, [])
        let both = try parse(#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF", "adapter": "00:AA:01:00:00:00", "phone": true}}"#).config
        XCTAssertEqual(both.bluetoothAdapter, "00:AA:01:00:00:00")
        XCTAssertEqual(both.bluetooth, BluetoothSpeakerSettings(address: "AA:BB:CC:DD:EE:FF"))
        XCTAssertTrue(both.bluetoothPhone)
        let rows: [(String, String)] = [
            (#"{"bluetooth": {"adapter": "hci1"}}"#, "c.json: bluetooth: \"adapter\" must be the address of one of the box's adapters (`bluetoothctl list`), six pairs of hex digits such as \"00:1A:7D:DA:71:13\", not \"hci1\""),
            (#"{"bluetooth": {"adapter": "00:AA:01:00:00:00", "whenGone": "pause"}}"#, "c.json: bluetooth: \"speaker\" is missing; must be {"),
            (#"{"bluetooth": {"adapter": 1}}"#, "c.json: bluetooth: must be {"),
        ]
        for (bad, reason) in rows {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".hasPrefix(reason), "\(error)")
            }
        }
    }

    func testAPhoneIsWatchedForOnlyWhenTheConfigSaysSoWithOrWithoutASpeaker() throws {
        XCTAssertFalse(try parse("{}").config.bluetoothPhone)
        XCTAssertFalse(try parse(#"{"bluetooth": {"speaker": "AA:BB:CC:DD:EE:FF"}}"#).config.bluetoothPhone)
        let alone = try parse(#"{"bluetooth": {"phone": true}}"#)
        XCTAssertTrue(alone.config.bluetoothPhone)
        XCTAssertNil(alone.config.bluetooth, "no speaker")
        XCTAssertNil(alone.config.settings.bluetooth, "no speaker's rules")
        XCTAssertEqual(alone.warnings, [])
        let both = try parse(#"{"bluetooth": {"speaker": "aa:bb:cc:dd:ee:ff", "phone": true}}"#).config
        XCTAssertTrue(both.bluetoothPhone)
        XCTAssertEqual(both.bluetooth, BluetoothSpeakerSettings(address: "AA:BB:CC:DD:EE:FF"))
        let rows: [(String, String)] = [
            (#"{"bluetooth": {"phone": false}}"#, "c.json: bluetooth: \"speaker\" is missing; must be {"),
            (#"{"bluetooth": {"phone": true, "whenGone": "pause"}}"#, "c.json: bluetooth: \"speaker\" is missing; must be {"),
            (#"{"bluetooth": {"phone": "yes"}}"#, "c.json: bluetooth: must be {"),
        ]
        for (bad, reason) in rows {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".hasPrefix(reason), "\(error)")
            }
        }
    }

    func testUSBIsOffUnlessConfiguredAndDefaultsToMediaJukeboxWithoutAutoplay() throws {
        XCTAssertNil(try parse("{}").config.usbRoots)
        let plain = try parse(#"{"usb": {}}"#).config
        XCTAssertEqual(plain.usbRoots, ["/media/jukebox"])
        XCTAssertFalse(plain.settings.usbAutoplay)
        XCTAssertTrue(plain.usbMountsOnly)
        let set = try parse(#"{"usb": {"roots": ["/media/a", "/mnt/b"], "autoplay": true, "mountsOnly": false}}"#).config
        XCTAssertEqual(set.usbRoots, ["/media/a", "/mnt/b"])
        XCTAssertTrue(set.settings.usbAutoplay)
        XCTAssertFalse(set.usbMountsOnly)
        // A typo is warned about, and the rest still applies.
        let typo = try parse(#"{"usb": {"autoPlay": true, "roots": ["/media/a"]}}"#)
        XCTAssertEqual(typo.warnings, ["c.json: unknown key \"usb.autoPlay\" ignored"])
        XCTAssertEqual(typo.config.usbRoots, ["/media/a"])
        XCTAssertFalse(typo.config.settings.usbAutoplay)
    }

    func testMQTTIsOffUnlessConfiguredAndSaysWhatToFix() throws {
        XCTAssertNil(try parse("{}").config.mqtt)
        let (c, w) = try parse("""
        {"mqtt": {"host": "broker", "port": 8883, "username": "u", "password": "p", "tls": {"ca": "/c", "cert": "/a", "key": "/k"},
                  "topic": "jukebox/kitchen", "discoveryPrefix": "ha", "positionInterval": 5}}
        """)
        XCTAssertEqual(w, [])
        var expected = MQTTSettings(host: "broker", port: 8883, topic: "jukebox/kitchen", positionInterval: 5)
        expected.username = "u"
        expected.password = "p"
        expected.tls = MQTTSettings.TLS(ca: "/c", cert: "/a", key: "/k")
        expected.discoveryPrefix = "ha"
        XCTAssertEqual(c.mqtt, expected)
        let file = try parse(#"{"mqtt": {"host": "b", "username": "u", "passwordFile": "/etc/jukebox/mqtt-password"}}"#).config.mqtt
        XCTAssertEqual(file?.passwordFile, "/etc/jukebox/mqtt-password")
        XCTAssertNil(file?.password)
        for (bad, says) in [(#"{"host": ""}"#, "mqtt.host"), (#"{"host": "b", "port": 0}"#, "mqtt.port"),
                            (#"{"host": "b", "topic": "a/#"}"#, "mqtt.topic"), (#"{"host": "b", "topic": "a/"}"#, "mqtt.topic"),
                            (#"{"host": "b", "positionInterval": 0}"#, "mqtt.positionInterval"),
                            (#"{"host": "b", "tls": {"ca": "/c", "cert": "/a"}}"#, "mqtt.tls"), (#"{"port": 1}"#, "host"),
                            (#"{"host": "b", "username": "u", "password": "p", "passwordFile": "/p"}"#, "mqtt.password, passwordFile"),
                            (#"{"host": "b", "password": "p"}"#, "mqtt.username"), (#"{"host": "b", "passwordFile": "/p"}"#, "mqtt.username"),
                            (#"{"host": "b", "username": "u", "passwordFile": "p"}"#, "mqtt.passwordFile"),
                            (#"{"host": "b", "tls": {"ca": "ca.crt"}}"#, "mqtt.tls.ca")] {
            XCTAssertThrowsError(try parse(#"{"mqtt": "# + bad + "}")) { XCTAssertTrue("\($0)".contains(says), "\(bad): \($0)") }
        }
    }

    func testMPDIsOffUnlessConfiguredAndReadsEveryKey() throws {
        XCTAssertNil(try parse("{}").config.mpd)
        XCTAssertNil(try parse(#"{"mpd": null}"#).config.mpd)
        XCTAssertEqual(try parse(#"{"mpd": {}}"#).config.mpd, MPDSettings())
        let (c, w) = try parse("""
        {"mpd": {"bind": ["0.0.0.0", "::", "/run/jukebox/mpd"], "port": 6601, "password": "pw", "maxClients": 4, "timeout": 30,
                 "playlists": "/srv/playlists", "allowURLs": true}}
        """)
        XCTAssertEqual(w, [])
        var expected = MPDSettings()
        expected.binds = ["0.0.0.0", "::", "/run/jukebox/mpd"]
        expected.port = 6601
        expected.password = "pw"
        expected.maxClients = 4
        expected.timeout = 30
        expected.playlists = "/srv/playlists"
        expected.allowURLs = true
        XCTAssertEqual(c.mpd, expected)
        XCTAssertFalse(MPDSettings().allowURLs, "URLs from MPD clients are off unless the config says so")
        XCTAssertEqual(c.mpd?.playlistFolder(statePath: "/var/lib/jukebox/state.json"), "/srv/playlists")
        // Left out: next to the state file; without one, none (stored playlists off).
        XCTAssertEqual(MPDSettings().playlistFolder(statePath: "/var/lib/jukebox/state.json"), "/var/lib/jukebox/playlists")
        XCTAssertNil(MPDSettings().playlistFolder(statePath: nil))
        XCTAssertEqual(try parse(#"{"mpd": {"bind": "::1"}}"#).config.mpd?.binds, ["::1"])
        XCTAssertEqual(try parse(#"{"mpd": {"prot": 1}}"#).warnings, ["c.json: unknown key \"mpd.prot\" ignored"])
    }

    func testANumberItsKeyCannotHoldNamesTheKeyAndTheProblem() {
        // The decoder says only "not valid JSON" for these, without a key.
        let cases: [(String, String)] = [
            (#"{"mpd": {"port": 80.5}}"#, "c.json: mpd.port: 80.5 is not a whole number (it must be a TCP port from 1 to 65535)"),
            (#"{"mpd": {"port": 1e300}}"#, "c.json: mpd.port: 1e300 is too large for a whole number (it must be a TCP port from 1 to 65535)"),
            (#"{"bootVolume": 50.5}"#, "c.json: bootVolume: 50.5 is not a whole number (it must be 0 to 100 (leave it out to keep the saved volume))"),
            (#"{"saveInterval": 5, "consoleBaud": -9223372036854775809}"#, "c.json: consoleBaud: -9223372036854775809 is too small for a whole number (it must be 9600, 19200, 38400, 57600, 115200, 230400, 460800 or 921600)"),
            (#"{"seekStep": 1e999}"#, "c.json: seekStep: 1e999 is too large (it must be seconds above 0, at most 600)"),
            // A fraction where one is allowed is not the one named.
            (#"{"radio": {"bufferSeconds": 2.5}, "mpd": {"maxClients": 2.5}}"#, "c.json: mpd.maxClients: 2.5 is not a whole number (it must be 1 to 256)"),
            (#"{"music": ["/a"], "rfid": {"reader": "keyboard", "sameCardDelay": 1e400}}"#, "c.json: rfid.sameCardDelay: 1e400 is too large (it must be seconds from 0 to 60)"),
            // Two: the first in the file is named.
            (#"{"mpd": {"port": 80.5, "maxClients": 2.5}}"#, "c.json: mpd.port: 80.5 is not a whole number (it must be a TCP port from 1 to 65535)"),
            ("", "c.json: the config file is empty (write {} for every default)"),
            (" \n\t\r\n", "c.json: the config file is empty (write {} for every default)"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", message, text) }
        }
        // Nothing a number could explain: as before.
        XCTAssertThrowsError(try parse(#"{"saveInterval": 5,"#)) { XCTAssertEqual("\($0)", "c.json: not valid JSON (not valid JSON)") }
    }

    func testBadMPDValuesNameTheirKey() {
        let cases = [
            (#"{"mpd": {"bind": "localhost"}}"#, "c.json: mpd.bind: must be an IP address (\"127.0.0.1\", \"::1\", \"0.0.0.0\", \"::\"), an absolute Unix socket path, or a list of them"),
            (#"{"mpd": {"bind": []}}"#, "c.json: mpd.bind: must be an IP address (\"127.0.0.1\", \"::1\", \"0.0.0.0\", \"::\"), an absolute Unix socket path, or a list of them"),
            (#"{"mpd": {"bind": 5}}"#, "c.json: mpd.bind: must be an IP address (\"127.0.0.1\", \"::1\", \"0.0.0.0\", \"::\"), an absolute Unix socket path, or a list of them"),
            (#"{"mpd": {"port": 0}}"#, "c.json: mpd.port: must be a TCP port from 1 to 65535"),
            (#"{"mpd": {"port": "6600"}}"#, "c.json: mpd.port: must be a TCP port from 1 to 65535"),
            (#"{"mpd": {"password": ""}}"#, "c.json: mpd.password: must be a non-empty string on one line, or null for none"),
            (#"{"mpd": {"maxClients": 0}}"#, "c.json: mpd.maxClients: must be 1 to 256"),
            (#"{"mpd": {"timeout": 0.5}}"#, "c.json: mpd.timeout: must be seconds from 1 to 86400"),
            (#"{"mpd": {"playlists": "playlists"}}"#, "c.json: mpd.playlists: must be an absolute folder path (stored playlists; default: playlists next to the state file)"),
            (#"{"mpd": {"allowURLs": "yes"}}"#, "c.json: mpd.allowURLs: must be true or false (whether MPD clients may queue http(s) URLs; default false)"),
            (#"{"mpd": true}"#, "c.json: mpd: must be an object such as {\"bind\": \"127.0.0.1\", \"port\": 6600} (null turns MPD off)"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", message, text) }
        }
    }
}

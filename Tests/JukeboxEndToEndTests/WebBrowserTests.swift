// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The web page in a real browser: Debian's chromium, driven through chromium-driver by
/// python3-selenium (Tests/Browser/web_test.py), against the real `jukebox web` and a real player.
/// Every child dies with the test process: the player, `jukebox web` and chromedriver are started
/// through `ChildDeath` (PR_SET_PDEATHSIG), and chromium through a wrapper that does the same to
/// it when chromedriver goes. Without chromium, chromedriver or selenium the test skips, saying
/// why, unless `JUKEBOX_REQUIRE_PEERS=1` (board/test.sh): then it fails (`missingPeer`).
final class WebBrowserTests: DaemonTestCase {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    static let python = "/usr/bin/python3"

    /// The repository's root (this file is Tests/JukeboxEndToEndTests/WebBrowserTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The podcast's feed: its title has markup (shown as text on the Podcasts page, never run).
    static let feed = """
        <?xml version="1.0"?><rss version="2.0"><channel><title>Show &lt;img src=x onerror=alert(3)&gt;</title>
        <item><title>Episode Two</title><guid>e2</guid><pubDate>Tue, 05 Mar 2024 06:00:00 GMT</pubDate><enclosure url="ep2.mp3" type="audio/mpeg"/></item>
        <item><title>Episode One</title><guid>e1</guid><pubDate>Mon, 04 Mar 2024 06:00:00 GMT</pubDate><enclosure url="ep1.mp3" type="audio/mpeg"/></item>
        </channel></rss>
        """

    func testPagesInARealBrowser() throws {
        try requireBrowser()
        // Seven tracks: tagged ones, one with markup in its file name (untagged), one with markup in its title.
        var music: [String] = []
        for i in 1...6 {
            let path = dir + "/music/\(String(format: "%02d", i)) Track.flac"
            music.append(path)
        }
        music.insert(dir + "/music/<img src=x onerror=alert(1)>.flac", at: 4)
        try FileManager.default.createDirectory(atPath: dir + "/music", withIntermediateDirectories: true)
        for (i, path) in music.enumerated() {
            let title = i == 2 ? "Song <img src=x onerror=alert(2)> & \"quotes\"" : (i == 4 ? nil : "Song \(i + 1)")
            // Five minutes each (no track ends by itself during the test), at 8 kHz mono: quick to write.
            try TestAudio.write(path: path, kind: .flac, frames: 8_000 * 300, sampleRate: 8_000, channels: 1,
                                tags: title.map { TestAudio.Tags(title: $0, artist: "Artist \(i + 1)", album: "Album") })
        }
        // A radio station (ICY, "Test FM", its StreamTitle "Song 1", "Song 2"…) for the stream's view.
        try TestAudio.write(path: dir + "/tone.mp3", kind: .mp3, frames: 132_300, sampleRate: 44100, channels: 2)
        // A podcast for the Podcasts page (Tests/Browser/web_podcasts.py): its feed, with markup in
        // its title, and its two 20 s episodes, served by the same server as /dir/NAME.
        let served = dir + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        for name in ["ep1", "ep2"] {
            try TestAudio.write(path: served + "/\(name).mp3", kind: .mp3, frames: 882_000, sampleRate: 44100, channels: 2)
        }
        try Self.feed.write(toFile: served + "/feed.xml", atomically: true, encoding: .utf8)
        let radio = try RadioServer(mp3: dir + "/tone.mp3", folder: dir, servedFolder: served)
        defer { withExtendedLifetime(radio) {} }
        // A music folder for the Library page: Album/ with two tracks (queued after the seven at start).
        try FileManager.default.createDirectory(atPath: dir + "/library/Album", withIntermediateDirectories: true)
        for i in 1...2 {
            try TestAudio.write(path: dir + "/library/Album/\(i).flac", kind: .flac, frames: 8_000 * 300, sampleRate: 8_000, channels: 1,
                                tags: TestAudio.Tags(title: "Library \(i)", artist: "Artist", album: "Album"))
        }
        // The simulated card reader for the Cards page (Tests/Browser/web_cards.py writes ids to it).
        XCTAssertEqual(mkfifo(dir + "/reader", 0o600), 0)
        // And the simulated battery (Tests/Browser/web_battery.py writes readings to it).
        XCTAssertEqual(mkfifo(dir + "/battery", 0o600), 0)
        // The simulated bluez-alsa monitor and a stand-in bluetoothctl (Tests/Browser/web_bluetooth.py).
        XCTAssertEqual(mkfifo(dir + "/bluetooth", 0o600), 0)
        let path = try FakeBluetoothctl.install(in: dir)
        // The appliance image's setup problems for the System page (web_settings.py): markup and an
        // escape sequence in a line, shown as text.
        try Data("wifi.txt: <img src=x onerror=alert(4)> \u{1B}[2J\ntimezone.txt: 'Mars/Base' is not a time zone\n".utf8)
            .write(to: URL(fileURLWithPath: dir + "/problems"))
        // An empty parental section: the Settings page offers the rules (web_settings.py adds a cap).
        let show: [String: Any] = ["name": "Web Show", "url": radio.url("/dir/feed.xml"), "order": "oldest"]
        let podcasts: [String: Any] = ["feeds": [show]]
        let daemon = try startDaemon(music + [dir + "/library"], extra: ["rfid": ["reader": "keyboard", "name": "no such reader", "cards": dir + "/cards.json", "sameCardDelay": 0],
                                                                         "parental": [String: Int](), "podcasts": podcasts,
                                                                         "bluetooth": ["speaker": "AA:BB:CC:DD:EE:FF"], "setupProblems": dir + "/problems"],
                                     environment: ["JUKEBOX_TEST_CARD_PIPE": dir + "/reader", "JUKEBOX_TEST_BATTERY_PIPE": dir + "/battery",
                                                   "JUKEBOX_TEST_BLUETOOTH_PIPE": dir + "/bluetooth", "PATH": path])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let web = try Jukebox.start(["web", "--socket", socket, "--listen", "127.0.0.1:0",
                                     "--assets", Self.root + "/Sources/JukeboxWeb/Assets", "--state", dir, "--config", dir + "/c.json"])
        defer { web.process.terminate(); _ = web.wait(timeout: 5) }
        let url = try XCTUnwrap(waitForLine(web, prefix: "web: listening on ", timeout: 10), "jukebox web never said where it listens: " + web.stdoutSoFar + Self.contents(web.errPath))

        let driver = try spawn(Self.chromedriver, ["--port=0"])
        defer { driver.process.terminate(); _ = driver.wait(timeout: 5) }
        let started = try XCTUnwrap(waitForLine(driver, prefix: "ChromeDriver was started successfully on port ", timeout: 10),
                                    "chromedriver did not start: " + driver.stdoutSoFar)
        let driverURL = "http://127.0.0.1:" + started.trimmingCharacters(in: CharacterSet(charactersIn: ". \n"))

        // chromium dies with chromedriver (its parent): PR_SET_PDEATHSIG through setpriv.
        let wrapper = dir + "/chromium"
        try "#!/bin/sh\nexec \(ChildDeath.setpriv) --pdeathsig KILL -- \(Self.chromium) \"$@\"\n"
            .write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)

        let screens = Self.root + "/.build/web-screenshots"
        // The README's phone-size pictures in docs/images are replaced only when asked
        // (JUKEBOX_UPDATE_SCREENSHOTS=1): a test run leaves the checkout as it found it.
        let docs = ProcessInfo.processInfo.environment["JUKEBOX_UPDATE_SCREENSHOTS"] == "1" ? ["--docs", Self.root + "/docs/images"] : []
        // axe-core for the accessibility check: board/setup.sh fetches it into a cache outside the
        // repository. Missing, the rest still runs, then the test ends as a missing peer.
        let axe = Self.axePath
        let haveAxe = FileManager.default.isReadableFile(atPath: axe)
        // In parts: one long literal of concatenations is past the type checker's patience.
        var arguments: [String] = [
            Self.root + "/Tests/Browser/web_test.py", "--url", url.trimmingCharacters(in: .whitespacesAndNewlines),
            "--driver", driverURL, "--chromium", wrapper, "--jukebox", Jukebox.binary, "--socket", socket,
            "--config", dir + "/c.json", "--pid", String(daemon.process.processIdentifier),
        ]
        arguments += ["--stream", "http://127.0.0.1:\(radio.port)/icy?metaint=8192", "--screens", screens]
        arguments += ["--axe", haveAxe ? axe : "", "--battery-pipe", dir + "/battery"]
        arguments += ["--bluetooth-pipe", dir + "/bluetooth", "--bluetooth-args", dir + "/bluetoothctl.args"]
        let script = try spawn(Self.python, arguments + docs, environment: ["HOME": dir, "PYTHONUNBUFFERED": "1"])
        guard let result = script.wait(timeout: 240) else {
            return XCTFail("the browser test did not finish in 240 s:\n" + script.stdoutSoFar)
        }
        print(result.stdout)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("PASS\n"), result.stdout)
        if !haveAxe { throw missingPeer("the accessibility check needs axe-core's axe.min.js at \(axe) (board/setup.sh fetches it)") }
    }

    /// axe.min.js: `JUKEBOX_AXE_DIR` (as board/setup.sh reads it), else `$XDG_CACHE_HOME` or `~/.cache`.
    static var axePath: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = env["JUKEBOX_AXE_DIR"], !dir.isEmpty { return dir + "/axe.min.js" }
        let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((env["HOME"] ?? "/root") + "/.cache")
        return cache + "/jukebox/axe-core-4.4.3/axe.min.js"
    }

    private static func contents(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Skips (or, under board/test.sh, fails) when a piece of the browser test is missing.
    private func requireBrowser() throws {
        var missing: [String] = []
        for (path, package) in [(Self.chromium, "chromium"), (Self.chromedriver, "chromium-driver"), (Self.python, "python3")]
        where !FileManager.default.isExecutableFile(atPath: path) {
            missing.append(package)
        }
        if missing.isEmpty, (try? spawn(Self.python, ["-c", "import selenium.webdriver"]).wait(timeout: 20)?.status) != 0 {
            missing.append("python3-selenium")
        }
        guard !missing.isEmpty else { return }
        let why = "the browser test needs " + missing.joined(separator: ", ") + " (apt install chromium chromium-driver python3-selenium)"
        // Thrown, so the test stops here (a failure under board/test.sh, a skip elsewhere).
        throw missingPeer(why)
    }

    /// Starts `executable` so it dies with this process, output collected into files.
    private func spawn(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Jukebox.Running {
        let command = ChildDeath.command(executable, arguments)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: command.executable)
        p.arguments = command.arguments
        // In the test's own scratch folder, removed with it: nothing left loose in /tmp.
        let base = dir + "/child-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".err", contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: base + ".out")
        p.standardError = FileHandle(forWritingAtPath: base + ".err")
        p.standardInput = FileHandle.nullDevice
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try p.run()
        return Jukebox.Running(process: p, outPath: base + ".out", errPath: base + ".err")
    }

    /// What follows `prefix` on the first line of `running`'s stdout that starts with it, once written.
    private func waitForLine(_ running: Jukebox.Running, prefix: String, timeout: Double) -> String? {
        var found: String?
        _ = waitFor(timeout) {
            found = running.stdoutSoFar.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            return found != nil || !running.process.isRunning
        }
        return found
    }
}

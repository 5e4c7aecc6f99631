// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxService

/// The web face's figures (issue 28), reported, never asserted: the memory `jukebox web` adds
/// beside a playing player (idle, then with one page open), the assets' size gzipped, and, when
/// chromium, chromium-driver and python3-selenium are present, Tests/Browser/web_bench.py's first
/// load with the CPU throttled 6x and the time from `ctl vol N` to the page showing it.
enum WebBench {
    static func measure(changes: Int, in ws: Workspace) throws -> [String: Any] {
        var out: [String: Any] = [:]
        let file = try ws.audio(.flac, seconds: 60)
        let socket = ws.path("web.sock"), config = ws.path("web.config.json")
        try """
        {"device": "\(ws.realTimeDevice)", "state": "\(ws.path("web-state.json"))", "socket": "\(socket)", "releaseDelay": 300}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let player = try ws.start(["run", "--config", config])
        defer { player.send(SIGTERM); _ = try? player.wait(timeout: 10) }
        for line in ["add \(file)", "play"] {
            var reply: String?
            _ = waitFor(10) {
                reply = try? ControlClient.connect(path: socket, request: line, timeout: 5).reply
                return reply != nil
            }
            guard reply != nil else { throw BenchError("the player did not answer \(line)") }
        }
        try FileManager.default.createDirectory(atPath: ws.path("web-state"), withIntermediateDirectories: true)
        // The page from this source tree (a release build elsewhere would look in /usr/share).
        let assetsDir = Workspace.sourceTree + "/Sources/JukeboxWeb/Assets"
        let web = try ws.start(["web", "--socket", socket, "--assets", assetsDir, "--listen", "127.0.0.1:0", "--state", ws.path("web-state")])
        defer { web.send(SIGTERM); _ = try? web.wait(timeout: 10) }
        var url = ""
        _ = waitFor(10) {
            let text = (try? String(contentsOfFile: web.outPath, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("web: listening on ") }) else { return false }
            url = String(line.dropFirst("web: listening on ".count))
            return true
        }
        guard !url.isEmpty else { throw BenchError("jukebox web did not say where it listens") }
        Thread.sleep(forTimeInterval: 1)
        if let m = web.memory() { out["idleVmRSSKiB"] = m.rss; out["idleRssAnonKiB"] = m.anon }
        if let m = player.memory() { out["playerVmRSSKiB"] = m.rss }

        // The assets, gzip -9 each (as docs/WEB.md counts them).
        let assets: String? = FileManager.default.fileExists(atPath: assetsDir) ? assetsDir : nil
        if let assets {
            let sizes = shell("cd '\(assets)' && for f in *; do printf '%s %s %s\\n' \"$f\" $(wc -c < \"$f\") $(gzip -9c \"$f\" | wc -c); done")
            var raw = 0, zipped = 0
            for line in sizes.split(separator: "\n") {
                let f = line.split(separator: " ")
                if f.count == 3, let r = Int(f[1]), let z = Int(f[2]) { raw += r; zipped += z }
            }
            out["assetsBytes"] = raw
            out["assetsGzipBytes"] = zipped
        }

        let script = Workspace.sourceTree + "/Tests/Browser/web_bench.py"
        let have = ["/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/bin/python3"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && shell("/usr/bin/python3 -c 'import selenium.webdriver' 2>/dev/null && echo yes").hasPrefix("yes")
            && FileManager.default.fileExists(atPath: script)
        guard have else {
            out["browser"] = "absent (needs chromium, chromium-driver, python3-selenium): no page figures"
            return out
        }
        let result = shell("HOME='\(ws.path("web-state"))' /usr/bin/python3 '\(script)' --url '\(url)' --jukebox '\(ws.binary)' --socket '\(socket)' --pid \(web.pid) --n \(changes) 2>&1")
        guard let last = result.split(separator: "\n").last, let data = String(last).data(using: .utf8),
              let browser = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw BenchError("web_bench.py failed: " + result.suffix(2000))
        }
        for (k, v) in browser { out[k] = v }
        return out
    }

    private static func shell(_ command: String) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        let pipe = Pipe()
        p.standardOutput = pipe
        do { try p.run() } catch { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

extension WebFaceTests {
    /// `jukebox web-pin --state DIR/state` with `pin` on its standard input (a pipe: one line).
    func webPin(_ pin: String) throws -> Jukebox.Result {
        let input = Pipe()
        let running = try Jukebox.start(["web-pin", "--state", dir + "/state"], stdin: input.fileHandleForReading)
        input.fileHandleForWriting.write(Data((pin + "\n").utf8))
        try input.fileHandleForWriting.close()
        return try XCTUnwrap(running.wait(timeout: 20), "web-pin did not finish")
    }

    /// Signed in with a PIN set by web-pin: the cookie and the CSRF token.
    func signIn() throws -> (cookie: String, csrf: String) {
        XCTAssertEqual(try webPin("2468").status, 0)
        let login = try http("POST", "/api/login", json: "{\"pin\":\"2468\"}")
        XCTAssertEqual(login.status, 200, login.body)
        let cookie = String(try XCTUnwrap(login.headers["set-cookie"]).prefix { $0 != ";" })
        let csrf = try XCTUnwrap(login.body.range(of: "[0-9a-f]{64}", options: .regularExpression).map { String(login.body[$0]) })
        return (cookie, csrf)
    }

    /// A setting changed through the web: written into the player's config file (the rest of
    /// the file as it was), the player reads it again and its status shows it; a value the
    /// config refuses is refused with the config's words and nothing is written.
    func testSettingsAreWrittenToTheConfigAndThePlayerAppliesThem() throws {
        let daemon = try start(config: true, extra: ["zzUnknown": ["kept": true], "volumeMax": 90])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let path = dir + "/c.json"
        XCTAssertEqual(try http("GET", "/api/settings").status, 401, "signed in only")
        let (cookie, csrf) = try signIn()
        let auth = ["Cookie": cookie, "X-CSRF-Token": csrf]

        let shown = try http("GET", "/api/settings", headers: ["Cookie": cookie])
        XCTAssertEqual(shown.status, 200, shown.body)
        XCTAssertTrue(shown.body.hasPrefix("{\"file\":\"\(path)\",\"settings\":[{\"key\":\"volumeMin\",\"value\":0,\"applies\":\"now\""), shown.body)
        XCTAssertTrue(shown.body.contains("{\"key\":\"volumeMax\",\"value\":90,"), shown.body)
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volumeMin\":0,\"volumeMax\":90,"))

        let before = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(before.hasSuffix("}"), before)
        let changed = try http("POST", "/api/settings/change", json: "{\"changes\":{\"volumeMax\":60,\"volumeMin\":10}}", headers: auth)
        XCTAssertEqual(changed.status, 200, changed.body)
        XCTAssertEqual(changed.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded\",\"atStart\":[]}")
        // The player's value for volumeMax replaced in place; volumeMin added at the end; the rest as it was.
        let after = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(after, String(before.replacingOccurrences(of: "\"volumeMax\":90", with: "\"volumeMax\":60").dropLast()) + ", \"volumeMin\": 10}")
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volumeMin\":10,\"volumeMax\":60,"))
        XCTAssertEqual(try ctl("vol", "95").status, 0)
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volume\":60,"), "the new limit holds")

        // Refused by the config's own check: its words, and the file untouched.
        let refused = try http("POST", "/api/settings/change", json: "{\"changes\":{\"volumeMin\":70}}", headers: auth)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.body, "{\"error\":\"\(path): volumeMin: must be 0 to 100, with volumeMin <= volumeMax\"}")
        for (body, status) in [("{\"changes\":{\"state\":\"/tmp/x\"}}", 400), ("{\"changes\":{\"idlePowerOff\":\"soon\"}}", 400),
                               ("{\"changes\":[]}", 400), ("{\"changes\":{\"volumeMax\":50}}", 403)] {
            let reply = try http("POST", "/api/settings/change", json: body, headers: status == 403 ? ["Cookie": cookie] : auth)
            XCTAssertEqual(reply.status, status, body + " " + reply.body)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), after, "nothing written on a refusal")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("c.json") }, ["c.json"], "no temporary left")

        // A setting read at start says so; removing an optional one puts its default back.
        let boot = try http("POST", "/api/settings/change", json: "{\"changes\":{\"bootVolume\":20,\"idlePowerOff\":null}}", headers: auth)
        XCTAssertEqual(boot.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded\",\"atStart\":[\"bootVolume\"]}")
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).hasSuffix(", \"volumeMin\": 10, \"bootVolume\": 20}"))
    }
}

extension WebFaceTests {
    /// The System page's API: the player's `system --json` and its last log lines, signed in
    /// only; `restart` (signed in) makes the player save and exit 75 for systemd to start it again.
    func testSystemShowsTheBoxAndRestartExitsForSystemd() throws {
        let daemon = try start()
        defer { if daemon.process.isRunning { daemon.process.terminate(); _ = daemon.wait(timeout: 5) } }
        XCTAssertEqual(try http("GET", "/api/system").status, 401, "signed in only")
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"system --json\"}").status, 403)
        XCTAssertEqual(try http("POST", "/api/control", json: "{\"line\":\"restart\"}").status, 401)
        let (cookie, csrf) = try signIn()
        let reply = try http("GET", "/api/system", headers: ["Cookie": cookie])
        XCTAssertEqual(reply.status, 200, reply.body)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any], reply.body)
        let system = try XCTUnwrap(object["system"] as? [String: Any])
        XCTAssertEqual((system["version"] as? String).map { $0 + "\n" }, try ctl("version").stdout.replacingOccurrences(of: "ok ", with: ""))
        XCTAssertGreaterThan(system["uptime"] as? Int ?? 0, 0)
        XCTAssertEqual((system["disks"] as? [[String: Any]])?.first?["folder"] as? String, nil, "no music folder, no state file: no disk")
        let log = try XCTUnwrap(object["log"] as? [String])
        XCTAssertFalse(log.isEmpty, reply.body)
        XCTAssertTrue(log.allSatisfy { !$0.hasPrefix("  ") && !$0.hasPrefix("ok ") }, "\(log)")

        let restart = try http("POST", "/api/control", json: "{\"line\":\"restart\"}", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
        XCTAssertEqual(restart.status, 200, restart.body)
        XCTAssertEqual(restart.body, "{\"reply\":\"ok restarting\"}")
        let ended = try XCTUnwrap(daemon.wait(timeout: 10), "the player did not exit on restart")
        XCTAssertEqual(ended.status, 75, ended.stderr)
        XCTAssertTrue(ended.stderr.contains("restart asked: saving and exiting 75"), ended.stderr)
    }
}

extension WebFaceTests {
    /// `ctl reload` on a config that no longer loads: the player says so and keeps the running one.
    func testReloadOfABadConfigKeepsTheRunningOne() throws {
        let daemon = try start(extra: ["volumeMax": 80])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let path = dir + "/c.json"
        let good = try String(contentsOfFile: path, encoding: .utf8)
        try Data(good.replacingOccurrences(of: "\"volumeMax\":80", with: "\"volumeMax\":800").utf8).write(to: URL(fileURLWithPath: path))
        let refused = try ctl("reload")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("the configuration was not reloaded"), refused.stdout + refused.stderr)
        XCTAssertTrue(try ctl("log", "5").stdout.contains("volumeMax: must be 0 to 100"))
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volumeMax\":80,"))
        try Data(good.replacingOccurrences(of: "\"volumeMax\":80", with: "\"volumeMax\":70").utf8).write(to: URL(fileURLWithPath: path))
        let applied = try ctl("reload")
        XCTAssertEqual(applied.status, 0, applied.stderr)
        XCTAssertEqual(applied.stdout, "configuration reloaded\n")
        XCTAssertTrue(try ctl("status", "--json").stdout.contains("\"volumeMax\":70,"))
    }
}

extension WebFaceTests {
    /// The parental rules' spans through the web: a cap for the whole day and quiet hours written
    /// into the file (the rest kept), the player applies the cap at once; a span the config
    /// refuses writes nothing.
    func testParentalSpansAreWrittenAndThePlayerAppliesThem() throws {
        let daemon = try start(config: true, extra: ["parental": ["dailyLimitMinutes": 60], "volumeMax": 90])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let path = dir + "/c.json"
        let (cookie, csrf) = try signIn()
        let auth = ["Cookie": cookie, "X-CSRF-Token": csrf]
        let shown = try http("GET", "/api/settings", headers: ["Cookie": cookie])
        XCTAssertTrue(shown.body.contains("{\"key\":\"parental.caps\",\"value\":[],\"applies\":\"now\",\"optional\":true}"), shown.body)
        XCTAssertTrue(shown.body.contains("{\"key\":\"parental.quietHours\",\"value\":null,"), shown.body)

        let body = #"{"changes":{"parental.caps":[{"from":"06:00","to":"06:00","volumeMax":40}],"#
            + #""parental.quietHours":{"from":"19:30","to":"07:00","folders":["/srv/music/lullabies"],"volumeMax":50}}}"#
        let changed = try http("POST", "/api/settings/change", json: body, headers: auth)
        XCTAssertEqual(changed.status, 200, changed.body)
        XCTAssertEqual(changed.body, "{\"saved\":true,\"reload\":\"ok configuration reloaded\",\"atStart\":[]}")
        let file = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(file.contains(#""parental":{"dailyLimitMinutes":60, "caps": [{"from": "06:00", "to": "06:00", "volumeMax": 40}], "#
                                    + #""quietHours": {"from": "19:30", "to": "07:00", "folders": ["/srv/music/lullabies"], "volumeMax": 50}}"#), file)
        // A cap for the whole day holds whatever the clock says (the quiet hours' is higher, and
        // holds too before the clock is synchronised).
        let status = try ctl("status", "--json").stdout
        XCTAssertTrue(status.contains("\"volumeMax\":40,"), status)

        let refused = try http("POST", "/api/settings/change", json: #"{"changes":{"parental.caps":[{"from":"6","to":"06:00","volumeMax":40}]}}"#,
                               headers: auth)
        XCTAssertEqual(refused.status, 400, refused.body)
        XCTAssertTrue(refused.body.hasPrefix("{\"error\":\"\(path): parental: must be"), refused.body)
        XCTAssertEqual(try http("POST", "/api/settings/change", json: #"{"changes":{"parental.caps":{"from":"06:00","to":"07:00","evil":1}}}"#,
                                headers: auth).status, 400)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), file, "nothing written on a refusal")
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import XCTest

/// `jukebox mpd-tcp` and board/mpd-network.sh (what install.sh and the package's postinst run)
/// with the real binary, into a staging root: a TCP listener opens the sandbox (the drop-in), a
/// Unix-only or absent `mpd` closes it again; a config the player would refuse changes nothing.
final class MPDNetworkTests: ScratchTestCase {
    var config: String { dir + "/root/etc/jukebox/config.json" }
    var dropin: String { dir + "/root/etc/systemd/system/jukebox.service.d/mpd-network.conf" }
    var avahi: String { dir + "/root/etc/avahi/services/jukebox-mpd.service" }
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("board/mpd-network.sh").path
    }

    func write(_ json: String) throws {
        try FileManager.default.createDirectory(atPath: dir + "/root/etc/jukebox", withIntermediateDirectories: true)
        try json.write(toFile: config, atomically: true, encoding: .utf8)
    }

    /// Runs board/mpd-network.sh --root against the staging root.
    func network() throws -> Jukebox.Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [Self.script, "--root", dir + "/root", "--jukebox", Jukebox.binary]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return Jukebox.Result(status: p.terminationStatus, stdout: text, stderr: "")
    }

    func testMpdTCPListsTheTCPListenersOnly() throws {
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": ["127.0.0.1", "/run/jukebox/mpd", "::"], "port": 6601}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--config", config]).stdout, "127.0.0.1 6601\n:: 6601\n")
        try write(#"{"music": ["/srv/music"], "mpd": {}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--config", config]).stdout, "127.0.0.1 6600\n")
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": "/run/jukebox/mpd"}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--config", config]).stdout, "")
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": "localhost"}}"#)
        let bad = try Jukebox.run(["mpd-tcp", "--config", config])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("mpd.bind"), bad.stderr)
    }

    /// Streams need the internet: `radio.network`, or a URL among the config's `music`, opens the
    /// sandbox to any address (no bind); a URL added later by a client does not (the switch is
    /// for that), and turning both off closes it again.
    func testRadioOpensTheSandboxToAnyAddressWithoutBind() throws {
        try write(#"{"music": ["/srv/music"], "radio": {"network": true}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--radio", "--config", config]).stdout, "any\n")
        try write(#"{"music": ["/srv/music", "https://radio.example/live.mp3"]}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--radio", "--config", config]).stdout, "any\n")
        try write(#"{"music": ["/srv/music"], "radio": {"bufferSeconds": 3}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--radio", "--config", config]).stdout, "")
        try write(#"{"music": ["/srv/music"], "radio": {"network": "yes"}}"#)
        XCTAssertEqual(try Jukebox.run(["mpd-tcp", "--radio", "--config", config]).status, 1)

        guard FileManager.default.fileExists(atPath: Self.script) else { throw XCTSkip("no \(Self.script) (tests run outside the checkout)") }
        try write(#"{"music": ["http://radio.example:8000/live"]}"#)
        XCTAssertEqual(try network().status, 0)
        let dropped = try String(contentsOfFile: dropin, encoding: .utf8)
        for line in ["PrivateNetwork=no", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK", "IPAddressAllow=any", "SocketBindDeny=any"] {
            XCTAssertTrue(dropped.split(separator: "\n").contains(Substring(line)), "\(line) not in:\n\(dropped)")
        }
        XCTAssertFalse(dropped.contains("SocketBindAllow"), dropped)
        try write(#"{"music": ["/srv/music"]}"#)
        XCTAssertEqual(try network().status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dropin), "the drop-in stayed without radio")
    }

    func testTheDropInFollowsTheConfig() throws {
        guard FileManager.default.fileExists(atPath: Self.script) else { throw XCTSkip("no \(Self.script) (tests run outside the checkout)") }
        try FileManager.default.createDirectory(atPath: dir + "/root/etc/avahi/services", withIntermediateDirectories: true)
        try write(#"{"music": ["/srv/music"]}"#)
        XCTAssertEqual(try network().status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dropin), "a drop-in without an mpd listener")
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": "127.0.0.1", "port": 6610}}"#)
        XCTAssertEqual(try network().status, 0)
        let loopback = try String(contentsOfFile: dropin, encoding: .utf8)
        for line in ["PrivateNetwork=no", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "IPAddressAllow=localhost",
                     "SocketBindDeny=any", "SocketBindAllow=tcp:6610"] {
            XCTAssertTrue(loopback.split(separator: "\n").contains(Substring(line)), "\(line) not in:\n\(loopback)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: avahi), "a loopback listener announced on the LAN")
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": ["0.0.0.0", "/run/jukebox/mpd"], "port": 6611}}"#)
        XCTAssertEqual(try network().status, 0)
        XCTAssertTrue(try String(contentsOfFile: dropin, encoding: .utf8).contains("IPAddressAllow=localhost link-local 10.0.0.0/8"))
        XCTAssertTrue(try String(contentsOfFile: avahi, encoding: .utf8).contains("<type>_mpd._tcp</type>\n    <port>6611</port>"))
        // A config the player refuses leaves the files as they were, and says so.
        try write(#"{"music": ["/srv/music"], "mpd": {"port": 0}}"#)
        let refused = try network()
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains("left as it is"), refused.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dropin))
        try write(#"{"music": ["/srv/music"], "mpd": {"bind": "/run/jukebox/mpd"}}"#)
        XCTAssertEqual(try network().status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dropin), "the drop-in stayed for a Unix-only listener")
        XCTAssertFalse(FileManager.default.fileExists(atPath: avahi), "the announcement stayed")
    }
}

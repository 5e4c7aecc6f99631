// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
@testable import JukeboxWeb
import XCTest

/// The web face's pure pieces, by tables.
final class WebPiecesTests: XCTestCase {
    func testTheRouterMapsMethodAndPath() {
        let table: [(String, String, WebRoute)] = [
            ("GET", "/", .asset("index.html")),
            ("GET", "/app.js", .asset("app.js")),
            ("HEAD", "/app.css", .asset("app.css")),
            ("GET", "/api/status", .status),
            ("GET", "/api/queue", .queue),
            ("GET", "/api/library", .library),
            ("POST", "/api/library", .methodNotAllowed),
            ("GET", "/api/events", .events),
            ("GET", "/api/session", .session),
            ("POST", "/api/pin", .pin),
            ("POST", "/api/login", .login),
            ("POST", "/api/logout", .logout),
            ("POST", "/api/control", .control),
            ("GET", "/api/control", .methodNotAllowed),
            ("GET", "/api/settings", .settings),
            ("POST", "/api/settings/change", .changeSettings),
            ("POST", "/api/settings", .methodNotAllowed),
            ("GET", "/api/system", .system),
            ("POST", "/api/status", .methodNotAllowed),
            ("POST", "/app.js", .methodNotAllowed),
            ("GET", "/api/other", .notFound),
            ("GET", "/../etc/passwd", .notFound),
            ("GET", "/..", .notFound),
            ("GET", "/.hidden", .notFound),
            ("GET", "/sub/app.js", .notFound),
            ("GET", "/a b.js", .notFound),
            ("GET", "//etc/passwd", .notFound),
            ("GET", "", .notFound),
            ("GET", "/" + String(repeating: "a", count: 65), .notFound),
        ]
        for (method, path, route) in table {
            XCTAssertEqual(WebRoute.route(method: method, path: path), route, "\(method) \(path)")
        }
    }

    func testTheGuardRefusesForeignPeersCrossOriginAndWrongBodies() {
        typealias R = RequestGuard.Refusal
        let table: [(String, Bool, String?, String?, String?, Bool, R?)] = [
            ("GET", true, "box", nil, nil, false, nil),
            ("GET", false, "box", nil, nil, false, R(403, "only this machine and the local network may connect", close: true)),
            ("POST", true, "box:8080", nil, "application/json", false, nil),
            ("POST", true, "box:8080", "http://box:8080", "application/json; charset=utf-8", false, nil),
            ("POST", true, "box:8080", "http://evil.example", "application/json", false, R(403, "cross-origin request refused")),
            ("POST", true, "box:8080", "https://box:8080", "application/json", false, R(403, "cross-origin request refused")),
            ("POST", true, nil, "http://box", "application/json", false, R(403, "cross-origin request refused")),
            ("POST", true, "box", "null", "application/json", false, R(403, "cross-origin request refused")),
            ("POST", true, "box", nil, "text/plain", false, R(415, "a POST must be application/json")),
            ("POST", true, "box", nil, nil, false, R(415, "a POST must be application/json")),
            ("POST", true, "box", nil, "application/json", true, R(413, "the request is larger than 16 KiB")),
            ("POST", false, "box", nil, "application/json", false, R(403, "only this machine and the local network may connect", close: true)),
        ]
        for (method, local, host, origin, type, tooLarge, refusal) in table {
            XCTAssertEqual(RequestGuard.check(method: method, localPeer: local, host: host, origin: origin, contentType: type,
                                              bodyTooLarge: tooLarge), refusal, "\(method) \(local) \(origin ?? "-") \(type ?? "-")")
        }
    }

    /// DNS rebinding: a foreign name that resolves to the box is refused, whatever its peer and Origin.
    func testOnlyAddressesAndLocalNamesMayBeTheHost() {
        let table: [(String?, Bool)] = [
            (nil, true), ("", true), ("127.0.0.1", true), ("127.0.0.1:8080", true), ("192.168.1.20", true), ("[::1]:80", true),
            ("[fe80::1%25eth0]", true), ("localhost", true), ("localhost:80", true), ("jukebox", true), ("JUKEBOX:80", true),
            ("jukebox.local", true), ("jukebox.local.", true), ("kids-box.lan", true), ("box.home.arpa", true),
            ("jukebox.fritz.box", true), ("pi.example.org", true),
            ("evil.example", false), ("evil.example:80", false), ("jukebox.evil.example", false), ("local.evil.example", false),
            ("evil.example.", false), ("1.2.3.4.evil.example", false), ("box.local:http", false), ("a b", false),
            ("<img>", false), ("evil.box", false), ("127.0.0.1.nip.io", false),
        ]
        for (host, allowed) in table {
            XCTAssertEqual(RequestGuard.hostIsLocal(host, machineName: "pi.example.org"), allowed, host ?? "nil")
        }
        XCTAssertEqual(RequestGuard.check(method: "GET", localPeer: true, host: "evil.example", origin: nil, contentType: nil,
                                          bodyTooLarge: false),
                       RequestGuard.Refusal(403, "unknown host name: open the box by its address or its .local name", close: true))
        XCTAssertEqual(RequestGuard.check(method: "POST", localPeer: true, host: "evil.example", origin: "http://evil.example",
                                          contentType: "application/json", bodyTooLarge: false)?.status, 403)
    }

    /// The peer rule is the MPD listener's (MPDPeer.isLocal), on the addresses libmicrohttpd hands over.
    func testThePeerRuleIsTheMPDListeners() {
        func v4(_ text: String) -> sockaddr_storage {
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { raw in
                let sin = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                sin.pointee.sin_family = sa_family_t(AF_INET)
                inet_pton(AF_INET, text, &sin.pointee.sin_addr)
            }
            return storage
        }
        for (address, local) in [("127.0.0.1", true), ("192.168.1.20", true), ("10.1.2.3", true), ("8.8.8.8", false), ("172.32.0.1", false)] {
            XCTAssertEqual(MPDPeer.isLocal(v4(address)), local, address)
        }
        XCTAssertFalse(MPDPeer.isLocal(sockaddr_storage()), "no address is not local")
    }

    func testWhichLinesAreOpenNeedASessionOrAreRefused() {
        let table: [(String, ControlAccess)] = [
            ("play", .open), ("play 3", .open), ("pause", .open), ("toggle", .open), ("stop", .open), ("next", .open),
            ("prev", .open), ("seek 1:00", .open), ("seek +0:10", .open), ("vol 40", .open), ("vol -5", .open),
            ("shuffle on", .open), ("repeat all", .open), ("delete 2", .open), ("move 1 3", .open), ("clear", .open),
            ("status --json", .open), ("queue --json", .open), ("ls --json /music", .open), ("version", .open),
            ("add /srv/music/A", .session), ("load /srv/music/A", .session), ("sleep 30", .session), ("sleep off", .session),
            ("card assign /srv/music/A", .session), ("save", .session), ("reload", .session), ("restart", .session), ("system --json", .refused),
            ("card assign --next /srv/music/A", .session), ("card assign --cancel", .session), ("card delete 04A3", .session),
            ("bookmark reset /srv/music/A", .session), ("bookmark reset --all", .session), ("cards --json", .open), ("bookmarks --json", .open),
            ("interrupt begin", .refused), ("interrupt end", .refused), ("yield begin", .refused), ("yield end", .refused), ("source begin airplay", .refused), ("source end airplay", .refused),
            ("events", .refused), ("events --json", .refused), ("log 5", .refused), ("diag", .refused),
            ("bluetooth pair AA:BB:CC:DD:EE:FF", .session), ("bluetooth trust aa:bb:cc:dd:ee:ff", .session),
            ("bluetooth forget AA:BB:CC:DD:EE:FF", .session),
        ]
        for (line, access) in table {
            guard case .success(let command) = ControlCommand.parse(line, seed: 0) else { XCTFail(line); continue }
            XCTAssertEqual(ControlAccess.of(command), access, line)
        }
    }

    func testSessionsNeedTheirTokenAndItsCSRF() {
        var table = SessionTable(limit: 2, lifetime: 100)
        XCTAssertEqual(table.check(cookie: nil, csrfHeader: nil, now: 0), .signInFirst)
        table.create(token: "t1", csrf: "c1", now: 0)
        XCTAssertEqual(table.check(cookie: "t1", csrfHeader: "c1", now: 1), .allowed)
        XCTAssertEqual(table.check(cookie: "t1", csrfHeader: nil, now: 1), .badCSRF)
        XCTAssertEqual(table.check(cookie: "t1", csrfHeader: "c2", now: 1), .badCSRF)
        XCTAssertEqual(table.check(cookie: "t2", csrfHeader: "c1", now: 1), .signInFirst)
        // Unused for the lifetime: gone.
        XCTAssertEqual(table.check(cookie: "t1", csrfHeader: "c1", now: 102), .signInFirst)
        // Bounded: the least recently used goes.
        table.create(token: "a", csrf: "ca", now: 200)
        table.create(token: "b", csrf: "cb", now: 201)
        _ = table.csrf(for: "a", now: 202)
        table.create(token: "c", csrf: "cc", now: 203)
        XCTAssertEqual(table.sessions.keys.sorted(), ["a", "c"])
        table.end("a")
        XCTAssertEqual(table.check(cookie: "a", csrfHeader: "ca", now: 204), .signInFirst)
    }

    func testWrongPinsBackOffOneTwoFourUpToAMinute() {
        var backoff = PinBackoff()
        var now = 0.0
        XCTAssertNil(backoff.wait(now: now))
        XCTAssertEqual(backoff.failed(now: now), 0)
        XCTAssertEqual(backoff.failed(now: now), 0)
        XCTAssertNil(backoff.wait(now: now), "two wrong tries cost nothing more")
        var waits: [Int] = []
        for _ in 0..<9 {
            waits.append(backoff.failed(now: now))
            XCTAssertEqual(backoff.wait(now: now), waits.last)
            XCTAssertEqual(backoff.wait(now: now + Double(waits.last!) - 0.5), 1)
            now += Double(waits.last!)
            XCTAssertNil(backoff.wait(now: now))
        }
        XCTAssertEqual(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60])
        backoff.succeeded()
        XCTAssertEqual(backoff.failed(now: now), 0)
    }

    func testWhatAPinMayBe() {
        XCTAssertNil(pinProblem("1234"))
        XCTAssertNil(pinProblem("correct horse battery"))
        XCTAssertNotNil(pinProblem("123"))
        XCTAssertNotNil(pinProblem(String(repeating: "x", count: 65)))
        XCTAssertNotNil(pinProblem("12\n34"))
    }

    func testTheEventFramesSayOfflineOnceAndTheQueueWhenItChanged() {
        var sent: String?, offline = false
        var s = EventHub.Snapshot(generation: 1, status: "{\"count\":1}", queue: "{\"entries\":[]}", offline: false)
        XCTAssertEqual(EventStream.frames(s, after: -1, sentQueue: &sent, wasOffline: &offline),
                       "event: status\ndata: {\"count\":1}\n\nevent: queue\ndata: {\"entries\":[]}\n\n")
        s.generation = 2
        s.status = "{\"count\":1,\"x\":2}"
        XCTAssertEqual(EventStream.frames(s, after: 1, sentQueue: &sent, wasOffline: &offline), "event: status\ndata: {\"count\":1,\"x\":2}\n\n")
        XCTAssertEqual(EventStream.frames(s, after: 2, sentQueue: &sent, wasOffline: &offline), ": keepalive\n\n")
        let gone = EventHub.Snapshot(generation: 3, status: nil, queue: nil, offline: true)
        XCTAssertEqual(EventStream.frames(gone, after: 2, sentQueue: &sent, wasOffline: &offline), "event: offline\ndata: {}\n\n")
        XCTAssertTrue(offline)
    }

    /// The PIN's file: a yescrypt hash, mode 0600, the PIN checked against it.
    func testThePinIsStoredAsAYescryptHashOnlyItsOwnerReads() throws {
        let folder = "/tmp/jukebox-web-pin-\(getpid())"
        mkdir(folder, 0o700)
        defer { unlink(folder + "/web-pin"); rmdir(folder) }
        let store = PinStore(folder: folder)
        XCTAssertNil(store.hash())
        try store.set("2468")
        let hash = try XCTUnwrap(store.hash())
        XCTAssertTrue(hash.hasPrefix("$y$"), hash)
        XCTAssertFalse(hash.contains("2468"))
        var st = stat()
        XCTAssertEqual(stat(folder + "/web-pin", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertTrue(store.check("2468"))
        XCTAssertFalse(store.check("2469"))
        XCTAssertNotEqual(randomToken(), randomToken())
        XCTAssertEqual(randomToken().count, 64)
    }
}

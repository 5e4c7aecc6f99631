// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// Long `queue --json` and `ls --json` replies through the real player and `jukebox web`: a queue of
/// 1,000 entries with long names and a folder of 1,000 files are answered in pages, each one reply
/// line under the control socket's 64 KiB, and every entry is reachable by following `next`
/// (`/api/queue?from=N`, `/api/library?path=…&from=N`). Before paging both answered an error.
final class WebPagingTests: DaemonTestCase {
    private var web: Jukebox.Running?
    private var port: UInt16 = 0
    static let count = 1000

    override func tearDown() {
        if let web { web.process.terminate(); _ = web.wait(timeout: 5) }
        super.tearDown()
    }

    /// `count` files in `dir/music/Q`, names of about 180 characters: one tiny WAV, hard links to it.
    private func start() throws -> Jukebox.Running {
        let folder = dir + "/music/Q"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TestAudio.write(path: dir + "/one.wav", kind: .wav16, frames: 4_410 * 100)
        let long = String(repeating: "a long name for paging ", count: 8)
        for i in 1...Self.count {
            XCTAssertEqual(link(dir + "/one.wav", folder + "/" + String(format: "%04d ", i) + long + ".wav"), 0)
        }
        // 1,000 files' tags are read before the first one plays: seconds on a busy machine.
        let daemon = try startDaemon([dir + "/music"], playingWithin: 60)
        XCTAssertTrue(waitFor(30) { (try? ctl("status", "--json"))?.stdout.contains("\"count\":\(Self.count)") == true },
                      (try? ctl("status", "--json").stdout) ?? "")
        try FileManager.default.createDirectory(atPath: dir + "/web", withIntermediateDirectories: true)
        try Data("<!doctype html><title>t</title>".utf8).write(to: URL(fileURLWithPath: dir + "/web/index.html"))
        let web = try Jukebox.start(["web", "--socket", socket, "--listen", "127.0.0.1:0", "--assets", dir + "/web",
                                     "--state", dir + "/state"])
        self.web = web
        XCTAssertTrue(waitFor(10) { web.stdoutSoFar.contains("/\n") }, web.stdoutSoFar)
        let line = web.stdoutSoFar.split(separator: "\n").first.map(String.init) ?? ""
        port = try XCTUnwrap(UInt16(line.dropFirst("web: listening on http://127.0.0.1:".count).dropLast()), line)
        return daemon
    }

    /// Follows the pages of `path` (`from` added as a query argument) and returns every object of
    /// the arrays `keys`, in order, and the number of pages.
    private func pages(_ path: String, _ keys: [String]) throws -> (entries: [[String: Any]], pages: Int) {
        var entries: [[String: Any]] = []
        var from: Int? = nil
        var count = 0
        repeat {
            let url = path + (from.map { (path.contains("?") ? "&" : "?") + "from=\($0)" } ?? "")
            let reply = try get(url)
            XCTAssertEqual(reply.status, 200, "\(url): \(reply.body.prefix(300))")
            guard reply.status == 200 else { break }
            XCTAssertLessThan(reply.body.utf8.count, 64 << 10, url)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any], url)
            XCTAssertNil(object["truncated"], url)
            let page = keys.flatMap { (object[$0] as? [[String: Any]]) ?? [] }
            XCTAssertFalse(page.isEmpty, "\(url): an empty page")
            entries += page
            count += 1
            let next = object["next"] as? Int
            if let next { XCTAssertGreaterThan(next, from ?? 1, url) }
            from = next
        } while from != nil && count < 200
        return (entries, count)
    }

    func testALongQueueAndABigFolderAreAnsweredInPages() throws {
        let daemon = try start()
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let queue = try pages("/api/queue", ["entries"])
        XCTAssertEqual(queue.entries.count, Self.count)
        XCTAssertEqual(queue.entries.map { $0["position"] as? Int }, (1...Self.count).map { $0 })
        XCTAssertGreaterThan(queue.pages, 1)
        print("web paging: a queue of \(Self.count) entries in \(queue.pages) pages")

        let folder = dir + "/music/Q"
        let listing = try pages("/api/library?path=" + folder.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, ["folders", "files"])
        XCTAssertEqual(listing.entries.count, Self.count)
        let names = listing.entries.compactMap { $0["name"] as? String }
        XCTAssertEqual(names.map { String($0.prefix(4)) }, (1...Self.count).map { String(format: "%04d", $0) })
        XCTAssertGreaterThan(listing.pages, 1)
        print("web paging: a folder of \(Self.count) files in \(listing.pages) pages")

        // The control lines themselves, as scripts use them.
        let second = try ctl("queue", "--json", "2")
        XCTAssertEqual(second.status, 0, second.stdout)
        XCTAssertTrue(second.stdout.hasPrefix("{\"entries\":[{\"position\":2,"), String(second.stdout.prefix(200)))
        let past = try ctl("queue", "--json", "1001")
        XCTAssertTrue(past.stdout.hasPrefix("{\"entries\":[],"), past.stdout)
    }

    private func get(_ path: String) throws -> WebReply {
        try WebClient.exchange(port: port, head: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n", timeout: 30)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// Tags are bounded where they enter: a 1 MiB TITLE (FLAC) or TIT2 (MP3) shows as its first 200
/// characters in `ctl`, MPD and the log, and bidi controls in tags or file names reach none of them.
final class LongTagTests: DaemonTestCase {
    static let huge = String(repeating: "T", count: 1 << 20)

    /// `jukebox ctl` against the daemon, which must answer (status 0) with no line over 4 KiB.
    private func answered(_ words: String..., file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try Jukebox.run(["ctl", "--socket", socket] + words)
        XCTAssertEqual(result.status, 0, "ctl \(words): \(result.stderr.prefix(300))", file: file, line: line)
        for row in result.stdout.split(separator: "\n") {
            XCTAssertLessThan(row.utf8.count, 4096, "ctl \(words): a line of \(row.utf8.count) bytes", file: file, line: line)
        }
        return result.stdout
    }

    /// `mpc -h 127.0.0.1 -p PORT ARGS...` to its end (at most 10 s).
    private func mpc(_ port: Int, _ args: String...) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mpc")
        p.arguments = ["-h", "127.0.0.1", "-p", String(port)] + args
        let out = dir + "/mpc.out", err = dir + "/mpc.err"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: out)
        p.standardError = FileHandle(forWritingAtPath: err)
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["MPD_HOST"] = nil
        env["MPD_PORT"] = nil
        p.environment = env
        try p.run()
        guard waitFor(10, { !p.isRunning }) else {
            p.terminate()
            throw NSError(domain: "mpc", code: 2, userInfo: [NSLocalizedDescriptionKey: "mpc \(args) did not finish in 10 s"])
        }
        p.waitUntilExit()
        return (p.terminationStatus, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    func testAMebibyteTitleIsCutTo200CharactersForCtlMPDAndTheLog() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpc") else {
            throw missingPeer("mpc is not installed; board/setup.sh installs it")
        }
        let flac = dir + "/long.flac", mp3 = dir + "/long.mp3"
        try TestAudio.write(path: dir + "/plain.flac", kind: .flac, frames: 44_100 * 30)
        try Data(Self.withComments(flac: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/plain.flac"))),
                                   ["TITLE=" + Self.huge, "ARTIST=" + Self.huge]))
            .write(to: URL(fileURLWithPath: flac))
        try TestAudio.write(path: dir + "/plain.mp3", kind: .mp3, frames: 44_100 * 30)
        try Data(Self.id3v2(frames: [("TIT2", [0] + Array(Self.huge.utf8))])
                 + Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/plain.mp3"))))
            .write(to: URL(fileURLWithPath: mp3))
        let port = try MPCTests.freePort()
        let daemon = try startDaemon([flac, mp3], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let shown = String(repeating: "T", count: 200)

        for _ in 0..<2 {
            let status = try answered("status")
            XCTAssertTrue(status.hasPrefix("▶ \(shown) – \(shown)  ") || status.hasPrefix("▶ \(shown)  "), String(status.prefix(600)))
            let json = try answered("status", "--json")
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            XCTAssertEqual(object["title"] as? String, shown)
            XCTAssertTrue(try answered("queue").contains("1. \(shown)"))
            XCTAssertFalse(try answered("diag").isEmpty)
            XCTAssertFalse(try answered("log", "50").isEmpty)

            let current = try mpc(port, "current")
            XCTAssertEqual(current.status, 0, current.err)
            XCTAssertTrue(current.out.hasSuffix(shown + "\n"), String(current.out.prefix(600)) + current.err)
            let playlist = try mpc(port, "playlist")
            XCTAssertEqual(playlist.status, 0, playlist.err)
            XCTAssertEqual(playlist.out.split(separator: "\n").count, 2, playlist.err)
            _ = try answered("next")
        }

        daemon.process.terminate()
        let stderr = daemon.wait(timeout: 5)?.stderr ?? ""
        XCTAssertTrue(stderr.contains(shown), String(stderr.prefix(600)))
        for row in stderr.split(separator: "\n") {
            XCTAssertLessThan(row.utf8.count, 4096, "a log line of \(row.utf8.count) bytes")
        }
    }

    /// U+202E and the other bidi controls, in a tag or a file name, are inert in every reply.
    func testBidiControlsInTagsAndNamesAreInertEverywhere() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mpc") else {
            throw missingPeer("mpc is not installed; board/setup.sh installs it")
        }
        let bidi = "\u{202E}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{061C}"
        let tagged = dir + "/tagged.flac", named = dir + "/gpj.\(bidi)exe.wav"
        try TestAudio.write(path: tagged, kind: .flac, frames: 44_100 * 30, tags: TestAudio.Tags(title: "Song\(bidi)gnoS", artist: "\u{202E}Band"))
        try TestAudio.write(path: named, kind: .wav16, frames: 44_100 * 30)
        let port = try MPCTests.freePort()
        let daemon = try startDaemon([tagged, named], extra: ["mpd": ["bind": "127.0.0.1", "port": port]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        func assertNoBidi(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
            let found = text.unicodeScalars.filter { bidi.unicodeScalars.contains($0) }
            XCTAssertTrue(found.isEmpty, "\(what): \(found.map { String($0.value, radix: 16) }) in \(text.debugDescription)", file: file, line: line)
        }
        for _ in 0..<2 {
            let status = try answered("status")
            assertNoBidi(status, "status")
            XCTAssertTrue(status.hasPrefix("▶ Song") || status.hasPrefix("▶ gpj."), status)
            assertNoBidi(try answered("status", "--json"), "status --json")
            assertNoBidi(try answered("queue"), "queue")
            assertNoBidi(try answered("log", "50"), "log")
            let current = try mpc(port, "-f", "%artist% %title% %file%", "current")
            XCTAssertEqual(current.status, 0, current.err)
            assertNoBidi(current.out, "mpc current")
            assertNoBidi(try mpc(port, "playlist").out, "mpc playlist")
            _ = try answered("next")
        }
        XCTAssertTrue(try answered("status").contains("Band"))
        daemon.process.terminate()
        assertNoBidi(daemon.wait(timeout: 5)?.stderr ?? "", "the log")
    }

    // MARK: Building files

    /// `flac` with its VORBIS_COMMENT replaced by one holding `comments`.
    static func withComments(flac bytes: [UInt8], _ comments: [String]) -> [UInt8] {
        func le(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let vendor = Array("jukebox tests".utf8)
        var comment = le(vendor.count) + vendor + le(comments.count)
        for text in comments { comment += le(text.utf8.count) + Array(text.utf8) }
        var out = Array(bytes[0..<4])
        var index = 4
        while true {
            let header = bytes[index]
            let length = Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if header & 0x7F != 4 { out += [header & 0x7F] + bytes[(index + 1)..<(index + 4 + length)] }
            index += 4 + length
            if header & 0x80 != 0 { break }
        }
        let n = comment.count
        out += [0x84, UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + comment
        return out + bytes[index...]
    }

    /// An ID3v2.3 tag of `frames` (id, body).
    static func id3v2(frames: [(String, [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        for (id, content) in frames {
            let size = content.count
            body += Array(id.utf8) + [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 0, 0] + content
        }
        let size = body.count
        return Array("ID3".utf8) + [3, 0, 0] + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)] + body
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import XCTest

/// `ls --json [PATH]` against a real player and real folders: what is inside the music folder is
/// listed, what is outside is refused, a link planted to `/` or out of it is not followed, and a
/// name that is not UTF-8 keeps the reply valid JSON.
final class LibraryListingTests: DaemonTestCase {
    func testItListsInsideTheMusicFolderAndNothingOutside() throws {
        let music = dir + "/music", outside = dir + "/outside"
        for folder in [music + "/Album 2", music + "/Album 10", music + "/.hidden", outside] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        for file in [music + "/Album 2/b.wav", music + "/Album 2/a.wav", music + "/top.wav", outside + "/secret.wav"] {
            try TestAudio.write(path: file, kind: .wav16, frames: 44_100)
        }
        try Data("not listed".utf8).write(to: URL(fileURLWithPath: music + "/notes.txt"))
        XCTAssertEqual(symlink("/", music + "/root"), 0)
        XCTAssertEqual(symlink(outside, music + "/out"), 0)
        XCTAssertEqual(symlink(outside + "/secret.wav", music + "/secret.wav"), 0)
        XCTAssertEqual(symlink(music + "/Album 2", music + "/inside link"), 0)
        // A name that is not UTF-8: caf\xE9.wav.
        try TestAudio.write(path: music + "/cafe.wav", kind: .wav16, frames: 44_100)
        let name = (Array((music + "/caf").utf8) + [0xE9] + Array(".wav".utf8)).map { CChar(bitPattern: $0) } + [0]
        XCTAssertEqual(rename(music + "/cafe.wav", name), 0)

        let daemon = try startDaemon([music])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        func list(_ words: String...) throws -> (ok: Bool, object: [String: Any], text: String) {
            let result = try Jukebox.run(["ctl", "--socket", socket, "ls", "--json"] + words)
            let text = (result.status == 0 ? result.stdout : result.stderr).trimmingCharacters(in: .newlines)
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
            return (result.status == 0, object, text)
        }
        func names(_ o: [String: Any], _ key: String) -> [String] { (o[key] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }

        // The music folder (the default): folders by name (2 before 10), no hidden ones, no link out.
        let top = try list()
        XCTAssertTrue(top.ok, top.text)
        XCTAssertEqual(top.object["path"] as? String, music)
        XCTAssertTrue(top.object["parent"] is NSNull, top.text)
        XCTAssertEqual(names(top.object, "folders"), ["Album 2", "Album 10", "inside link"], top.text)
        XCTAssertEqual(names(top.object, "files"), ["caf\u{FFFD}.wav", "top.wav"], top.text)
        XCTAssertFalse(top.text.contains("secret") || top.text.contains("\"root\"") || top.text.contains("notes"), top.text)

        // The non-UTF-8 name, through the control socket as the web face speaks it.
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in socket.utf8.enumerated() { raw[i] = b } }
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        XCTAssertEqual(connected, 0)
        func ask(_ line: String) -> String {
            let bytes = Array((line + "\n").utf8)
            XCTAssertEqual(Glibc.write(fd, bytes, bytes.count), bytes.count)
            var reply: [UInt8] = []
            var byte: UInt8 = 0
            while Glibc.read(fd, &byte, 1) == 1 {
                if byte == 10 {
                    let text = String(decoding: reply, as: UTF8.self)
                    if text.hasPrefix("ok") || text.hasPrefix("error") { return text }
                    reply = []
                } else { reply.append(byte) }
            }
            return String(decoding: reply, as: UTF8.self)
        }
        let listed = ask("ls --json " + music)
        XCTAssertTrue(listed.hasPrefix("ok {"), listed)
        let object = (try? JSONSerialization.jsonObject(with: Data(listed.dropFirst(3).utf8))) as? [String: Any] ?? [:]
        let cafe = try XCTUnwrap((object["files"] as? [[String: Any]])?.first { ($0["name"] as? String) == "caf\u{FFFD}.wav" }?["path"] as? String)
        // Its bytes do not survive the control language (a reply shows them as U+FFFD): `load` of that
        // path is refused with a clear error, while its folder plays it with the rest.
        XCTAssertEqual(ask("load " + cafe), "error: no such file or folder: \(music)/caf\u{FFFD}.wav")
        XCTAssertTrue(ask("load " + music).hasPrefix("ok "))
        XCTAssertTrue(ask("queue --json").contains("\"title\":\"caf\u{FFFD}\""), "its folder did not play the file that is not UTF-8")

        // A folder inside: its files in play order, with their tags and lengths; the parent is the music folder.
        let album = try list(music + "/Album 2")
        XCTAssertTrue(album.ok, album.text)
        XCTAssertEqual(album.object["parent"] as? String, music)
        XCTAssertEqual(names(album.object, "files"), ["a.wav", "b.wav"], album.text)
        let first = (album.object["files"] as? [[String: Any]])?.first
        XCTAssertEqual(first?["title"] as? String, "a")
        XCTAssertEqual(first?["seconds"] as? Double ?? 0, 1, accuracy: 0.01)

        // Outside, through `..` or a link, or not a folder: one refusal that tells nothing of what is there.
        for path in [outside, "/", music + "/..", music + "/root", music + "/out", music + "/root/etc", "/nonexistent"] {
            let r = try list(path)
            XCTAssertFalse(r.ok, path)
            XCTAssertEqual(r.text, "jukebox: error: not a folder in the music folders: \(path)", path)
        }
        XCTAssertEqual(try list("music").text, "jukebox: error: not an absolute path: music")
        XCTAssertEqual(try list(music + "/top.wav").text, "jukebox: error: not a folder: \(music)/top.wav")
    }
}

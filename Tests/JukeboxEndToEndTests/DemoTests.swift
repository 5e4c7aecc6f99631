// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// `jukebox demo` writes files: never through a link someone planted, never at a fixed name in /tmp.
final class DemoTests: DaemonTestCase {
    /// Runs the demo until its tunes are written and queued, then stops it; its stdout.
    func runDemo(_ args: [String], environment: [String: String?] = [:], whilePlaying: () throws -> Void = {}) throws -> String {
        let demo = try Jukebox.start(["demo", "--audio", "null", "--socket", socket] + args, environment: environment)
        // Generous: the demo synthesises and encodes its tunes first (Vorbis too), which takes
        // a second here and far longer where floating point is emulated (qemu-aarch64).
        XCTAssertTrue(waitFor(180) { (try? ctl("status"))?.stdout.hasPrefix("▶") == true }, "the demo never played")
        try whilePlaying()
        demo.process.terminate()
        let result = try XCTUnwrap(demo.wait(timeout: 30), "the demo did not stop on SIGTERM")
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func testADemoFolderWithAPlantedLinkKeepsTheLinksTargetIntact() throws {
        let tunes = dir + "/tunes", victim = dir + "/victim"
        try FileManager.default.createDirectory(atPath: tunes, withIntermediateDirectories: true)
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: tunes + "/01 Morning Bell.flac", withDestinationPath: victim)
        _ = try runDemo(["--dir", tunes]) {
            // Tagged as before, though not through TagLib any more.
            let queue = try ctl("queue").stdout
            XCTAssertTrue(queue.contains("1. Morning Bell – jukebox demo"), queue)
            XCTAssertTrue(queue.contains("3. Lullaby – jukebox demo"), queue)
        }
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        let type = try FileManager.default.attributesOfItem(atPath: tunes + "/01 Morning Bell.flac")[.type] as? FileAttributeType
        XCTAssertEqual(type, .typeRegular, "the link was replaced by the tune")
    }

    func testWithoutDirTheDemoMakesANewPrivateFolderAndRemovesIt() throws {
        // What another user could have planted at a predictable name is left alone.
        try FileManager.default.createDirectory(atPath: dir + "/jukebox-demo", withIntermediateDirectories: true)
        var seen: [FileAttributeKey: Any] = [:]
        let stdout = try runDemo([], environment: ["TMPDIR": dir]) {
            let made = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("jukebox-demo-") }
            XCTAssertEqual(made.count, 1, "\(made)")
            seen = try FileManager.default.attributesOfItem(atPath: dir + "/" + (made.first ?? ""))
        }
        let folder = try XCTUnwrap(stdout.split(separator: "\n").first { $0.hasPrefix("jukebox demo: 3 tunes in ") })
            .dropFirst("jukebox demo: 3 tunes in ".count)
        XCTAssertTrue(folder.hasPrefix(dir + "/jukebox-demo-") && folder.count == dir.count + "/jukebox-demo-XXXXXX".count, String(folder))
        XCTAssertEqual((seen[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        XCTAssertEqual((seen[.ownerAccountID] as? NSNumber)?.uint32Value, getuid())
        XCTAssertFalse(FileManager.default.fileExists(atPath: String(folder)), "the private folder was not removed at the end")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/jukebox-demo"), [])
    }
}

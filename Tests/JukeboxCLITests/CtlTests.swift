// SPDX-License-Identifier: MIT
import Foundation
import JukeboxTestSupport
import XCTest

/// `jukebox ctl` as a person at a terminal uses it.
final class CtlTests: DaemonTestCase {
    func testEventsPrintsReadableLinesAndStopsOnALineFromStdin() throws {
        let a = dir + "/a.wav", b = dir + "/b.wav"
        try TestAudio.write(path: a, kind: .wav16, frames: 44_100 * 30)
        try TestAudio.write(path: b, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([a, b])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let stdin = Pipe()
        let events = try Jukebox.start(["ctl", "--socket", socket, "events"], stdin: stdin.fileHandleForReading)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("streaming events") }, events.stdoutSoFar)
        XCTAssertEqual(try ctl("next").status, 0)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("track started") }, events.stdoutSoFar)
        XCTAssertEqual(try ctl("pause").status, 0)
        XCTAssertTrue(waitFor(5) { events.stdoutSoFar.contains("pause → paused") }, events.stdoutSoFar)

        stdin.fileHandleForWriting.write(Data("\n".utf8))
        let result = try XCTUnwrap(events.wait(timeout: 5), "ctl events did not stop on a line from stdin")
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "streaming events; send any line to stop")
        XCTAssertEqual(lines.last, "events ended")
        let stamp = "[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}"
        for line in lines.dropFirst().dropLast() {
            XCTAssertNotNil(line.range(of: "^event \(stamp) [a-z][a-z0-9 ():,+-]* → [a-z]+$", options: .regularExpression),
                            "not a readable event line: \(line)")
        }
        XCTAssertTrue(lines.contains { $0.hasSuffix(" next → playing") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.range(of: " track started \\(play [0-9]+\\) → playing$", options: .regularExpression) != nil },
                      result.stdout)
    }

    func testCtlGetsInWhenSilentConnectionsHoldEverySlot() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([song])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        let silent = (0..<40).compactMap { _ in Self.silentConnection(socket) }
        defer { silent.forEach { close($0) } }
        // They take all 32 slots (the rest are refused) and never say a word.
        let started = Date()
        let r = try Jukebox.run(["ctl", "--socket", socket, "status"], timeout: 30)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("▶ song"), r.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "ctl waited longer than the idle limit and a loop turn")
    }
}

/// The socket's fallback folder in a shared /tmp (`$TMPDIR/jukebox-UID` here) is used only when it
/// is the user's own.
final class SocketFolderBinaryTests: DaemonTestCase {
    func testCtlAndYieldRefuseAFallbackFolderAnotherUserMadeAndThePlayerThereIsNotAsked() throws {
        // As root the fallback is never used (root's socket is /run/jukebox/control): run the
        // client as nobody, in a folder root made. As anyone else: in a folder of one's own, mode 0755.
        let asUser: UInt32? = getuid() == 0 ? 65534 : nil
        let planted = dir + "/jukebox-\(asUser ?? getuid())"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        // A player listens there, open to everyone: what a planted socket looks like.
        socket = planted + "/control"
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 30)
        let daemon = try startDaemon([song])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }
        chmod(socket, 0o666)
        let environment: [String: String?] = ["TMPDIR": dir, "XDG_RUNTIME_DIR": nil, "RUNTIME_DIRECTORY": nil]
        // Named, as the default would be: a jukebox service on this machine (/run/jukebox/control)
        // would otherwise be the default for everyone.
        let status = try Jukebox.run(["ctl", "--socket", socket, "status"], environment: environment, asUser: asUser)
        XCTAssertEqual(status.status, 1)
        XCTAssertEqual(status.stdout, "", "the planted player answered")
        XCTAssertTrue(status.stderr.hasPrefix("jukebox: refusing the socket folder \(planted): "), status.stderr)
        let yield = try Jukebox.run(["yield", "--socket", socket, "--", "true"], environment: environment, asUser: asUser)
        XCTAssertEqual(yield.status, 0, "the command runs anyway")
        XCTAssertTrue(yield.stderr.contains("refusing the socket folder \(planted): "), yield.stderr)
        XCTAssertTrue(try ctl("status").stdout.hasPrefix("▶ song"), "the planted player was never interrupted")
    }
}

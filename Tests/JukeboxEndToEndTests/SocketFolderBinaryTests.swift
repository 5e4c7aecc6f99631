// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

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

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
import XCTest

/// The control socket's fallback folder (`$TMPDIR/jukebox-UID`) is used only when it is private.
final class SocketFolderTests: XCTestCase {
    var dir: TempDir!
    var savedTMPDIR: String?
    var folder: String { SocketFolder.fallback() }
    var path: String { folder + "/control" }

    override func setUp() {
        dir = TempDir()
        savedTMPDIR = ProcessInfo.processInfo.environment["TMPDIR"]
        setenv("TMPDIR", dir.path, 1)
    }

    override func tearDown() {
        if let savedTMPDIR { setenv("TMPDIR", savedTMPDIR, 1) } else { unsetenv("TMPDIR") }
        dir = nil
    }

    func assertRefused(_ why: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ControlSocket(path: path), file: file, line: line) {
            XCTAssertTrue("\($0)".hasPrefix("refusing the socket folder \(folder): \(why)"), "\($0)", file: file, line: line)
        }
        XCTAssertThrowsError(try ControlClient(path: path), file: file, line: line) {
            XCTAssertTrue("\($0)".hasPrefix("refusing the socket folder \(folder): \(why)"), "\($0)", file: file, line: line)
        }
    }

    func testAMissingFallbackFolderIsMadePrivateAndUsed() throws {
        XCTAssertEqual(folder, dir.path + "/jukebox-\(getuid())")
        XCTAssertEqual(ControlSocket.defaultPath().hasSuffix("/control"), true)
        let socket = try ControlSocket(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        XCTAssertNil(SocketFolder.problem(folder))
        XCTAssertNoThrow(try ControlClient(path: path))
        _ = socket
    }

    func testAFallbackFolderOthersCanEnterIsRefused() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        assertRefused("mode 755, not 700")
    }

    func testAFallbackFolderThatIsALinkIsRefused() throws {
        try FileManager.default.createDirectory(atPath: dir.file("elsewhere"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: dir.file("elsewhere"))
        assertRefused("a symbolic link")
    }

    func testAFallbackFolderOfAnotherUserIsRefused() throws {
        try XCTSkipUnless(getuid() == 0, "giving a folder to another user needs root")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        XCTAssertEqual(chown(folder, 65534, 65534), 0)
        assertRefused("owned by uid 65534, not 0")
    }

    func testASocketOutsideTheFallbackFolderIsAsGiven() throws {
        // A named socket (--socket, the config's "socket") is the user's choice, wherever it is.
        try FileManager.default.createDirectory(atPath: dir.file("shared"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        let socket = try ControlSocket(path: dir.file("shared/control"))
        XCTAssertNoThrow(try ControlClient(path: dir.file("shared/control")))
        _ = socket
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxWeb
import XCTest

/// The upload's pure decisions (`UploadRules`), by tables.
final class UploadRulesTests: XCTestCase {
    func testNamesAnUploadMayTake() {
        let ok: [(String, [String])] = [
            ("01 Song.flac", ["01 Song.flac"]),
            ("Album/CD1/01.mp3", ["Album", "CD1", "01.mp3"]),
            ("Ünïcode ♪.OGG", ["Ünïcode ♪.OGG"]),
            ("a..b.wav", ["a..b.wav"]),
            ("Book/Part 1.m4b", ["Book", "Part 1.m4b"]),
            ("<img src=x onerror=alert(1)>.flac", ["<img src=x onerror=alert(1)>.flac"]),
        ]
        for (name, parts) in ok {
            XCTAssertEqual(try UploadRules.nameParts(Array(name.utf8)).get(), parts, name)
        }
        // The extensions are the player's own list (`Library.isAudio`), named in the refusal.
        let listed = "not an audio file name the player lists (" + Library.audioExtensions.sorted().joined(separator: ", ") + ")"
        XCTAssertTrue(listed.contains("flac, m4a, m4b, mp3"), listed)
        let refused: [([UInt8], Int, String)] = [
            ([], 400, "the file has no name"),
            (Array("../x.flac".utf8), 400, "the name may not contain . or .. folders"),
            (Array("a/../../x.flac".utf8), 400, "the name may not contain . or .. folders"),
            (Array("./x.flac".utf8), 400, "the name may not contain . or .. folders"),
            (Array("/etc/x.flac".utf8), 400, "the name has an empty folder (a leading, trailing or double slash)"),
            (Array("a//x.flac".utf8), 400, "the name has an empty folder (a leading, trailing or double slash)"),
            (Array("a/".utf8), 400, "the name has an empty folder (a leading, trailing or double slash)"),
            (Array(".hidden.flac".utf8), 400, "hidden names (a leading dot) are not taken"),
            (Array(".upload-00.part".utf8), 400, "hidden names (a leading dot) are not taken"),
            (Array("a/.git/x.flac".utf8), 400, "hidden names (a leading dot) are not taken"),
            (Array("x\n.flac".utf8), 400, "the name has a control character or a backslash"),
            (Array("x\u{7F}.flac".utf8), 400, "the name has a control character or a backslash"),
            (Array("x\u{85}.flac".utf8), 400, "the name has a control character or a backslash"),
            (Array("x\u{1B}[31m.flac".utf8), 400, "the name has a control character or a backslash"),
            (Array("..\\x.flac".utf8), 400, "the name has a control character or a backslash"),
            ([0x78, 0xFF, 0x2E, 0x66, 0x6C, 0x61, 0x63], 400, "the name is not valid UTF-8"),
            ([0x78, 0xC0, 0xAF, 0x2E, 0x6D, 0x70, 0x33], 400, "the name is not valid UTF-8"),  // an overlong "/"
            (Array((String(repeating: "a", count: 256) + ".mp3").utf8), 400, "a part of the name is longer than 255 bytes"),
            (Array((String(repeating: "a/", count: 9) + "x.mp3").utf8), 400, "more than 8 folders deep"),
            (Array((String(repeating: "abcdefgh/", count: 120) + "x.mp3").utf8), 400, "the name is longer than 1024 bytes"),
            (Array("notes.txt".utf8), 415, listed),
            (Array("song".utf8), 415, listed),
            (Array("list.m3u".utf8), 415, listed),
        ]
        for (bytes, status, error) in refused {
            XCTAssertEqual(UploadRules.nameParts(bytes), .failure(UploadRules.Refusal(status, error)), "\(bytes)")
        }
    }

    func testTheLengthIsCheckedBeforeTheBody() {
        var limits = UploadRules.Limits()
        limits.maxFileBytes = 1000
        let table: [(String?, Result<Int64, UploadRules.Refusal>)] = [
            ("1", .success(1)),
            ("1000", .success(1000)),
            ("1001", .failure(.init(413, "the file is larger than the limit of 0.0 MB per file"))),
            (nil, .failure(.init(411, "an upload needs a Content-Length"))),
            ("", .failure(.init(411, "an upload needs a Content-Length"))),
            ("0", .failure(.init(400, "the file is empty"))),
            ("-5", .failure(.init(400, "not a usable Content-Length"))),
            ("+5", .failure(.init(400, "not a usable Content-Length"))),
            (" 5", .failure(.init(400, "not a usable Content-Length"))),
            ("5, 5", .failure(.init(400, "not a usable Content-Length"))),
            ("99999999999999999999", .failure(.init(400, "not a usable Content-Length"))),
            ("9223372036854775808", .failure(.init(400, "not a usable Content-Length"))),
        ]
        for (header, expected) in table { XCTAssertEqual(UploadRules.length(header, limits: limits), expected, header ?? "nil") }
        XCTAssertEqual(UploadRules.length("2000000000", limits: UploadRules.Limits()),
                       .failure(.init(413, "the file is larger than the limit of 1073.7 MB per file")))
    }

    func testAtMostSoManyAtOnceAndSoMuchInAll() {
        var limits = UploadRules.Limits()
        limits.maxAtOnce = 2
        limits.maxTotalBytes = 100
        let table: [(Int64, Int, Int64, Int?)] = [
            (10, 0, 0, nil), (10, 1, 90, nil), (10, 2, 0, 429), (11, 1, 90, 413), (100, 0, 0, nil), (101, 0, 0, 413),
        ]
        for (length, running, bytes, status) in table {
            XCTAssertEqual(UploadRules.admit(length: length, running: running, runningBytes: bytes, limits: limits)?.status, status,
                           "\(length) \(running) \(bytes)")
        }
    }

    func testTheDiskKeepsItsReserve() {
        var limits = UploadRules.Limits()
        limits.reserveBytes = 1000
        XCTAssertNil(UploadRules.space(free: 3000, length: 1000, reservedBytes: 1000, limits: limits))
        XCTAssertEqual(UploadRules.space(free: 3000, length: 1001, reservedBytes: 1000, limits: limits)?.status, 507)
        XCTAssertEqual(UploadRules.space(free: 500, length: 1, reservedBytes: 0, limits: limits),
                       UploadRules.Refusal(507, "not enough free space: 0.0 MB usable, the file is 0.0 MB"))
        XCTAssertEqual(UploadRules.space(free: 100_000_000, length: 200_000_000, reservedBytes: 0, limits: UploadRules.Limits())?.error,
                       "not enough free space: 32.9 MB usable, the file is 200.0 MB")
    }

    func testOnlyTheUploadsOwnTemporaryNamesAreCleanedUp() {
        let hex = String(repeating: "0a", count: 16)
        XCTAssertEqual(UploadRules.temporaryName(hex), ".upload-\(hex).part")
        XCTAssertTrue(UploadRules.isTemporaryName(UploadRules.temporaryName(hex)))
        for name in ["song.flac", ".upload-.part", ".upload-\(hex).flac", ".upload-\(hex.uppercased()).part", ".upload-\(hex)0.part",
                     "x.upload-\(hex).part", ".upload-../../etc.part"] {
            XCTAssertFalse(UploadRules.isTemporaryName(name), name)
        }
    }

    func testTheRouteAndTheGuardOfAnUpload() {
        XCTAssertEqual(WebRoute.route(method: "POST", path: "/api/upload"), .upload)
        XCTAssertEqual(WebRoute.route(method: "GET", path: "/api/upload"), .methodNotAllowed)
        XCTAssertEqual(WebRoute.route(method: "PUT", path: "/api/upload"), .methodNotAllowed)
        let octets = "application/octet-stream"
        XCTAssertNil(RequestGuard.check(method: "POST", localPeer: true, host: "127.0.0.1:80", origin: "http://127.0.0.1:80",
                                        contentType: octets, bodyTooLarge: false, bodyType: octets))
        XCTAssertEqual(RequestGuard.check(method: "POST", localPeer: true, host: "127.0.0.1", origin: nil, contentType: "application/json",
                                          bodyTooLarge: false, bodyType: octets), RequestGuard.Refusal(415, "a POST must be application/octet-stream"))
        XCTAssertEqual(RequestGuard.check(method: "POST", localPeer: true, host: "127.0.0.1", origin: nil, contentType: "multipart/form-data; boundary=x",
                                          bodyTooLarge: false, bodyType: octets)?.status, 415)
        XCTAssertEqual(RequestGuard.check(method: "POST", localPeer: true, host: "127.0.0.1", origin: "http://evil.example", contentType: octets,
                                          bodyTooLarge: false, bodyType: octets)?.status, 403)
        // Every other POST is JSON still.
        XCTAssertEqual(RequestGuard.check(method: "POST", localPeer: true, host: "127.0.0.1", origin: nil, contentType: octets,
                                          bodyTooLarge: false)?.status, 415)
    }
}

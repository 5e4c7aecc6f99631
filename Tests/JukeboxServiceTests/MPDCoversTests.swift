// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
import XCTest

/// `albumart`'s file side on a real folder: chunks, the cover names' order, and the bounds (no
/// climbing out, no link out of the music folder, no huge file, no offset past the end).
final class MPDCoversTests: XCTestCase {
    let tmp = TempDir()
    var root: String { tmp.file("music") }

    override func setUpWithError() throws {
        let fm = FileManager.default
        for d in ["music/A/One", "music/B", "music/C", "outside"] { try fm.createDirectory(atPath: tmp.file(d), withIntermediateDirectories: true) }
        tmp.write("music/A/One/01.flac", "x")
        tmp.write("music/A/One/folder.jpg", "folder")
        tmp.write("music/A/One/cover.png", "0123456789")
        tmp.write("outside/secret.jpg", "secret")
        tmp.write("music/B/01.flac", "x")
        try fm.createSymbolicLink(atPath: tmp.file("music/B/cover.jpg"), withDestinationPath: tmp.file("outside/secret.jpg"))
        tmp.write("music/C/01.flac", "x")
        // Sparse: 8 MiB + 1 byte without writing them.
        let fd = open(tmp.file("music/C/cover.jpg"), O_CREAT | O_WRONLY, 0o644)
        ftruncate(fd, off_t(MPDCovers.maxSize + 1))
        close(fd)
    }

    func read(_ uri: String, _ offset: Int, _ limit: Int = 4) -> Result<FileChunk, MPDError> {
        MPDCovers.read(uri: uri, roots: [tmp.file("nowhere"), root], offset: offset, limit: limit)
    }

    func testTheCoverComesInChunksInTheOrderOfTheNames() {
        XCTAssertEqual(read("A/One/01.flac", 0), .success(FileChunk(size: 10, bytes: Array("0123".utf8))), "cover.png comes before folder.jpg")
        XCTAssertEqual(read("A/One/01.flac", 8), .success(FileChunk(size: 10, bytes: Array("89".utf8))))
        XCTAssertEqual(read("A/One", 10), .success(FileChunk(size: 10, bytes: [])), "a folder's URI, at the end")
        XCTAssertEqual(read("A/One/01.flac", 11), .failure(MPDError(.arg, "Bad file offset")))
    }

    func testNothingOutsideTheMusicFolderIsRead() {
        XCTAssertEqual(read("B/01.flac", 0), .failure(MPDError(.noExist, "No file exists")), "a link out of the folder")
        XCTAssertEqual(read("A/../../outside/x.flac", 0), .failure(MPDError(.arg, "Malformed URI")))
        XCTAssertEqual(read(tmp.file("outside/x.flac"), 0), .failure(MPDError(.arg, "Malformed URI")))
        XCTAssertEqual(read("Nope/01.flac", 0), .failure(MPDError(.noExist, "No file exists")))
        XCTAssertEqual(read("C/01.flac", 0), .failure(MPDError(.system, "the cover is larger than 8 MiB")))
    }

    func testAnEmbeddedPictureIsSentInChunksWithItsType() {
        let bytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0) }
        let picture: (type: String, bytes: [UInt8])? = ("image/png", bytes)
        XCTAssertEqual(MPDCovers.pictureChunk(picture, offset: 0, limit: 8192),
                       .success(FileWorkOutput(lines: ["size: 20000", "type: image/png"], bytes: Array(bytes[0..<8192]))))
        XCTAssertEqual(MPDCovers.pictureChunk(picture, offset: 16384, limit: 8192),
                       .success(FileWorkOutput(lines: ["size: 20000", "type: image/png"], bytes: Array(bytes[16384...]))))
        XCTAssertEqual(MPDCovers.pictureChunk(picture, offset: 20000, limit: 8192),
                       .success(FileWorkOutput(lines: ["size: 20000", "type: image/png"], bytes: [])))
        XCTAssertEqual(MPDCovers.pictureChunk(picture, offset: 20001, limit: 8192), .failure(MPDError(.arg, "Bad file offset")))
        // No picture: an empty reply. A type from the tag cannot break the reply's lines.
        XCTAssertEqual(MPDCovers.pictureChunk(nil, offset: 0, limit: 8192), .success(FileWorkOutput()))
        XCTAssertEqual(MPDCovers.pictureChunk(("image/png\nOK", [1]), offset: 0, limit: 8192),
                       .success(FileWorkOutput(lines: ["size: 1", "type: image/png\u{FFFD}OK"], bytes: [1])))
    }
}

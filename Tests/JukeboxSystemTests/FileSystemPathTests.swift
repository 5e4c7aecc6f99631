// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxSystem
import XCTest

/// File names as bytes: the lossless escape (`FileSystemPath`), the C path it gives back, the
/// listing and opening of names that are not UTF-8, and the refusal to open what is not a
/// regular file (a FIFO blocked TagLib's read for good).
final class FileSystemPathTests: XCTestCase {
    /// Bytes → text → bytes, by table: what each case becomes and that it comes back exactly.
    func testTheEscapeByTable() {
        let cases: [([UInt8], String)] = [
            (Array("plain.wav".utf8), "plain.wav"),
            (Array("été ♫ 日本.flac".utf8), "été ♫ 日本.flac"),
            ([0xFF, 0xFE] + Array(".wav".utf8), "\u{EFFF}\u{EFFE}.wav"),             // not UTF-8 at all
            ([0xE9, 0x74, 0xE9] + Array(".wav".utf8), "\u{EFE9}t\u{EFE9}.wav"),      // Latin-1 "été"
            ([0xC3], "\u{EFC3}"),                                                   // a cut sequence
            ([0xC3, 0x28], "\u{EFC3}("),                                            // a bad continuation
            ([0xC0, 0xAF], "\u{EFC0}\u{EFAF}"),                                     // overlong "/"
            ([0xED, 0xA0, 0x80], "\u{EFED}\u{EFA0}\u{EF80}"),                       // a surrogate
            ([0xF4, 0x90, 0x80, 0x80], "\u{EFF4}\u{EF90}\u{EF80}\u{EF80}"),         // past U+10FFFF
            ([0xEE, 0xBE, 0x80], "\u{EFEE}\u{EFBE}\u{EF80}"),                       // U+EF80 itself is escaped
            ([0xEE, 0xBF, 0xBF], "\u{EFEE}\u{EFBF}\u{EFBF}"),                       // U+EFFF too
            ([0xEE, 0xBD, 0xBF], "\u{EF7F}"),                                       // U+EF7F is not
            ([0xF0, 0x9F, 0x8E, 0xB5], "🎵"),
        ]
        for (bytes, text) in cases {
            XCTAssertEqual(FileSystemPath.string(bytes).unicodeScalars.map(\.value), text.unicodeScalars.map(\.value), "\(bytes)")
            XCTAssertEqual(FileSystemPath.bytes(FileSystemPath.string(bytes)), bytes, "\(bytes)")
            XCTAssertEqual(cPath(FileSystemPath.string(bytes)), bytes.map { CChar(bitPattern: $0) } + [0])
        }
        XCTAssertFalse(FileSystemPath.hasEscapes("été"))
        XCTAssertTrue(FileSystemPath.hasEscapes(FileSystemPath.string([0xE9])))
    }

    /// Random byte strings (mostly high bytes, some UTF-8, some escape-range sequences) come back
    /// byte for byte, and valid UTF-8 without the escape range is its own text. The seed is
    /// printed; `JUKEBOX_PATH_SEED` replays a run.
    func testRandomBytesComeBackExactly() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_PATH_SEED"].flatMap { UInt64($0) }
            ?? UInt64(UInt32.random(in: 0...UInt32.max))
        print("file system paths: seed \(seed) (JUKEBOX_PATH_SEED=\(seed) replays it)")
        var rng = SplitMix(seed: seed)
        let pieces: [[UInt8]] = [[0xEE, 0xBE], [0xEE, 0xBF], [0xC3, 0xA9], [0xE2, 0x99, 0xAB], [0xF0, 0x9F, 0x8E], [0x2F], [0x2E]]
        for round in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                if Bool.random(using: &rng) { bytes += pieces.randomElement(using: &rng)! }
                else { bytes.append(UInt8.random(in: 1...255, using: &rng)) }
            }
            let text = FileSystemPath.string(bytes)
            guard FileSystemPath.bytes(text) == bytes else {
                return XCTFail("seed \(seed), round \(round): \(bytes) came back as \(FileSystemPath.bytes(text))")
            }
            if let valid = String(validatingUTF8: bytes.map { CChar(bitPattern: $0) } + [0]),
               !valid.unicodeScalars.contains(where: { FileSystemPath.escapes.contains($0.value) }) {
                XCTAssertEqual(text, valid, "seed \(seed), round \(round)")
            }
        }
    }

    /// A name that is not UTF-8 is listed as its escape, and the escape opens that very file.
    func testANameThatIsNotUTF8IsListedAndOpened() throws {
        let dir = try scratch()
        defer { remove(dir) }
        let name: [UInt8] = [0xE9, 0x74, 0xE9, 0x2E, 0x77, 0x61, 0x76]
        let raw = Array(dir.utf8).map { CChar(bitPattern: $0) } + [0x2F] + name.map { CChar(bitPattern: $0) } + [0]
        let fd = open(raw, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        _ = write(fd, "abc", 3)
        close(fd)
        let listed = try directoryEntries(dir)
        XCTAssertEqual(listed, [FileSystemPath.string(name)])
        XCTAssertEqual(try readFile(dir + "/" + listed[0]), Array("abc".utf8))
        XCTAssertTrue(fileExists(dir + "/" + listed[0]))
        XCTAssertEqual(fileKind(dir + "/" + listed[0]), .regular)
    }

    /// A FIFO, a directory and a missing file are refused at once, with a clear reason; the FIFO's
    /// open does not wait for a writer.
    func testOnlyARegularFileIsOpened() throws {
        let dir = try scratch()
        defer { remove(dir) }
        XCTAssertEqual(mkfifo(dir + "/x.flac", 0o644), 0)
        let started = monotonicNow()
        XCTAssertThrowsError(try openRegularFile(dir + "/x.flac")) { error in
            XCTAssertEqual("\(error)", "open \(dir)/x.flac: not a regular file")
        }
        XCTAssertThrowsError(try readFile(dir + "/x.flac"))
        XCTAssertLessThan(monotonicNow() - started, 1)
        XCTAssertEqual(fileKind(dir + "/x.flac"), .other)
        XCTAssertThrowsError(try openRegularFile(dir)) { XCTAssertEqual(($0 as? SystemError)?.errno, EISDIR) }
        XCTAssertThrowsError(try openRegularFile(dir + "/none")) { XCTAssertEqual(($0 as? SystemError)?.errno, ENOENT) }
        let fd = try openRegularFile("/proc/self/status")
        XCTAssertEqual(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "O_NONBLOCK is cleared after the check")
        close(fd)
    }

    /// A walk seeds its visited set with the folders above its start.
    func testAncestorsAreKnownToAWalk() throws {
        let dir = try scratch()
        defer { remove(dir) }
        XCTAssertEqual(mkdir(dir + "/a", 0o755), 0)
        XCTAssertEqual(symlink(dir, dir + "/a/up"), 0)
        let above = ancestorIdentities(dir + "/a")
        XCTAssertTrue(above.contains(fileIdentity(dir)!))
        XCTAssertTrue(above.contains(fileIdentity(dir + "/a/up")!), "the link back is one of them")
        XCTAssertFalse(above.contains(fileIdentity(dir + "/a")!))
    }

    private func scratch() throws -> String {
        var template = Array("/tmp/jukebox-paths-XXXXXX".utf8).map { CChar(bitPattern: $0) } + [0]
        guard mkdtemp(&template) != nil else { throw SystemError(call: "mkdtemp", subject: "", errno: errno) }
        return String(cString: template)
    }

    private func remove(_ dir: String) {
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// A small seeded generator (SplitMix64), so a failing random run can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

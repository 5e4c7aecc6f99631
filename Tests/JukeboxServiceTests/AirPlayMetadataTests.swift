// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxService
import XCTest

/// shairport-sync's metadata pipe: the item stream (`AirPlayMetadataItems`, pure, table-tested)
/// and the FIFO jukebox makes and reads (`AirPlayMetadata`).
final class AirPlayMetadataTests: XCTestCase {
    typealias Items = AirPlayMetadataItems

    /// An item as shairport-sync 3.3.8 writes it (`metadata_process`): hex type and code, the
    /// length, and the data in base64 after a line break.
    static func item(_ type: String, _ code: String, _ data: [UInt8]) -> String {
        // In typed parts: Swift 6.0.3 gives up on one long sum.
        let typeHex: String = String(Items.fourCC(type), radix: 16)
        let codeHex: String = String(Items.fourCC(code), radix: 16)
        let head: String = "<item><type>\(typeHex)</type><code>\(codeHex)</code><length>\(data.count)</length>"
        let body = data.isEmpty ? "" : "\n<data encoding=\"base64\">\n" + Data(data).base64EncodedString() + "</data>"
        return head + body + "</item>\n"
    }

    static func snam(_ name: String) -> String { item("ssnc", "snam", Array(name.utf8)) }

    private let ssnc = Items.ssnc, snam = Items.snam

    func testTheItemsShairportSyncWritesAreRead() {
        var items = Items()
        let stream = Self.item("ssnc", "pbeg", []) + Self.snam("Anna's iPhone") + Self.item("core", "asal", Array("Album".utf8))
        XCTAssertEqual(items.feed(Array(stream.utf8)), [
            .item(.init(type: ssnc, code: Items.fourCC("pbeg"), data: [])),
            .item(.init(type: ssnc, code: snam, data: Array("Anna's iPhone".utf8))),
            .item(.init(type: Items.fourCC("core"), code: Items.fourCC("asal"), data: Array("Album".utf8))),
        ])
        XCTAssertEqual(Items.fourCC("ssnc"), 0x7373_6e63)
    }

    /// Byte by byte, or in pieces cut anywhere, the same items come out.
    func testAnItemSplitAnywhereIsReadWhole() {
        let stream = Array((Self.snam("Anna") + Self.snam("Dad's Mac with a long name: " + String(repeating: "x", count: 300))).utf8)
        var whole = Items()
        let expected = whole.feed(stream)
        XCTAssertEqual(expected.count, 2)
        var single = Items()
        XCTAssertEqual(stream.flatMap { single.feed([$0]) }, expected)
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_AIRPLAY_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("AirPlayMetadataTests seed \(seed) (JUKEBOX_AIRPLAY_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        var pieces = Items(), out: [Items.Outcome] = [], at = 0
        while at < stream.count {
            let n = Int(rng.next() % 40) + 1
            out += pieces.feed(stream[at..<min(stream.count, at + n)])
            at += n
        }
        XCTAssertEqual(out, expected, "seed \(seed)")
    }

    /// What breaks a rule is rejected with a reason, and the next item is read all the same.
    func testBadItemsAreRejectedAndTheReadingGoesOn() {
        let good = Self.snam("Anna")
        let table: [(String, String)] = [
            ("<item><type>zz</type><code>736e616d</code><length>0</length></item>", "no hex type"),
            ("<item><type>123456789</type><code>736e616d</code><length>0</length></item>", "no hex type"),
            ("<item><type>73736e63</type><code></code><length>0</length></item>", "no hex code"),
            ("<item><type>73736e63</type><code>736e616d</code><length>-1</length></item>", "no length"),
            ("<item><type>73736e63</type><code>736e616d</code><length>99999</length></item>", "data of 99999 bytes, more than 3072"),
            ("<item><type>73736e63</type><code>736e616d</code><length>4</length>\n<data encoding=\"base64\">\nQW5u!!==</data></item>", "bad base64"),
            ("<item><type>73736e63</type><code>736e616d</code><length>4</length>\n<data encoding=\"base64\">\nQQ==QQ==</data></item>", "bad base64"),
            ("<item><type>73736e63</type><code>736e616d</code><length>4</length>\n<data encoding=\"base64\">\nQW5u</data></item>", "3 bytes of data, not 4"),
            ("<item><type>73736e63</type><code>736e616d</code><length>4</length>\n<data>QW5uYQ==</data></item>", "no base64 data"),
            ("<item><type>73736e63</type><code>736e616d</code><length>0</length>junk</item>", "text after an empty item"),
            // A write cut half-way: the next `<item>` starts over.
            ("<item><type>73736e63</type><code>736e", "an item cut short"),
        ]
        for (bad, why) in table {
            var items = Items()
            let out = items.feed(Array(("noise" + bad + "\n" + good).utf8))
            XCTAssertEqual(out, [.rejected(why), .item(.init(type: ssnc, code: snam, data: Array("Anna".utf8)))], bad)
        }
    }

    /// A writer that never closes an item costs at most `maxItemBytes` of memory.
    func testAnEndlessItemIsBoundedAndDropped() {
        var items = Items()
        var out = items.feed(Array("<item><type>73736e63</type><code>736e616d</code><length>9</length>\n<data encoding=\"base64\">\n".utf8))
        for _ in 0..<100 { out += items.feed(Array(repeating: UInt8(ascii: "A"), count: 1000)) }
        XCTAssertEqual(out, [.rejected("an item longer than \(Items.maxItemBytes) bytes")])
        // Noise without `<item>` is dropped as it comes.
        for _ in 0..<100 { out += items.feed(Array(repeating: UInt8(ascii: "<"), count: 1000)) }
        XCTAssertEqual(items.feed(Array(Self.snam("Anna").utf8)), [.item(.init(type: ssnc, code: snam, data: Array("Anna".utf8)))])
    }

    // MARK: - The FIFO

    func testTheFIFOIsMadeReadAndItsNameReported() throws {
        let dir = TempDir()
        let path = dir.file("airplay-metadata")
        let log = Log(level: .error)
        let source = AirPlayMetadata(path: path, log: log)
        XCTAssertTrue(source.isReading, "\(log.recent)")
        var st = stat()
        XCTAssertEqual(lstat(path, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFIFO)
        XCTAssertEqual(st.st_mode & 0o777, 0o620, "shairport-sync (group jukebox) may write, nobody else")
        let fd = try XCTUnwrap(source.fds.first)
        // Nothing there: nothing read, and the read does not wait.
        XCTAssertEqual(source.read(fd: fd), [])
        // A writer comes and goes as shairport-sync's metadata thread does: no end of file follows.
        let writer = open(path, O_WRONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(writer, 0)
        let text = Self.item("ssnc", "pbeg", []) + Self.snam("Anna\u{1B}[2J's iPhone")
        _ = Array(text.utf8).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        close(writer)
        XCTAssertEqual(source.read(fd: fd), [.sourceSender(name: "airplay", sender: "Anna\u{1B}[2J's iPhone")])
        var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(Glibc.poll(&poll, 1, 0), 0, "the pipe polls ready with no writer: the loop would spin")
    }

    func testSomethingInItsPlaceThatIsNotOursIsRefusedAndLeftAlone() throws {
        let dir = TempDir()
        let log = Log(level: .error)
        // A link (to a FIFO that would do): never followed.
        let target = dir.file("target")
        XCTAssertEqual(mkfifo(target, 0o666), 0)
        let link = dir.file("link")
        XCTAssertEqual(symlink(target, link), 0)
        XCTAssertFalse(AirPlayMetadata(path: link, log: log).isReading)
        XCTAssertTrue(log.recent.last?.contains("a symbolic link") ?? false, "\(log.recent)")
        var st = stat()
        XCTAssertEqual(lstat(link, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFLNK, "the link was removed")
        // A file: not opened, not changed.
        let file = dir.write("file", "keep me")
        XCTAssertFalse(AirPlayMetadata(path: file, log: log).isReading)
        XCTAssertTrue(log.recent.last?.contains("not a FIFO") ?? false, "\(log.recent)")
        XCTAssertEqual(dir.read("file"), "keep me")
        // Another user's FIFO (shairport-sync's, made 0666 because it started first).
        if geteuid() == 0 {
            let theirs = dir.file("theirs")
            XCTAssertEqual(mkfifo(theirs, 0o666), 0)
            XCTAssertEqual(chown(theirs, 65534, 65534), 0)
            XCTAssertFalse(AirPlayMetadata(path: theirs, log: log).isReading)
            XCTAssertTrue(log.recent.last?.contains("owned by uid 65534") ?? false, "\(log.recent)")
        }
    }
}

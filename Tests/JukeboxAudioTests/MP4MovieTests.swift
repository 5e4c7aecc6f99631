// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// The MP4 reader on files FFmpeg wrote (`Tests/Fixtures/*.m4a`, `chapters.m4b`: see the README
/// there) and on boxes built here for what FFmpeg does not write (Nero chapters, `stz2`, `co64`,
/// several chunk runs, iTunes' gapless note), and on damaged files: every cut and random bytes
/// must give an `MP4Error` or a movie, never a trap.
final class MP4MovieTests: XCTestCase {
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/" + name).path
    }

    func testAACFileFromFFmpeg() throws {
        let file = try MP4File(path: Self.fixture("two-tone.m4a"))
        let movie = try MP4Movie.read(file)
        let track = movie.track
        XCTAssertEqual(track.codec, .aac(config: [0x12, 0x10, 0x56, 0xe5, 0x00]))  // AAC-LC 44.1 kHz stereo
        XCTAssertEqual([track.channels, track.sampleRate, Int(track.timescale)], [2, 44100, 44100])
        XCTAssertEqual(track.table.sampleCount, 88)
        XCTAssertEqual(track.table.duration, 87 * 1024 + 136)
        // FFmpeg's edit list: 1024 frames of encoder delay, then exactly the 2 s it was given.
        XCTAssertEqual(track.edit, MP4Edit(mediaStart: 1024, duration: 88200))
        XCTAssertEqual(track.audioSpan(outputRate: 44100).skip, 1024)
        XCTAssertEqual(track.audioSpan(outputRate: 44100).frames, 88200)
        XCTAssertEqual(movie.chapters, [])
        // The samples fill the `mdat` exactly, in order.
        var reader = try MP4SampleReader(track.table, source: file)
        var end: UInt64 = 44
        while let sample = try reader.next() {
            XCTAssertEqual(sample.offset, end)
            end += UInt64(sample.size)
        }
        XCTAssertEqual(end, 44 + 16130)
        try reader.seek(toSample: 87)
        XCTAssertEqual(try reader.next()?.offset, end - UInt64(try XCTUnwrap(lastSize(track, file))))
        XCTAssertNil(try reader.next())
    }

    private func lastSize(_ track: MP4AudioTrack, _ file: MP4ByteSource) throws -> Int? {
        var reader = try MP4SampleReader(track.table, source: file)
        var last: Int?
        while let sample = try reader.next() { last = sample.size }
        return last
    }

    func testALACFileFromFFmpeg() throws {
        let movie = try MP4Movie.read(try MP4File(path: Self.fixture("two-tone-alac.m4a")))
        guard case .alac(let cookie) = movie.track.codec else { return XCTFail("\(movie.track.codec)") }
        XCTAssertEqual(cookie.count, 24)
        XCTAssertEqual(Array(cookie[0..<4]), [0, 0, 0x10, 0])  // 4096 frames a packet
        XCTAssertEqual(cookie[5], 16)  // bits
        XCTAssertEqual(cookie[9], 2)  // channels
        XCTAssertEqual([movie.track.channels, movie.track.sampleRate], [2, 44100])
        XCTAssertEqual(movie.track.audioSpan(outputRate: 44100).skip, 0)
        XCTAssertEqual(movie.track.table.duration, 22050)
    }

    func testQuickTimeChapterTrackFromFFmpeg() throws {
        let movie = try MP4Movie.read(try MP4File(path: Self.fixture("chapters.m4b")))
        XCTAssertEqual(movie.chapters, [MP4Chapter(start: 0, title: "Opening"), MP4Chapter(start: 2, title: "The middle"),
                                        MP4Chapter(start: 4, title: "<img src=x onerror=alert(1)>")])
        XCTAssertEqual([movie.track.channels, movie.track.sampleRate], [1, 22050])
    }

    // MARK: boxes built here

    /// A box of `type` holding `content`.
    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be32(UInt32(8 + content.count)) + Array(type.utf8) + content }
    static func full(_ type: String, version: UInt8 = 0, _ content: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + content) }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
    static func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }

    /// A movie with one AAC track whose sample table is `stbl` (stsd added), a `udta` of `udta`.
    static func movie(stbl: [UInt8], udta: [UInt8] = [], elst: [UInt8]? = nil) -> [UInt8] {
        let esds = full("esds", [3, 25, 0, 1, 0, 4, 17, 0x40, 0x15] + [UInt8](repeating: 0, count: 11) + [5, 2, 0x12, 0x10])
        let mp4a = box("mp4a", [UInt8](repeating: 0, count: 6) + be16(1) + [UInt8](repeating: 0, count: 8) + be16(2) + be16(16)
                                  + be16(0) + be16(0) + be32(44100 << 16) + esds)
        let stsd = full("stsd", be32(1) + mp4a)
        let mdhd = full("mdhd", be32(0) + be32(0) + be32(44100) + be32(0) + be32(0))
        let hdlr = full("hdlr", be32(0) + Array("soun".utf8) + [UInt8](repeating: 0, count: 13))
        let trak = box("trak", (elst.map { box("edts", full("elst", be32(1) + $0)) } ?? [])
                       + box("mdia", mdhd + hdlr + box("minf", box("stbl", stsd + stbl))))
        let mvhd = full("mvhd", be32(0) + be32(0) + be32(1000) + be32(0) + [UInt8](repeating: 0, count: 80))
        return box("ftyp", Array("M4A ".utf8) + be32(0)) + box("moov", mvhd + trak + (udta.isEmpty ? [] : box("udta", udta)))
    }

    func testNeroChaptersStz2Co64AndChunkRuns() throws {
        // 7 samples: chunks of 3, 3, then 1 (two runs); 4-bit sizes 1...7; 64-bit chunk offsets.
        let stts: [UInt8] = Self.full("stts", Self.be32(1) + Self.be32(7) + Self.be32(1024))
        let runs: [UInt8] = Self.be32(2) + Self.be32(1) + Self.be32(3) + Self.be32(1)
        let stsc: [UInt8] = Self.full("stsc", runs + Self.be32(3) + Self.be32(1) + Self.be32(1))
        let stz2: [UInt8] = Self.full("stz2", [0, 0, 0, 4] + Self.be32(7) + [0x12, 0x34, 0x56, 0x70])
        let co64: [UInt8] = Self.full("co64", Self.be32(3) + Self.be64(1000) + Self.be64(1 << 33) + Self.be64(5000))
        let stbl = stts + stsc + stz2 + co64
        // In parts: Swift 6.0's type checker gives up on one long chain of array literals.
        let first: [UInt8] = Self.be64(0) + [5] + Array("First".utf8)
        let third: [UInt8] = Self.be64(600_000_000) + [2] + [0xff, 0x0a]  // bad UTF-8 kept as text
        let second: [UInt8] = Self.be64(300_000_000) + [1] + Array("B".utf8)  // out of order: sorted
        let chpl = Self.full("chpl", version: 1, Self.be32(0) + [3] + first + third + second)
        let bytes = Self.movie(stbl: stbl, udta: chpl)
        let movie = try MP4Movie.read(MP4Bytes(bytes))
        XCTAssertEqual(movie.chapters, [MP4Chapter(start: 0, title: "First"), MP4Chapter(start: 30, title: "B"),
                                        MP4Chapter(start: 60, title: "\u{FFFD}\n")])
        var reader = try MP4SampleReader(movie.track.table, source: MP4Bytes(bytes))
        var got: [String] = []
        var starts: [UInt64] = []
        while let s = try reader.next() {
            got.append("\(s.offset)+\(s.size)")
            starts.append(s.start)
        }
        XCTAssertEqual(starts, (0..<7).map { UInt64($0) * 1024 })
        XCTAssertEqual(got, ["1000+1", "1001+2", "1003+3", "8589934592+4", "8589934596+5", "8589934601+6", "5000+7"])
        try reader.seek(toSample: 5)
        XCTAssertEqual(try reader.next()?.offset, 8589934601)
        XCTAssertEqual(movie.track.table.sample(at: 3000).index, 2)
        XCTAssertEqual(movie.track.table.sample(at: 3072).start, 3072)
        XCTAssertEqual(movie.track.table.sample(at: 99999).index, 7)
    }

    /// A table of 200,000 one-sample chunks and as many duration runs (a crafted file): the reader
    /// keeps cursors, so each sample costs the same; walking every table from the start per sample
    /// (as it first did) took it 200,000² steps, minutes, for a file of 5 MB.
    func testTablesOfManyRunsAreWalkedOnceEach() throws {
        let n = 200_000
        var stts = Self.be32(UInt32(n)), stsc = Self.be32(UInt32(n)), co64 = Self.be32(UInt32(n))
        stts.reserveCapacity(8 * n + 4)
        stsc.reserveCapacity(12 * n + 4)
        co64.reserveCapacity(8 * n + 4)
        for i in 0..<n {
            stts += Self.be32(1) + Self.be32(i % 2 == 0 ? 1024 : 1000)
            stsc += Self.be32(UInt32(i + 1)) + Self.be32(1) + Self.be32(1)
            co64 += Self.be64(UInt64(100 + 3 * i))
        }
        let stbl: [UInt8] = Self.full("stts", stts) + Self.full("stsc", stsc) + Self.full("stsz", Self.be32(2) + Self.be32(UInt32(n)))
            + Self.full("co64", co64)
        let bytes = Self.movie(stbl: stbl)
        let table = try MP4Movie.read(MP4Bytes(bytes)).track.table
        var reader = try MP4SampleReader(table, source: MP4Bytes(bytes))
        var count = 0
        var last: (offset: UInt64, size: Int, start: UInt64)?
        while let sample = try reader.next() {
            count += 1
            last = sample
        }
        XCTAssertEqual(count, n)
        XCTAssertEqual(last?.offset, UInt64(100 + 3 * (n - 1)))
        XCTAssertEqual(last?.start, UInt64(n / 2) * 1024 + UInt64(n / 2 - 1) * 1000)
        try reader.seek(toSample: 12345)
        XCTAssertEqual(try reader.next()?.start, 6173 * 1024 + 6172 * 1000)
    }

    func testITunesGaplessNoteWhenThereIsNoEditList() throws {
        let stbl = Self.full("stts", Self.be32(1) + Self.be32(10) + Self.be32(1024)) + Self.full("stsc", Self.be32(1) + Self.be32(1) + Self.be32(10) + Self.be32(1))
            + Self.full("stsz", Self.be32(10) + Self.be32(10)) + Self.full("stco", Self.be32(1) + Self.be32(0))
        func item(_ type: String, _ text: String) -> [UInt8] { Self.full(type, Array(text.utf8)) }
        let smpb = Self.box("----", item("mean", "com.apple.iTunes") + item("name", "iTunSMPB")
            + Self.box("data", Self.be32(1) + Self.be32(0) + Array(" 00000000 00000840 000001C0 0000000000001F00 00000000".utf8)))
        let meta = Self.full("meta", Self.full("hdlr", Self.be32(0) + Array("mdir".utf8) + [UInt8](repeating: 0, count: 13)) + Self.box("ilst", smpb))
        let movie = try MP4Movie.read(MP4Bytes(Self.movie(stbl: stbl, udta: meta)))
        XCTAssertEqual(movie.track.iTunSMPB, MP4Gapless(delay: 2112, padding: 448, frames: 7936))
        XCTAssertEqual(movie.track.audioSpan(outputRate: 44100).skip, 2112)
        XCTAssertEqual(movie.track.audioSpan(outputRate: 44100).frames, 7936)
        // An edit list, when it places the audio, wins over the note.
        let edited = try MP4Movie.read(MP4Bytes(Self.movie(stbl: stbl, udta: meta, elst: Self.be32(100) + Self.be32(1024) + Self.be32(0x10000))))
        XCTAssertEqual(edited.track.audioSpan(outputRate: 44100).skip, 1024)
        XCTAssertEqual(edited.track.audioSpan(outputRate: 44100).frames, 4410)
    }

    func testWhatIsNotAnMP4FileSaysSo() {
        func reason(_ bytes: [UInt8]) -> String? {
            do { _ = try MP4Movie.read(MP4Bytes(bytes)); return nil } catch { return error.reason }
        }
        XCTAssertEqual(reason([]), "file is empty")
        XCTAssertEqual(reason(Array("fLaC".utf8) + [UInt8](repeating: 0, count: 40)), "not an MP4 file")
        XCTAssertEqual(reason(Self.box("ftyp", Array("M4A ".utf8)) + Self.box("mdat", [1, 2, 3])),
                       "damaged file: no 'moov' box (the index of the audio; an unfinished recording or download?)")
        XCTAssertEqual(reason(Self.box("ftyp", []) + Self.box("moov", Self.box("trak", []))), "no audio track in this MP4 file")
        XCTAssertEqual(reason(Self.be32(0xffff) + Array("ftyp".utf8)), "damaged file: box 'ftyp' runs past the end of the file (truncated?)")
    }

    /// Every cut of the fixtures and seeded random damage: an error or a movie, never a trap; and
    /// reading every sample of what parses stays within the file or throws.
    func testDamagedFilesNeverTrap() throws {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_MP4_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("MP4MovieTests seed: \(seed) (JUKEBOX_MP4_SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        var outcomes: [String: Int] = [:]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mp4-damage-\(getpid())-\(seed)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for name in ["two-tone.m4a", "two-tone-alac.m4a", "chapters.m4b"] {
            let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture(name))))
            var cases: [[UInt8]] = stride(from: 0, to: original.count, by: 97).map { Array(original[..<$0]) }
            for _ in 0..<300 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    // Damage the index more often than the audio: that is where a parser breaks.
                    let at = Bool.random(using: &generator) ? Int.random(in: max(0, bytes.count - 2000)..<bytes.count, using: &generator)
                                                            : Int.random(in: 0..<bytes.count, using: &generator)
                    bytes[at] = UInt8.random(in: 0...255, using: &generator)
                }
                cases.append(bytes)
            }
            for (n, bytes) in cases.enumerated() {
                // Every third one also decoded whole: libfaad or the ALAC decoder on damaged
                // frames must end with audio or a reason, never trap or hang.
                if n % 3 == 0 {
                    let path = scratch + "/damaged.m4a"
                    try Data(bytes).write(to: URL(fileURLWithPath: path))
                    if let decoder = try? MP4Decoder(path: path) {
                        _ = MP4DecoderTests.readAll(decoder, limit: 1_000_000)
                        outcomes[decoder.failure == nil ? "decoded" : "decode failed", default: 0] += 1
                    }
                }
                do {
                    let source = MP4Bytes(bytes)
                    let movie = try MP4Movie.read(source)
                    var reader = try MP4SampleReader(movie.track.table, source: source)
                    while let sample = try reader.next() {
                        _ = try source.read(at: sample.offset, count: sample.size)
                    }
                    outcomes["read", default: 0] += 1
                } catch {
                    outcomes["error", default: 0] += 1
                }
            }
        }
        print("MP4MovieTests damaged files: \(outcomes)")
        XCTAssertGreaterThan(outcomes["error", default: 0], 0)
    }
}

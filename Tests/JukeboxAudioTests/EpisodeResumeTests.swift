// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxTestSupport
import XCTest

/// Downloads cut in the middle and tried again, against the local `RadioServer` (`/dir/NAME`
/// answers ranges with an ETag and `If-Range`; `drop=B` cuts its first answer after B bytes;
/// `/served/NAME` counts the body bytes it sent): the rest only is asked and appended, a changed
/// file or a server that ignores ranges starts over, and the result is byte-equal to the source.
final class EpisodeResumeTests: ServedFolderCase {
    override var servedFolderName: String { "resume" }

    private var settings: FeedFetchSettings {
        var s = FeedFetchSettings()
        s.connectTimeoutSeconds = 5
        s.stallSeconds = 5
        s.totalSeconds = 30
        return s
    }

    private var episodes: String { scratch.url.appendingPathComponent("episodes/feed").path }

    /// A served file of `count` bytes from `seed` (not audio: a download does not read it).
    private func serve(_ name: String, count: Int, seed: UInt8) throws -> Data {
        let data = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        try data.write(to: URL(fileURLWithPath: folder + "/" + name))
        return data
    }

    /// The count the server keeps, fetched by the downloader itself (Foundation has no HTTP here).
    private func served(_ name: String) throws -> Int {
        let path = scratch.url.appendingPathComponent("count/served").path
        _ = try EpisodeDownload.run(server.url("/served/" + name), to: path, maxBytes: 100, settings: settings).get()
        return Int(String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)) ?? -1
    }

    private func listing() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: episodes)) ?? []).sorted()
    }

    func testACutDownloadResumesWithTheRestOnly() throws {
        let source = try serve("ep.bin", count: 3_000_000, seed: 1)
        let url = server.url("/dir/ep.bin?drop=1200000")
        let path = episodes + "/ep.mp3"
        guard case .failure = EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings) else {
            return XCTFail("a cut download said it was whole")
        }
        XCTAssertEqual(listing(), [".ep.mp3.partial", ".ep.mp3.partial.info"])
        XCTAssertEqual(fileSize(episodes + "/.ep.mp3.partial"), 1_200_000)
        XCTAssertEqual(try served("ep.bin"), 1_200_000)
        var told: [Int64] = []
        XCTAssertEqual(EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings,
                                           progress: { bytes, total in
                                               XCTAssertEqual(total, 3_000_000)
                                               told.append(bytes)
                                           }), .success(3_000_000))
        XCTAssertEqual(FileManager.default.contents(atPath: path), source)
        XCTAssertEqual(try served("ep.bin"), 3_000_000, "the rest only was asked for")
        // Progress: from the kept bytes on, rising, at most once per 5 % (150,000 bytes, some 9 of
        // libcurl's 16 KiB writes; a second is longer here).
        XCTAssertGreaterThan(told.first ?? 0, 1_200_000)
        XCTAssertEqual(told, told.sorted())
        XCTAssertLessThanOrEqual(told.count, 13, "\(told)")
        XCTAssertGreaterThanOrEqual(told.count, 2, "\(told)")
        XCTAssertEqual(listing(), ["ep.mp3"])
    }

    func testAChangedFileStartsOver() throws {
        _ = try serve("ep.bin", count: 300_000, seed: 1)
        let url = server.url("/dir/ep.bin?drop=120000")
        let path = episodes + "/ep.mp3"
        _ = EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings)
        XCTAssertEqual(fileSize(episodes + "/.ep.mp3.partial"), 120_000)
        // A new file behind the same URL: a new ETag, so If-Range gets the whole of it.
        let changed = try serve("ep.bin", count: 250_000, seed: 7)
        XCTAssertEqual(EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings), .success(250_000))
        XCTAssertEqual(FileManager.default.contents(atPath: path), changed)
        XCTAssertEqual(try served("ep.bin"), 120_000 + 250_000)
        XCTAssertEqual(listing(), ["ep.mp3"])
    }

    func testAServerIgnoringRangesStartsOver() throws {
        let source = try serve("ep.bin", count: 300_000, seed: 3)
        let url = server.url("/dir/ep.bin?norange=1&drop=120000")
        let path = episodes + "/ep.mp3"
        _ = EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings)
        XCTAssertEqual(fileSize(episodes + "/.ep.mp3.partial"), 120_000)
        XCTAssertEqual(EpisodeDownload.run(url, to: path, maxBytes: 1 << 30, settings: settings), .success(300_000))
        XCTAssertEqual(FileManager.default.contents(atPath: path), source)
        XCTAssertEqual(try served("ep.bin"), 120_000 + 300_000)
        XCTAssertEqual(listing(), ["ep.mp3"])
    }

    func testTheBudgetBoundsTheWholeFileAndOtherPartialsGo() throws {
        _ = try serve("ep.bin", count: 300_000, seed: 1)
        let url = server.url("/dir/ep.bin?drop=120000")
        _ = EpisodeDownload.run(url, to: episodes + "/ep.mp3", maxBytes: 1 << 30, settings: settings)
        XCTAssertEqual(fileSize(episodes + "/.ep.mp3.partial"), 120_000)
        // Another episode's download in the folder removes this partial file (one per folder).
        let other = try serve("other.bin", count: 1000, seed: 2)
        XCTAssertEqual(EpisodeDownload.run(server.url("/dir/other.bin"), to: episodes + "/other.mp3", maxBytes: 1 << 30,
                                           settings: settings), .success(1000))
        XCTAssertEqual(FileManager.default.contents(atPath: episodes + "/other.mp3"), other)
        XCTAssertEqual(listing(), ["other.mp3"])
        // A length over the budget left ends it at the headers: nothing kept.
        XCTAssertEqual(EpisodeDownload.run(server.url("/dir/ep.bin"), to: episodes + "/ep.mp3", maxBytes: 200_000, settings: settings),
                       .failure(.failed("larger than the budget left (195 KiB)")))
        XCTAssertEqual(listing(), ["other.mp3"])
    }

    func testARecordThatDoesNotFitIsNotTrusted() {
        XCTAssertEqual(FileSink.contentRange("bytes 100-199/200")?.first, 100)
        XCTAssertEqual(FileSink.contentRange("bytes 100-199/200")?.total, 200)
        XCTAssertNil(FileSink.contentRange("bytes */200"))
        XCTAssertNil(FileSink.contentRange("items 1-2/3"))
        XCTAssertNil(PartialRecord.validator("\"a\"\u{1B}[2J"))
        XCTAssertNil(PartialRecord.validator(String(repeating: "a", count: 256)))
        XCTAssertEqual(PartialRecord.validator(" \"abc\"\r"), "\"abc\"")
    }
}

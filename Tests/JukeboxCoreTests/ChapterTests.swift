// SPDX-License-Identifier: MIT
@testable import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Next and previous inside a file with chapters (an audiobook): the core seeks to the chapter's
/// start; past the last chapter, and with `--file` (MPD's next/previous), they move by file.
final class ChapterTests: XCTestCase {
    /// `playing(3)` whose first track has chapters at 0, 60 and 120 s, heard up to `at`.
    private func book(at position: Double) -> State {
        var s = playing(3)
        s.queue[0].info.chapters = [Chapter(start: 0, title: "One"), Chapter(start: 60, title: "Two"), Chapter(start: 120, title: "<b>Three</b>")]
        s.queue[0].info.duration = 300
        s.position = position
        return s
    }

    private func seekTarget(_ commands: [Command]) -> Double? {
        for case .seekOutput(let to) in commands { return to }
        return nil
    }

    private func startedPath(_ commands: [Command]) -> String? {
        for case .startTrack(_, let path, _, _, _, _, _) in commands { return path }
        return nil
    }

    func testNextAndPreviousMoveByChapterInsideTheFile() {
        let rows: [(event: Event, at: Double, seek: Double?, starts: String?)] = [
            (.next, 0, 60, nil), (.next, 70, 120, nil), (.next, 59.9, 60, nil),
            // Within `chapterSlack` of a start counts as in that chapter (a seek there reports a hair short).
            (.next, 59.99, 120, nil),
            // In the last chapter: the next file.
            (.next, 130, nil, "/music/2.flac"),
            // More than 3 s into a chapter restarts it; less goes to the one before.
            (.previous, 70, 60, nil), (.previous, 62, 0, nil), (.previous, 125, 120, nil), (.previous, 121, 60, nil),
            // In the first chapter, the track's own rule: restart after 3 s.
            (.previous, 10, 0, nil),
            // By file whatever the chapters.
            (.nextFile, 70, nil, "/music/2.flac"), (.previousFile, 70, 0, nil),
        ]
        for row in rows {
            var state = book(at: row.at)
            let commands = reduce(&state, row.event)
            XCTAssertEqual(seekTarget(commands), row.seek, "\(row.event) at \(row.at)")
            XCTAssertEqual(startedPath(commands), row.starts, "\(row.event) at \(row.at)")
            if let seek = row.seek { XCTAssertEqual(state.position, seek, "\(row.event) at \(row.at)") }
            XCTAssertEqual(state.cursor, row.starts == nil ? 0 : 1)
        }
    }

    func testAStoppedPlayerOrAFileWithoutChaptersMovesByFile() {
        var stopped = book(at: 70)
        stopped.phase = .stopped
        stopped.loaded = nil
        _ = reduce(&stopped, .next)
        XCTAssertEqual(stopped.cursor, 1)
        var plain = playing(3)
        plain.position = 70
        XCTAssertEqual(startedPath(reduce(&plain, .next)), "/music/2.flac")
    }

    func testTheStatusShowsTheChapterAsInertText() {
        let state = book(at: 130)
        XCTAssertEqual(state.currentChapter?.index, 2)
        XCTAssertEqual(StatusView(state).chapter, "3/3 <b>Three</b>")
        XCTAssertTrue(StatusView(state).line.contains("ch 3/3 <b>Three</b>"))
        XCTAssertNil(StatusView(book(at: 130)).chapter.flatMap { $0.contains("\n") ? $0 : nil })
        XCTAssertNil(StatusView(playing(3)).chapter)
    }

    func testTheControlLanguageHasNextAndPreviousByFile() {
        func parse(_ line: String) -> ControlCommand? { try? ControlCommand.parse(line, seed: 1).get() }
        XCTAssertEqual(parse("next"), .intent(.next))
        XCTAssertEqual(parse("next --file"), .intent(.nextFile))
        XCTAssertEqual(parse("prev --file"), .intent(.previousFile))
        XCTAssertEqual(parse("previous --file"), .intent(.previousFile))
        XCTAssertNil(parse("next --chapter"))
    }

    func testChaptersSurviveTheStateFileAndFilesWithoutThemAreWrittenAsBefore() throws {
        let with = TrackInfo(path: "/b.m4b", chapters: [Chapter(start: 0, title: "A")])
        XCTAssertEqual(with.chapters?.count, 1)
        XCTAssertNil(TrackInfo(path: "/b.m4b", chapters: []).chapters, "none is nil: not written")
    }

    /// A bookmark keeps the position, so an audiobook resumes inside the chapter it was left in:
    /// the status shows that chapter, and next and previous go on from it.
    func testABookmarkedAudiobookResumesInsideItsChapter() {
        let source = QueueSource(paths: ["/books/b"])
        var book = info(1, duration: 300)
        book.chapters = [Chapter(start: 0, title: "One"), Chapter(start: 60, title: "Two"), Chapter(start: 120, title: "Three")]
        var s = State()
        s.bookmarksReady = true
        _ = reduce(&s, .loadSource(source, tracks: [book, info(2)]))
        guard let play = s.loaded?.playID else { return XCTFail("the book does not play") }
        _ = reduce(&s, .heard(playID: play, seconds: 75))
        // The periodic save writes the bookmark at 1:15, in chapter 2.
        _ = reduce(&s, .tick(now: 10))
        XCTAssertEqual(s.bookmarks.first { $0.paths == source.paths }?.position, 75)
        // Another source, then the book again: it starts at 1:15, inside "Two".
        _ = reduce(&s, .loadSource(QueueSource(paths: ["/music/x"]), tracks: [info(5)]))
        XCTAssertNil(s.currentChapter)
        let resumed = reduce(&s, .loadSource(source, tracks: [book, info(2)]))
        let starts = resumed.compactMap { c -> Double? in if case .startTrack(_, "/music/1.flac", let at, _, _, _, _) = c { return at } else { return nil } }
        XCTAssertEqual(starts, [75])
        XCTAssertEqual(s.currentChapter?.index, 1)
        XCTAssertEqual(StatusView(s).chapter, "2/3 Two")
        // From there, next is chapter 3 and previous (15 s in) restarts chapter 2.
        var next = s
        XCTAssertEqual(seekTarget(reduce(&next, .next)), 120)
        XCTAssertEqual(seekTarget(reduce(&s, .previous)), 60)
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import XCTest

/// Tags and file names come from anywhere: whatever they hold, what the core shows is inert.
final class DisplayTextTests: XCTestCase {
    static let evil = "Evil\nok ▶ Fake Song\u{1B}]0;owned\u{7}\u{1B}[2J\r\u{9B}31m\u{7F}"

    func testControlCharactersAreReplacedOneForOneAndTheRestIsKept() {
        XCTAssertEqual(DisplayText.inert("a\u{0}b\tc\u{1B}d\u{7F}e\u{85}f\u{9F}g"), "a�b�c�d�e�f�g")
        XCTAssertEqual(DisplayText.inert("\r\n"), "��", "a CRLF is two controls, not one")
        let fine = "Ünïcödé ▶⏸ 🔀 日本語 \u{A0}nbsp \\ \" é"
        XCTAssertEqual(DisplayText.inert(fine), fine)
        XCTAssertEqual(DisplayText.inert(DisplayText.inert(Self.evil)), DisplayText.inert(Self.evil))
    }

    /// U+202E and the other bidi controls would reorder the rest of a line (the player's own
    /// words included): they are made inert like C0 and C1.
    func testBidiControlsAreMadeInertToo() {
        let bidi = "\u{202E}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{2066}\u{2067}\u{2068}\u{2069}\u{061C}"
        XCTAssertEqual(DisplayText.inert("gpj." + bidi + "exe"), "gpj." + String(repeating: "�", count: 12) + "exe")
        // Neighbours that are not controls stay: ZWJ (emoji sequences), NBSP, Arabic letters.
        let fine = "\u{200D}\u{A0}\u{0627}\u{061B}\u{2065}\u{206A}\u{2029}"
        XCTAssertEqual(DisplayText.inert(fine), fine)
    }

    func testTheStatusLineOfAnEvilTagIsOneLineWithoutEscapes() {
        var s = State()
        _ = reduce(&s, .add([TrackInfo(path: "/m/x.flac", title: Self.evil, artist: "Band\u{1B}[31m", duration: 10)]))
        _ = reduce(&s, .play)
        let view = StatusView(s)
        for text in [view.line, view.title, view.artist ?? ""] {
            XCTAssertFalse(text.unicodeScalars.contains(where: DisplayText.isControl), text.debugDescription)
        }
        XCTAssertTrue(view.line.hasPrefix("▶ Evil�ok ▶ Fake Song�]0;owned��[2J��31m� – Band�[31m  0:00 / 0:10"), view.line)
    }

    func testAnInterruptionReasonIsInertToo() {
        var s = State()
        _ = reduce(&s, .add([TrackInfo(path: "/m/x.flac", duration: 10)]))
        _ = reduce(&s, .interruptBegan(id: "manual", reason: "bell\n\u{1B}[2J"))
        XCTAssertEqual(StatusView(s).message, "interrupted: bell��[2J")
    }

    func testPanelRowsOfAnEvilTagAreInertAndExactlyAsWideAsThePanel() {
        for layout in [PanelLayout.lcd16x2, .lcd20x4, .oled128x64] {
            var settings = Settings()
            settings.display = layout
            var s = State(settings: settings)
            _ = reduce(&s, .add([TrackInfo(path: "/m/x.flac", title: "\r\n\u{1B}[2J", artist: Self.evil, album: Self.evil, duration: 10)]))
            _ = reduce(&s, .play)
            for now in [0.0, 3, 7.5] {
                let frame = DisplayFrame.make(s, layout: layout)
                for row in frame.rows {
                    XCTAssertEqual(row.count, layout.columns, "\(layout) \(row.debugDescription)")
                    XCTAssertFalse(row.unicodeScalars.contains(where: DisplayText.isControl), "\(layout) at \(now): \(row.debugDescription)")
                }
                _ = reduce(&s, .tick(now: now))
            }
            XCTAssertEqual(DisplayFrame.make(s, layout: layout).rows[0].prefix(6), "���[2J")
        }
    }
}

/// The escaped bytes of a file name that is not UTF-8 (U+EF80…U+EFFF) are shown as U+FFFD; the
/// MPD face's `lineSafe` keeps them (a client sends the URI back) but still blanks controls.
final class EscapedNameDisplayTests: XCTestCase {
    func testEscapedBytesAreShownAsReplacementCharactersButKeptForMPD() {
        let name = "lib/\u{EFFF}\u{EFFE}.wav"
        XCTAssertEqual(DisplayText.inert(name), "lib/\u{FFFD}\u{FFFD}.wav")
        XCTAssertEqual(DisplayText.inert("\u{EF7F}é\u{F000}"), "\u{EF7F}é\u{F000}", "neighbours are kept")
        XCTAssertEqual(DisplayText.lineSafe(name + "\nOK"), "lib/\u{EFFF}\u{EFFE}.wav\u{FFFD}OK")
        XCTAssertEqual(DisplayText.inert(DisplayText.inert(name)), DisplayText.inert(name))
    }
}

extension DisplayTextTests {
    /// A quoted piece of input stays within its bytes whatever its characters take (the command
    /// fuzzer's card value of 0xBE bytes made a 267-byte error line).
    func testInertCutsByBytesAtACharactersEnd() {
        XCTAssertEqual(DisplayText.inert("short", maxBytes: 32), "short")
        let wide = String(repeating: "\u{FFFD}", count: 40)          // 3 bytes each
        let cut = DisplayText.inert(wide, maxBytes: 32)
        XCTAssertLessThanOrEqual(cut.utf8.count, 32)
        XCTAssertEqual(cut, String(repeating: "\u{FFFD}", count: 9) + "…")
        XCTAssertEqual(DisplayText.inert("a\u{1B}[2J" + String(repeating: "x", count: 50), maxBytes: 10), "a\u{FFFD}[2J…")
        let error = Cards.parseAction("sleel -" + String(repeating: "\u{FFFD}", count: 90))
        guard case .failure(let e) = error else { return XCTFail("accepted") }
        XCTAssertLessThanOrEqual(e.message.utf8.count, 200, e.message)
    }
}

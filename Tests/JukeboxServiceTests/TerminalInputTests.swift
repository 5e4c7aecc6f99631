// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The one escape-sequence recogniser (`EscapeRecognizer`, in the core) and its two users: the
/// player's keys (`KeyDecoder`) and the serial console's line editor (`LineEditor`). Here, not in
/// the core's tests, because the line editor is the service's.
final class TerminalInputTests: XCTestCase {
    func steps(_ bytes: [UInt8], _ recognizer: inout EscapeRecognizer) -> [EscapeRecognizer.Step] {
        bytes.map { recognizer.feed($0) }
    }

    func testSequencesAreRecognisedByteByByte() {
        var r = EscapeRecognizer()
        XCTAssertEqual(steps(Array("a\u{1B}[1;5C".utf8), &r),
                       [.byte(0x61), .swallowed, .swallowed, .swallowed, .swallowed, .swallowed,
                        .sequence(.csi(parameters: 3, final: 0x43))])
        XCTAssertEqual(steps(Array("\u{1B}OP\u{1B}x\u{1B}\u{1B}[A".utf8), &r),
                       [.swallowed, .swallowed, .sequence(.ss3(final: 0x50)), .swallowed, .sequence(.alt(0x78)),
                        .swallowed, .swallowed, .swallowed, .sequence(.csi(parameters: 0, final: 0x41))])
        XCTAssertFalse(r.inSequence)
        XCTAssertEqual(EscapeSequence.csi(parameters: 0, final: 0x44).cursorKey, .left)
        XCTAssertEqual(EscapeSequence.ss3(final: 0x42).cursorKey, .down)
        XCTAssertNil(EscapeSequence.csi(parameters: 3, final: 0x43).cursorKey)
        XCTAssertNil(EscapeSequence.alt(0x41).cursorKey)
    }

    func testAControlByteInsideASequenceEndsItAndIsItself() {
        for start in ["\u{1B}", "\u{1B}[", "\u{1B}[12;", "\u{1B}O"] {
            var r = EscapeRecognizer()
            _ = steps(Array(start.utf8), &r)
            XCTAssertTrue(r.inSequence, start.debugDescription)
            XCTAssertEqual(r.feed(0x03), .byte(0x03), start.debugDescription)
            XCTAssertFalse(r.inSequence, start.debugDescription)
            XCTAssertEqual(r.feed(0x41), .byte(0x41), start.debugDescription)
        }
    }

    func testACSIIsBounded() {
        var r = EscapeRecognizer()
        let parameters = Array(repeating: UInt8(ascii: "1"), count: EscapeRecognizer.maxParameters)
        XCTAssertTrue(steps([0x1B, 0x5B] + parameters, &r).allSatisfy { $0 == .swallowed })
        XCTAssertTrue(r.inSequence)
        XCTAssertEqual(r.feed(UInt8(ascii: "1")), .swallowed)  // one too many: it ends the sequence
        XCTAssertFalse(r.inSequence)
        XCTAssertEqual(r.feed(UInt8(ascii: "1")), .byte(UInt8(ascii: "1")))
    }

    func testKeyDecoderJoinsSplitArrowsAndKeepsCtrlCInsideASequence() {
        var d = KeyDecoder()
        XCTAssertEqual(d.feed([0x1B, 0x4F]), [])
        XCTAssertEqual(d.feed([0x41, 0x1B]), [.up])
        XCTAssertEqual(d.feed(Array("[1;5Cx".utf8)), [.character("x")])  // Ctrl-Right is not a plain arrow
        XCTAssertEqual(d.feed(Array("\u{1B}[1\u{03}".utf8)), [.character("\u{03}")])
        XCTAssertEqual(KeyMap.event(for: .character("\u{03}"), settings: Settings(), seed: 1), .quit)
    }

    func testKeyDecoderIsNotSilencedByAFloodOfParameters() {
        var d = KeyDecoder()
        XCTAssertEqual(d.feed([0x1B, 0x5B]), [])
        for _ in 0..<100 { _ = d.feed(Array("12345678".utf8)) }
        XCTAssertEqual(d.feed(Array("q".utf8)), [.character("q")])
    }

    func testLineEditorSwallowsSequencesButNotEnterOrCtrlC() {
        var editor = LineEditor()
        var effects: [LineEditor.Effect] = []
        for byte in Array("st\u{1B}[1;5Cop\u{1B}[12\u{03}".utf8) { editor.feed(byte, into: &effects) }
        XCTAssertEqual(effects, [.echo(Array("stop^C\r\n".utf8)), .interrupt])
        effects = []
        let flood = "\u{1B}[" + String(repeating: "9", count: 100) + "go\u{1B}O\r"
        for byte in Array(flood.utf8) { editor.feed(byte, into: &effects) }
        // 32 parameters, the 33rd ends the sequence (swallowed), the other 67 nines are text.
        XCTAssertEqual(effects, [.echo(Array((String(repeating: "9", count: 67) + "go\r\n").utf8)),
                                 .submit(String(repeating: "9", count: 67) + "go")])
    }
}

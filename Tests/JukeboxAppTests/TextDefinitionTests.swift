// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import XCTest

/// What counts as a control character is one set: the core makes it inert (`DisplayText`), the
/// audio adapter drops it where tags and titles enter (`TagText`), and the adapter cannot import
/// the core. Every scalar gets the same answer from both.
final class TextDefinitionTests: XCTestCase {
    func testTagTextAndDisplayTextAgreeOnEveryScalar() {
        var controls = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let core = DisplayText.isControl(scalar)
            XCTAssertEqual(TagText.isControl(scalar), core, "U+\(String(value, radix: 16, uppercase: true))")
            if core { controls += 1 }
        }
        // C0 (32), DEL and C1 (33), and the 12 bidi controls.
        XCTAssertEqual(controls, 32 + 33 + 12)
    }
}

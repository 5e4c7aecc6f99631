// SPDX-License-Identifier: MIT
import XCTest
@testable import JukeboxCore

/// `RepeatMode.setting(_:to:)`: MPD's repeat/single/consume flags over jukebox's repeat modes,
/// every (mode, flag, value) once.
final class RepeatFlagsTests: XCTestCase {
    func testFlagsOfEachMode() {
        XCTAssertTrue(RepeatMode.off.flags == (false, false))
        XCTAssertTrue(RepeatMode.all.flags == (true, false))
        XCTAssertTrue(RepeatMode.one.flags == (true, true))
    }

    func testEveryFlagChangeFromEveryMode() {
        let noSingle = RepeatFlagChange.refused("single-without-repeat (stop after the song)")
        let table: [(RepeatMode, RepeatFlag, RepeatFlagValue, RepeatFlagChange)] = [
            (.off, .repeat, .on, .set(.all)), (.off, .repeat, .off, .set(.off)), (.off, .repeat, .oneshot, .set(.all)),
            (.all, .repeat, .on, .set(.all)), (.all, .repeat, .off, .set(.off)), (.all, .repeat, .oneshot, .set(.all)),
            (.one, .repeat, .on, .set(.one)), (.one, .repeat, .off, .set(.off)), (.one, .repeat, .oneshot, .set(.one)),
            (.off, .single, .on, noSingle), (.off, .single, .off, .unchanged),
            (.off, .single, .oneshot, .refused("single oneshot")),
            (.all, .single, .on, .set(.one)), (.all, .single, .off, .unchanged),
            (.all, .single, .oneshot, .refused("single oneshot")),
            (.one, .single, .on, .set(.one)), (.one, .single, .off, .set(.all)),
            (.one, .single, .oneshot, .refused("single oneshot")),
            (.off, .consume, .on, .refused("consume")), (.off, .consume, .off, .unchanged),
            (.off, .consume, .oneshot, .refused("consume")),
            (.all, .consume, .on, .refused("consume")), (.all, .consume, .off, .unchanged),
            (.all, .consume, .oneshot, .refused("consume")),
            (.one, .consume, .on, .refused("consume")), (.one, .consume, .off, .unchanged),
            (.one, .consume, .oneshot, .refused("consume")),
        ]
        XCTAssertEqual(table.count, RepeatMode.allCases.count * RepeatFlag.allCases.count * RepeatFlagValue.allCases.count)
        for (mode, flag, value, expected) in table {
            XCTAssertEqual(mode.setting(flag, to: value), expected, "\(mode) \(flag) \(value)")
        }
    }

    /// A set mode shows the asked flag as asked (what MPD clients read back after the change).
    func testASetModeShowsTheAskedFlag() {
        for mode in RepeatMode.allCases {
            for flag in [RepeatFlag.repeat, .single] {
                for value in [RepeatFlagValue.on, .off] {
                    guard case .set(let next) = mode.setting(flag, to: value) else { continue }
                    let shown = flag == .repeat ? next.flags.repeat : next.flags.single
                    XCTAssertEqual(shown, value == .on, "\(mode) \(flag) \(value) → \(next)")
                }
            }
        }
    }
}

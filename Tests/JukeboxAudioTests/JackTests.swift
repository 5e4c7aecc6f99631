// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// `AlsaJack` against `TestJack`, a user-space control device with jack controls as a card's
/// driver makes them; the test plugs and pulls as the driver's interrupt would.
final class JackTests: XCTestCase {

    static func device() throws -> ControlPlugin {
        switch TestJack.plugin {
        case .success(let plugin): return plugin
        case .failure(let error): throw missingPeer(error.message)
        }
    }

    static func set(_ name: String, _ on: Bool) throws {
        _ = try device()
        XCTAssertTrue(TestJack.set(name, on), "writing \(name)")
    }

    static func readable(_ fd: Int32, within ms: Int32 = 0) -> Bool { TestJack.readable(fd, within: ms) }

    override func setUp() { TestJack.reset() }

    func testAPlugAndAPullAreReadAndOtherControlsAreNot() throws {
        let plugin = try Self.device()
        let jack = try AlsaJack(device: plugin.device, control: "Headphone Jack", config: plugin.config)
        XCTAssertFalse(try jack.plugged())
        XCTAssertFalse(Self.readable(jack.fd), "nothing happened yet")
        try Self.set("Headphone Jack", true)
        XCTAssertTrue(Self.readable(jack.fd, within: 1000))
        XCTAssertEqual(try jack.read(), true)
        XCTAssertFalse(Self.readable(jack.fd), "every notice was taken")
        // Another jack of the card: a notice, but not about this one.
        try Self.set("Line Out Jack", true)
        XCTAssertTrue(Self.readable(jack.fd, within: 1000))
        XCTAssertNil(try jack.read())
        try Self.set("Headphone Jack", false)
        XCTAssertEqual(try jack.read(), false)
        // Nothing waiting: nil, and no error.
        XCTAssertNil(try jack.read())
        jack.close()
        XCTAssertEqual(jack.fd, -1)
    }

    func testAControlThatIsNoSwitchOrIsNotThereIsRefusedWithTheSwitchesThereAre() throws {
        let plugin = try Self.device()
        for name in ["Headphone", "PCM Playback Volume"] {
            XCTAssertThrowsError(try AlsaJack(device: plugin.device, control: name, config: plugin.config)) { error in
                guard let error = error as? MixerError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .controlNotFound)
                XCTAssertEqual(error.available, ["Headphone Jack", "Line Out Jack", "Card Gone"])
                XCTAssertTrue(error.message.contains("no switch control \"\(name)\""), error.message)
            }
        }
        XCTAssertThrowsError(try AlsaJack(device: "hw:CARD=NoSuchCard", control: "Headphone Jack")) { error in
            XCTAssertEqual((error as? MixerError)?.kind, .cardNotFound)
        }
    }

    func testACardThatGoesAwayFailsTheRead() throws {
        let plugin = try Self.device()
        let jack = try AlsaJack(device: plugin.device, control: "Headphone Jack", config: plugin.config)
        try Self.set("Card Gone", true)
        XCTAssertTrue(Self.readable(jack.fd, within: 1000))
        XCTAssertThrowsError(try jack.read()) { error in
            XCTAssertEqual((error as? MixerError)?.kind, .failed)
        }
        try Self.set("Card Gone", false)
    }
}

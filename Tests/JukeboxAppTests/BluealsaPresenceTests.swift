// SPDX-License-Identifier: MIT
import JukeboxApp
import XCTest

/// What `bluealsa-cli monitor` and `list-pcms` say of one speaker (issue 31), by table: the lines
/// as bluez-alsa 4.x prints them (utils/cli/cmd-monitor.c: `ServiceRunning`/`ServiceStopped NAME`,
/// `PCMAdded`/`PCMRemoved PATH`), other devices' and profiles' PCMs, hostile lines.
final class BluealsaPresenceTests: XCTestCase {
    private static let sink = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink"

    func testMonitorLinesParse() {
        let rows: [(String, BluealsaPresence.Line)] = [
            ("PCMAdded " + Self.sink, .added(Self.sink)),
            ("PCMRemoved " + Self.sink, .removed(Self.sink)),
            ("ServiceRunning org.bluealsa", .serviceRunning),
            ("ServiceStopped org.bluealsa", .serviceStopped),
            ("RFCOMMAdded /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/rfcomm", .other),
            ("PropertyChanged " + Self.sink + " Volume 0x7F7F", .other),
            ("PCMAdded", .other),
            ("", .other),
            ("pcmadded " + Self.sink, .other),
        ]
        for (line, expected) in rows { XCTAssertEqual(BluealsaPresence.parse(line), expected, line) }
    }

    func testOnlyTheSpeakersA2DPPlaybackPCMCounts() {
        let p = BluealsaPresence(address: "aa:bb:cc:dd:ee:ff")
        let rows: [(String, Bool)] = [
            (Self.sink, true),
            ("/org/bluealsa/hci1/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink", true),
            ("/org/bluealsa/hci0/dev_aa_bb_cc_dd_ee_ff/a2dpsrc/sink", true),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source", false),  // the phone streams to us
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/hfpag/sink", false),
            ("/org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink", false),
            ("/elsewhere/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink", false),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink\u{0}", false),
        ]
        for (path, expected) in rows { XCTAssertEqual(p.isSpeaker(path), expected, path) }
    }

    /// Each step: a monitor line (or a list), what is reported, and whether a list is asked for.
    func testTheConnectionFollowsTheMonitorAndTheList() {
        var p = BluealsaPresence(address: "AA:BB:CC:DD:EE:FF")
        XCTAssertNil(p.reported)
        XCTAssertTrue(p.monitor("ServiceRunning org.bluealsa") == (nil, true))
        p.listStarted()
        XCTAssertEqual(p.listed(["/org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink", Self.sink]), true, "connected before the player")
        XCTAssertTrue(p.monitor("PCMRemoved " + Self.sink) == (false, false))
        XCTAssertTrue(p.monitor("PCMRemoved " + Self.sink) == (nil, false), "nothing new")
        XCTAssertTrue(p.monitor("PCMAdded /org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink") == (nil, false), "another speaker")
        XCTAssertTrue(p.monitor("PCMAdded " + Self.sink) == (true, false))
        XCTAssertTrue(p.monitor("ServiceStopped org.bluealsa") == (false, false), "every PCM goes with the service")
        XCTAssertTrue(p.monitor("ServiceRunning org.bluealsa") == (nil, true))
        p.listStarted()
        XCTAssertNil(p.listed([]), "still gone")
    }

    /// A list asked for before the speaker went, read after the monitor said so, does not bring it back.
    func testALateListNeverUndoesWhatTheMonitorSaidSince() {
        var p = BluealsaPresence(address: "AA:BB:CC:DD:EE:FF")
        _ = p.monitor("ServiceRunning org.bluealsa")
        p.listStarted()
        XCTAssertTrue(p.monitor("PCMAdded " + Self.sink) == (true, false))
        XCTAssertTrue(p.monitor("PCMRemoved " + Self.sink) == (false, false))
        XCTAssertNil(p.listed([Self.sink]), "the list was taken before the removal")
        // A removal the monitor did not see (it was not running) is the list's to say.
        var q = BluealsaPresence(address: "AA:BB:CC:DD:EE:FF")
        q.listStarted()
        XCTAssertEqual(q.listed([Self.sink]), true)
        q.forget()
        q.listStarted()
        XCTAssertEqual(q.listed(["garbage line", "\u{1b}[2J"]), false)
    }

    func testBeforeAnythingIsKnownARemovalSaysNothing() {
        var p = BluealsaPresence(address: "AA:BB:CC:DD:EE:FF")
        XCTAssertTrue(p.monitor("PCMRemoved " + Self.sink) == (nil, false))
        XCTAssertTrue(p.monitor("ServiceStopped org.bluealsa") == (false, false), "the first fact")
    }
}

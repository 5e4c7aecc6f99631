// SPDX-License-Identifier: MIT
import JukeboxApp
import XCTest

/// Whether a phone plays through the box, from `bluealsa-cli monitor --properties=Running` and
/// `bluealsa-cli --verbose list-pcms` (issue 31), by table: the lines as bluez-alsa 4.1–4.3 print
/// them (utils/cli/cmd-monitor.c: `PropertyChanged PATH Running true|false`; cli.c's
/// `Running: true` among a PCM's properties), other PCMs, hostile lines.
final class BluealsaPhoneStreamsTests: XCTestCase {
    private static let phone = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source"
    private static let other = "/org/bluealsa/hci1/dev_11_22_33_44_55_66/a2dpsnk/source"

    func testOnlyAnA2DPSinkPCMIsAPhoneAndItsAddressIsTheSender() {
        let rows: [(String, String?)] = [
            (Self.phone, "AA:BB:CC:DD:EE:FF"),
            ("/org/bluealsa/hci12/dev_aa_bb_cc_dd_ee_0f/a2dpsnk/source", "AA:BB:CC:DD:EE:0F"),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink", nil),  // a speaker we play to
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/hfpag/source", nil),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source/x", nil),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE/a2dpsnk/source", nil),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FG/a2dpsnk/source", nil),
            ("/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_F\u{1B}/a2dpsnk/source", nil),
            ("/org/bluealsa/hcix/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source", nil),
            ("/elsewhere/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source", nil),
            ("org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source", nil),
            ("", nil),
        ]
        for (path, expected) in rows { XCTAssertEqual(BluealsaPhoneStreams.phone(path), expected, path.debugDescription) }
    }

    /// Each step: a monitor line, the change reported, and whether a list is asked for.
    func testTheStreamFollowsTheMonitorsRunningProperty() {
        var p = BluealsaPhoneStreams()
        let rows: [(String, BluealsaPhoneStreams.Change?, Bool)] = [
            ("ServiceRunning org.bluealsa", nil, true),
            ("PCMAdded " + Self.phone, nil, false),  // connected, not playing yet
            ("PropertyChanged " + Self.phone + " Running false", nil, false),
            ("PropertyChanged " + Self.phone + " Running true", .started(sender: "AA:BB:CC:DD:EE:FF"), false),
            ("PropertyChanged " + Self.phone + " Running true", nil, false),  // said again
            ("PropertyChanged " + Self.other + " Running true", nil, false),  // a second phone
            ("PropertyChanged " + Self.phone + " Running false", nil, false),  // the second plays on
            ("PropertyChanged " + Self.other + " Running false", .stopped, false),
            ("PropertyChanged " + Self.phone + " Running true", .started(sender: "AA:BB:CC:DD:EE:FF"), false),
            ("PCMRemoved " + Self.phone, .stopped, false),  // the phone went while it played
            ("PropertyChanged " + Self.phone + " Running true", .started(sender: "AA:BB:CC:DD:EE:FF"), false),
            ("ServiceStopped org.bluealsa", .stopped, false),  // bluez-alsa died
            ("PropertyChanged " + Self.phone + " Running yes", nil, false),
            ("PropertyChanged " + Self.phone + " Volume 0x7F7F", nil, false),
            ("PropertyChanged " + Self.phone + " Running true extra", nil, false),
            ("PropertyChanged /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink Running true", nil, false),
            ("propertychanged " + Self.phone + " Running true", nil, false),
            ("RFCOMMAdded /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/rfcomm", nil, false),
            ("", nil, false),
        ]
        for (index, (line, change, list)) in rows.enumerated() {
            let got = p.monitor(line)
            XCTAssertEqual(got.change, change, "row \(index): \(line)")
            XCTAssertEqual(got.list, list, "row \(index): \(line)")
        }
        XCTAssertFalse(p.streaming)
    }

    /// `--verbose list-pcms` as bluez-alsa prints it: a phone that streamed before the monitor ran.
    func testTheListSaysWhatStreamedBeforeTheMonitorAndALateListNeverUndoesIt() {
        let speaker = "/org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink"
        let listing = [
            speaker, "Device: /org/bluez/hci0/dev_11_22_33_44_55_66", "Running: true", "",
            Self.phone, "Device: /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "Sequence: 0", "Transport: A2DP-sink",
            "Mode: source", "Running: true", "Format: S16_LE", "",
        ]
        var p = BluealsaPhoneStreams()
        p.listStarted()
        XCTAssertEqual(p.listed(listing), .started(sender: "AA:BB:CC:DD:EE:FF"))
        p.listStarted()
        XCTAssertNil(p.listed(listing), "the same list again")
        XCTAssertEqual(p.listed([Self.phone, "Running: false"]), .stopped)
        // The speaker's running PCM is no phone.
        XCTAssertNil(p.listed([speaker, "Running: true"]))
        // A path line without its properties (the plain list) says nothing runs.
        XCTAssertNil(p.listed([Self.phone]))
        // A list asked for before the monitor said the stream stopped does not bring it back.
        var q = BluealsaPhoneStreams()
        _ = q.monitor("ServiceRunning org.bluealsa")
        q.listStarted()
        XCTAssertEqual(q.monitor("PropertyChanged " + Self.phone + " Running true").change, .started(sender: "AA:BB:CC:DD:EE:FF"))
        XCTAssertEqual(q.monitor("PropertyChanged " + Self.phone + " Running false").change, .stopped)
        XCTAssertNil(q.listed(listing), "the list was taken before the stop")
        // Hostile lines name no phone.
        XCTAssertNil(q.listed(["\u{1B}[2J", "Running: true", Self.phone + "\u{0}", "Running: true"]))
    }

    /// The monitor ending mid-stream is the stream's end (nothing waits on a dead monitor); the
    /// list after its return says it again.
    func testAMonitorThatEndsEndsTheStream() {
        var p = BluealsaPhoneStreams()
        XCTAssertNil(p.forget(), "nothing played")
        XCTAssertEqual(p.monitor("PropertyChanged " + Self.phone + " Running true").change, .started(sender: "AA:BB:CC:DD:EE:FF"))
        XCTAssertEqual(p.forget(), .stopped)
        XCTAssertNil(p.forget())
        p.listStarted()
        XCTAssertEqual(p.listed([Self.phone, "Running: true"]), .started(sender: "AA:BB:CC:DD:EE:FF"))
    }
}

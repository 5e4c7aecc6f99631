// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import XCTest

/// The speaker's volume from `bluealsa-cli monitor --properties=Volume` (issue 31), by table: the
/// line as bluez-alsa 4.x prints it (`PropertyChanged PATH Volume 0xHHLL`: each channel's byte,
/// bit 7 mute, bits 0–6 the level), other PCMs and properties, and hostile lines that give nothing.
final class BluealsaVolumeTests: XCTestCase {
    private static let sink = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink"
    private let speaker = BluealsaPresence(address: "AA:BB:CC:DD:EE:FF")

    func testTheSpeakersVolumeLines() {
        typealias R = BluealsaVolume.Report
        let rows: [(String, R?)] = [
            ("PropertyChanged \(Self.sink) Volume 0x1E1E", R(level: 30, muted: false)),
            ("PropertyChanged \(Self.sink) Volume 0x7F7F", R(level: 127, muted: false)),
            ("PropertyChanged \(Self.sink) Volume 0x0000", R(level: 0, muted: false)),
            ("PropertyChanged \(Self.sink) Volume 0x5A5A", R(level: 90, muted: false)),
            // The louder channel; a mute is both channels' bit 7.
            ("PropertyChanged \(Self.sink) Volume 0x1E28", R(level: 40, muted: false)),
            ("PropertyChanged \(Self.sink) Volume 0x9E9E", R(level: 30, muted: true)),
            ("PropertyChanged \(Self.sink) Volume 0x9E1E", R(level: 30, muted: false)),
            ("PropertyChanged \(Self.sink) Volume 0xffff", R(level: 127, muted: true)),
            ("PropertyChanged \(Self.sink) Volume 0X1e1e", R(level: 30, muted: false)),
            ("PropertyChanged   \(Self.sink)  Volume   0x1E1E", R(level: 30, muted: false)),
            ("PropertyChanged /org/bluealsa/hci1/dev_aa_bb_cc_dd_ee_ff/a2dpsrc/sink Volume 0x1E1E", R(level: 30, muted: false)),
        ]
        for (line, expected) in rows { XCTAssertEqual(BluealsaVolume.parse(line, speaker: speaker), expected, line) }
    }

    func testOtherAndHostileLinesGiveNothing() {
        let huge = "PropertyChanged \(Self.sink) Volume 0x1E1E" + String(repeating: " ", count: 600)
        let rows: [String] = [
            "",
            "PCMAdded " + Self.sink,
            "PropertyChanged \(Self.sink) Running true",
            "PropertyChanged \(Self.sink) SoftVolume false",
            "PropertyChanged \(Self.sink) Volume",
            "PropertyChanged \(Self.sink) Volume 0x1E1E extra",
            "PropertyChanged \(Self.sink) Volume 1E1E",
            "PropertyChanged \(Self.sink) Volume 0x1E1",
            "PropertyChanged \(Self.sink) Volume 0x1E1E1",
            "PropertyChanged \(Self.sink) Volume 0xGGGG",
            "PropertyChanged \(Self.sink) Volume 0x-1E1",
            "PropertyChanged \(Self.sink) Volume 0x+1E1",
            "PropertyChanged \(Self.sink) Volume 0x\u{FF11}E1E",  // a fullwidth digit
            "PropertyChanged \(Self.sink) Volume 0x1E\u{0}E",
            "PropertyChanged \(Self.sink)\u{1B}[2J Volume 0x1E1E",
            "PropertyChanged \(Self.sink) Volume 0x1E1E\r",
            "PropertyChanged \(Self.sink)\tVolume 0x1E1E",
            "propertychanged \(Self.sink) Volume 0x1E1E",
            "PropertyChanged \(Self.sink) volume 0x1E1E",
            // Another speaker, the phone's PCM, another profile, a path outside bluez-alsa.
            "PropertyChanged /org/bluealsa/hci0/dev_11_22_33_44_55_66/a2dpsrc/sink Volume 0x1E1E",
            "PropertyChanged /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsnk/source Volume 0x1E1E",
            "PropertyChanged /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/hfpag/sink Volume 0x1E1E",
            "PropertyChanged /elsewhere/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink Volume 0x1E1E",
            "PropertyChanged /org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink/../../x/a2dpsrc/sink Volume 0x1E1E",
            "PropertyChanged /org/bluealsa/\u{7F}/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink Volume 0x1E1E",
            "PropertyChanged /org/bluealsa/é/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink Volume 0x1E1E",
            huge,
        ]
        for line in rows { XCTAssertNil(BluealsaVolume.parse(line, speaker: speaker), line.debugDescription) }
    }

    /// Random bytes, seeded: nothing crashes, and whatever parses is within 0–127.
    func testRandomLinesNeverCrash() {
        let seed = UInt64(ProcessInfo.processInfo.environment["JUKEBOX_BLUEALSA_VOLUME_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("BluealsaVolumeTests seed \(seed) (JUKEBOX_BLUEALSA_VOLUME_SEED repeats it)")
        var rng = SplitMix(seed)
        let pieces = ["PropertyChanged", " ", Self.sink, "Volume", "0x", "7F", "FF", "\u{0}", "\u{1B}", "é", "\n", "x"]
        for _ in 0..<5000 {
            let n = Int(rng.next() % 12)
            let line = (0..<n).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            if let r = BluealsaVolume.parse(line, speaker: speaker) { XCTAssertTrue((0...127).contains(r.level), line) }
        }
    }
}

/// A small seeded generator (SplitMix64) for the test above.
private struct SplitMix {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

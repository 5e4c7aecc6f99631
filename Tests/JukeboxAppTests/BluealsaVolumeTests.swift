// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxCore
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

    /// Seeded: every value of a well-formed line reads as bluez-alsa means it (each channel's
    /// bits 0–6 the level, bit 7 the mute); the same line with a character put in, taken out or
    /// replaced (controls, spaces, other digits, a non-ASCII letter) never crashes and never
    /// gives a level outside 0–127.
    func testRandomValuesAndDamagedLines() {
        let seed = UInt64(ProcessInfo.processInfo.environment["JUKEBOX_BLUEALSA_VOLUME_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("BluealsaVolumeTests seed \(seed) (JUKEBOX_BLUEALSA_VOLUME_SEED repeats it)")
        var rng = SeededGenerator(seed: seed)
        let damage: [Character] = ["\u{0}", "\u{1B}", "\n", " ", "\t", "F", "7", "x", "é", "\u{FF10}", "/"]
        for _ in 0..<3000 {
            let value = UInt16(truncatingIfNeeded: rng.next())
            let hex = String(value, radix: 16, uppercase: true)
            let line = "PropertyChanged \(Self.sink) Volume 0x" + String(repeating: "0", count: 4 - hex.count) + hex
            let first = Int(value >> 8), second = Int(value & 0xFF)
            let expected = BluealsaVolume.Report(level: max(first % 128, second % 128), muted: first >= 128 && second >= 128)
            XCTAssertEqual(BluealsaVolume.parse(line, speaker: speaker), expected, "\(line) (seed \(seed))")
            var chars = Array(line)
            let at = Int(rng.next() % UInt64(chars.count))
            switch rng.next() % 3 {
            case 0: chars.insert(damage[Int(rng.next() % UInt64(damage.count))], at: at)
            case 1: chars.remove(at: at)
            default: chars[at] = damage[Int(rng.next() % UInt64(damage.count))]
            }
            let damaged = String(chars)
            if let r = BluealsaVolume.parse(damaged, speaker: speaker) {
                XCTAssertTrue((0...127).contains(r.level), "\(damaged.debugDescription) (seed \(seed))")
            }
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// The speaker's volume from one line of `bluealsa-cli monitor --properties=Volume` (pure;
/// `BluetoothSpeakerSource` reads the lines). bluez-alsa 4.x's `utils/cli/cmd-monitor.c` prints
/// `PropertyChanged PATH Volume 0xHHLL` when a PCM's volume changes: four hex digits, the first
/// channel's byte then the second's, each with bit 7 the mute switch and bits 0–6 the level
/// 0–127. With the PCM's soft volume off that is the speaker's own (AVRCP absolute) volume.
public enum BluealsaVolume {
    /// What one line says of the speaker's volume.
    public struct Report: Equatable, Sendable {
        /// The louder channel's level, 0–127.
        public var level: Int
        /// Whether both channels are muted.
        public var muted: Bool
        public init(level: Int, muted: Bool) {
            self.level = level
            self.muted = muted
        }
    }

    /// The report of `line` when it is the speaker's (`speaker.isSpeaker`) volume; nil for any
    /// other line, another PCM's, or anything malformed (too long, control characters, a value
    /// that is not `0x` and four hex digits).
    public static func parse(_ line: String, speaker: BluealsaPresence) -> Report? {
        guard line.utf8.count <= BluealsaPresence.maxLine,
              line.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else { return nil }
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 4, words[0] == "PropertyChanged", words[2] == "Volume",
              speaker.isSpeaker(String(words[1])) else { return nil }
        let value = words[3]
        guard value.utf8.count == 6, value.hasPrefix("0x") || value.hasPrefix("0X"),
              value.dropFirst(2).allSatisfy(\.isHexDigit),
              let both = UInt16(value.dropFirst(2), radix: 16) else { return nil }
        let first = Int(both >> 8), second = Int(both & 0xFF)
        return Report(level: max(first & 0x7F, second & 0x7F), muted: first & 0x80 != 0 && second & 0x80 != 0)
    }

    /// The core's fact for a report.
    public static func event(_ report: Report) -> Event {
        .bluetoothVolume(level: report.level, muted: report.muted)
    }
}

// SPDX-License-Identifier: MIT

/// The kinds of display jukebox drives, by the names the config, `probe display` and
/// `probe replay-i2c` use: the one place these names are spelled.
public enum DisplayType: String, CaseIterable, Sendable {
    /// HD44780 character LCDs behind a PCF8574 I2C backpack.
    case hd44780x16x2 = "hd44780-16x2", hd44780x20x4 = "hd44780-20x4"
    /// 128×64 monochrome OLEDs (the SH1106 has a 132-column RAM, shifted by 2).
    case ssd1306, sh1106
    /// A simulated panel drawn in the terminal (the demo).
    case terminal

    /// The text grid the core lays frames out for.
    public var layout: PanelLayout {
        switch self {
        case .hd44780x16x2: .lcd16x2
        case .hd44780x20x4, .terminal: .lcd20x4
        case .ssd1306, .sh1106: .oled128x64
        }
    }

    /// The real panels (all but the simulated `terminal`).
    public static let panels: [DisplayType] = allCases.filter { $0 != .terminal }

    /// The names, quoted and joined for a message: `"a", "b" or "c"`.
    public static func quotedNames(_ types: [DisplayType] = allCases) -> String {
        let names = types.map { "\"\($0.rawValue)\"" }
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

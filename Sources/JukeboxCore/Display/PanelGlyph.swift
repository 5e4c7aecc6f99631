// SPDX-License-Identifier: MIT

/// The symbols every panel can show, as the characters the core writes into `DisplayFrame.rows`.
/// The OLED font draws all of them; the HD44780 loads those a frame uses into its 8 CGRAM slots
/// (`█` and `→ ←` come from its ROM and need no slot); beyond 8 distinct ones per frame it shows
/// the `fallback` letter.
public enum PanelGlyph: Character, Sendable, CaseIterable {
    case play = "▶"
    case pause = "⏸"
    case stop = "■"
    case shuffle = "🔀"
    case repeatAll = "🔁"
    case repeatOne = "🔂"
    case volume = "🔈"
    case note = "♪"
    /// Vertical bar levels ⅛…⅞ and full (volume or level meters).
    case bar1 = "▁", bar2 = "▂", bar3 = "▃", bar4 = "▄", bar5 = "▅", bar6 = "▆", bar7 = "▇"
    case full = "█"
    /// A left half block, for horizontal bars on character panels (`███▌`).
    case half = "▌"

    /// What a panel shows when it cannot draw the glyph.
    public var fallback: Character {
        switch self {
        case .play: ">"
        case .pause: "\""
        case .stop: "#"
        case .shuffle: "x"
        case .repeatAll: "@"
        case .repeatOne: "1"
        case .volume: "<"
        case .note: "*"
        case .bar1, .bar2, .bar3: "_"
        case .bar4, .bar5, .bar6, .bar7: "="
        case .full: "#"
        case .half: "|"
        }
    }
}

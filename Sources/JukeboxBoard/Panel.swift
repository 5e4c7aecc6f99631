// SPDX-License-Identifier: MIT

/// What one display shows, decided by the core: text rows of exactly `columns` characters (already
/// scrolled; glyphs written as the `PanelGlyph` characters), and for graphic panels an optional
/// progress bar. Drivers transliterate for their character set; a short row is padded with spaces,
/// a long one cut, missing rows are blank.
public struct PanelFrame: Sendable, Equatable {
    /// The text rows, top first.
    public var rows: [String]
    /// Graphic panels: a bar filled to this fraction (clamped to 0…1), drawn instead of the text of
    /// row `progressRow`. Character panels ignore it (draw bars with `█` and `▌` in the text).
    public var progress: Double?
    /// The text row the progress bar replaces; nil means the last row.
    public var progressRow: Int?

    /// Creates a frame.
    public init(rows: [String], progress: Double? = nil, progressRow: Int? = nil) {
        self.rows = rows
        self.progress = progress
        self.progressRow = progressRow
    }
}

/// A panel's text grid.
public struct PanelGeometry: Sendable, Equatable {
    /// Characters per row and rows.
    public var columns: Int
    public var rows: Int
    /// Whether the panel is a pixel panel (draws `PanelFrame.progress`).
    public var graphic: Bool

    public init(columns: Int, rows: Int, graphic: Bool) {
        self.columns = columns
        self.rows = rows
        self.graphic = graphic
    }

    /// HD44780 16x2, 20x4.
    public static let lcd16x2 = PanelGeometry(columns: 16, rows: 2, graphic: false)
    public static let lcd20x4 = PanelGeometry(columns: 20, rows: 4, graphic: false)
    /// SSD1306 / SH1106 128x64 with the built-in 6×8 font: 21 columns × 8 rows.
    public static let oled128x64 = PanelGeometry(columns: 21, rows: 8, graphic: true)
}

/// The symbols every panel can show, as the characters the core writes into `PanelFrame.rows`.
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

/// What a driver did with one call.
public enum PanelUpdate: Sendable, Equatable {
    /// The panel is being initialised; call again at or after `retryAt` (monotonic seconds).
    case initialising(retryAt: Double)
    /// The changes were sent: `bytes` payload bytes in `writes` I2C transactions.
    case sent(bytes: Int, writes: Int)
    /// The panel already showed the frame; nothing was sent.
    case unchanged
}

/// A display driver: turns frames into I2C writes, sending only what changed.
///
/// Contract: a call never sleeps more than about 0.2 ms itself (long waits are returned as
/// `.initialising(retryAt:)`); its I2C transfers take what the bus needs (≤ 12 ms for a full 16x2
/// at 100 kHz, ≤ 25 ms for a full OLED frame at 400 kHz). A write error marks the panel for a full
/// re-initialisation at the next call and is thrown. Not thread-safe: one owner.
public protocol PanelDriver: AnyObject {
    /// The text grid the frames should have.
    var geometry: PanelGeometry { get }
    /// Brings the panel towards showing `frame` at monotonic time `now` (seconds).
    func update(_ frame: PanelFrame, now: Double) throws(I2CError) -> PanelUpdate
    /// Forgets what the panel shows; the next `update` initialises it again and redraws everything.
    func invalidate()
}

extension PanelFrame {
    /// The rows padded or cut to `geometry`, as arrays of characters.
    func grid(_ geometry: PanelGeometry) -> [[Character]] {
        (0..<geometry.rows).map { index in
            var cells = index < rows.count ? Array(rows[index]) : []
            if cells.count > geometry.columns { cells.removeLast(cells.count - geometry.columns) }
            while cells.count < geometry.columns { cells.append(" ") }
            return cells
        }
    }
}

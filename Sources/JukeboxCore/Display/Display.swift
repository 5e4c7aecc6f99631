// SPDX-License-Identifier: MIT

/// The text grid of a panel: an HD44780 (16x2, 20x4) or a graphic OLED drawn as text rows.
public struct PanelLayout: Equatable, Sendable {
    /// Characters per row.
    public var columns: Int
    /// Rows of text.
    public var rows: Int
    /// Whether the panel can draw a progress bar under the text (OLED).
    public var graphic: Bool

    /// A layout.
    public init(columns: Int, rows: Int, graphic: Bool) {
        self.columns = columns
        self.rows = rows
        self.graphic = graphic
    }

    /// HD44780 16x2.
    public static let lcd16x2 = PanelLayout(columns: 16, rows: 2, graphic: false)
    /// HD44780 20x4.
    public static let lcd20x4 = PanelLayout(columns: 20, rows: 4, graphic: false)
    /// SSD1306/SH1106 128x64 with a 6x8 font.
    public static let oled128x64 = PanelLayout(columns: 21, rows: 8, graphic: true)
}

/// Exactly what a panel should show: `rows` strings of exactly `columns` characters (already
/// scrolled and padded; glyphs as the Unicode characters of `PanelGlyph`), and for
/// graphic panels a progress bar. The driver only draws it.
public struct DisplayFrame: Equatable, Sendable {
    /// The text, one string per row, each exactly as wide as the panel.
    public var rows: [String]
    /// Progress through the track, 0...1, for panels that draw a bar; nil for none.
    public var progress: Double?
    /// The row the progress bar replaces (graphic panels).
    public var progressRow: Int?

    /// A frame.
    public init(rows: [String], progress: Double? = nil, progressRow: Int? = nil) {
        self.rows = rows
        self.progress = progress
        self.progressRow = progressRow
    }

    /// Characters per second a too-long row scrolls by.
    public static let scrollSpeed = 3.0
    /// Seconds a too-long row rests at its start before scrolling.
    public static let scrollPause = 1.5

    /// What `state` looks like on a panel of `layout` at `state.now`.
    public static func make(_ state: State, layout: PanelLayout) -> DisplayFrame {
        var moving = false
        return make(state, layout: layout, moving: &moving)
    }

    /// Whether the frame for `state` changes with time alone: a row that scrolls, or the splash,
    /// the volume overlay or a message, which go when their time is up. While playing the time
    /// shown moves anyway. When nothing moves (paused or stopped, every row fits), the shell has
    /// no reason to wake for the panel until an event comes.
    public static func moves(_ state: State, layout: PanelLayout) -> Bool {
        var moving = false
        _ = make(state, layout: layout, moving: &moving)
        return moving
    }

    // `moving` is set when the frame depends on the time (see `moves`).
    static func make(_ state: State, layout: PanelLayout, moving: inout Bool) -> DisplayFrame {
        let w = layout.columns
        let now = state.now
        var lines: [String] = []
        var progress: Double?
        var progressRow: Int?
        let track = state.currentTrack

        if now < state.splashUntil {
            moving = true
            lines = ["jukebox", "starting…"]
        } else if now < state.volumeShownUntil {
            moving = true
            let filled = (state.volume * (w - 4) + 50) / 100
            lines = ["Volume", String(repeating: PanelGlyph.full.rawValue, count: filled) + String(repeating: " ", count: w - 4 - filled) + pad3(state.volume)]
        } else if now < state.setupNoticeUntil, let first = state.setupProblems.first {
            // The image's boot-time problems, a while after the splash: how many, and the first.
            moving = true
            lines = [SetupProblems.heading(state.setupProblems), scroll(first, width: w, since: state.setupNoticeSince, now: now, moving: &moving)]
        } else if case .waitingForDevice(let reason) = state.phase {
            // Why matters most to whoever stands in front of the box: small panels scroll it.
            lines = layout.rows <= 2
                ? ["Waiting: audio", scroll(reason, width: w, since: state.messageSince, now: now, moving: &moving)]
                : ["Waiting for", "audio device", scroll(reason, width: w, since: state.messageSince, now: now, moving: &moving)]
        } else if case .waitingForMusic = state.phase, let folder = state.musicMissing {
            let why = scroll("\(folder) is not there", width: w, since: state.messageSince, now: now, moving: &moving)
            lines = layout.rows <= 2 ? ["Waiting: music", why] : ["Waiting for", "music", why]
        } else if case .interrupted(let reason) = state.phase {
            // Another source: its name above, who sends below ("AirPlay" / "Anna's phone").
            if let source = state.interruptions.last?.source {
                let label = OtherSource.label(source)
                let sender = reason.hasPrefix(label + ": ") ? String(reason.dropFirst(label.count + 2)) : "playing"
                lines = [label, sender]
            } else {
                lines = ["Interrupted", reason]
            }
        } else if let wait = state.musicAwaited, state.queue.isEmpty {
            // A first start before its music: which folders it waits for, not just an empty queue.
            let folders = scroll(wait.folders.joined(separator: " "), width: w, since: state.messageSince, now: now, moving: &moving)
            lines = layout.rows <= 2 ? ["Waiting: music", folders] : ["Waiting for", "music", folders]
        } else if state.queue.isEmpty {
            lines = ["jukebox", "queue empty"]
        } else {
            let shown = state.shownCurrentInfo
            let title = shown?.title ?? state.queue[0].info.title
            let glyph: Character
            switch state.phase {
            case .playing: glyph = PanelGlyph.play.rawValue
            case .paused: glyph = PanelGlyph.pause.rawValue
            default: glyph = PanelGlyph.stop.rawValue
            }
            var marks = ""
            if state.shuffle { marks.append(PanelGlyph.shuffle.rawValue) }
            if state.repeatMode == .all { marks.append(PanelGlyph.repeatAll.rawValue) }
            if state.repeatMode == .one { marks.append(PanelGlyph.repeatOne.rawValue) }
            // A speed other than 1 (`1.25x`), after the sleep timer's mark.
            if let speed = state.playingSpeedMark { marks = speed + marks }
            if let sleep = state.sleepPanelMark { marks = sleep + marks }
            // A Bluetooth speaker plays (`BT`), first of the marks of the play.
            if state.output == .bluetooth { marks = "BT" + marks }
            // The day's listening left, near its end, before the other marks; kept alone when
            // they do not all fit (a 16x2 with a track of ten minutes or more).
            let limit = state.listeningPanelMark
            if let limit { marks = limit + marks }
            // The battery's level first, apart from the rest; when the row is full, only a low one
            // (after the limit's mark) is kept.
            let battery = state.batteryPanelMark
            if let battery { marks = marks.isEmpty ? battery : battery + " " + marks }
            let kept = limit ?? (state.batteryLowShown ? battery : nil)
            let times = TimeFormat.clock(track == nil ? nil : state.position) + "/" + TimeFormat.clock(track?.info.duration)
            let played = String(glyph) + " " + times
            let status = spread(played, played.count + marks.count < w ? marks : kept ?? marks, width: w)
            // A stream's buffering or reconnecting shows for as long as it lasts.
            let message = (now < state.messageUntil ? state.message : nil) ?? state.streamMessage
            if message != nil { moving = true }
            if layout.rows <= 2 {
                lines = [scroll(title, width: w, since: state.titleSince, now: now, moving: &moving), message.map { scroll($0, width: w, since: state.messageSince, now: now, moving: &moving) } ?? status]
            } else {
                lines = [scroll(title, width: w, since: state.titleSince, now: now, moving: &moving),
                         // An audiobook's chapter in place of its author (the album row keeps the book).
                         scroll(state.currentChapter?.chapter.title ?? shown?.artist ?? "", width: w, since: state.titleSince, now: now, moving: &moving)]
                if layout.rows >= 4 { lines.append(scroll(track?.info.album ?? "", width: w, since: state.titleSince, now: now, moving: &moving)) }
                if let message { lines.append(scroll(message, width: w, since: state.messageSince, now: now, moving: &moving)) }
                if layout.graphic, let duration = track?.info.duration, duration > 0 {
                    while lines.count < layout.rows - 3 { lines.append("") }
                    progressRow = lines.count
                    progress = min(1, max(0, state.position / duration))
                    lines.append("")
                }
                while lines.count < layout.rows - 1 { lines.append("") }
                lines.append(status)
                if layout.graphic { lines[lines.count - 1] = spread(String(glyph) + " " + times, marks + " " + pad3(state.volume), width: w) }
            }
        }
        let rows = (0..<layout.rows).map { i in i < lines.count ? fit(lines[i], width: w) : String(repeating: " ", count: w) }
        return DisplayFrame(rows: rows, progress: progress, progressRow: progressRow)
    }

    /// `text` made inert (`DisplayText.inert`), cut or padded to exactly `width` characters.
    public static func fit(_ text: String, width: Int) -> String {
        let text = DisplayText.inert(text)
        let count = text.count
        if count >= width { return String(text.prefix(width)) }
        return text + String(repeating: " ", count: width - count)
    }

    /// `left` and `right` at the two ends of a row of `width`.
    static func spread(_ left: String, _ right: String, width: Int) -> String {
        let gap = width - left.count - right.count
        if gap < 1 { return fit(left, width: width) }
        return left + String(repeating: " ", count: gap) + right
    }

    static func pad3(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, 3 - s.count)) + s
    }

    /// A row that fits stays put; a longer one rests, then scrolls as a loop (with a gap).
    static func scroll(_ text: String, width: Int, since: Double, now: Double, moving: inout Bool) -> String {
        let text = DisplayText.inert(text)  // before counting: `\r\n` is one Character, two replacements
        guard text.count > width else { return fit(text, width: width) }
        moving = true
        let loop = Array(text + "   ")
        let elapsed = now - since - scrollPause
        guard elapsed > 0 else { return fit(text, width: width) }
        let offset = Int(elapsed * scrollSpeed) % loop.count
        return String((0..<width).map { loop[(offset + $0) % loop.count] })
    }
}

// SPDX-License-Identifier: MIT

extension State {
    /// How often the shell sends `Event.tick`: while playing, four times a second when something
    /// shows the position as it moves (a panel, a terminal's status line: `showsTime`), else once a
    /// second (the heard position for the status and the periodic save); while paused or stopped,
    /// four times a second only while the panel's frame changes with time (scrolling text, an
    /// overlay or a message whose time runs out: `DisplayFrame.moves`). Nil: no ticks, the loop
    /// sleeps until an event or a timer that is really due.
    public func tickInterval(showsTime: Bool) -> Double? {
        if phase == .playing { return settings.display != nil || showsTime ? 0.25 : 1 }
        if let layout = settings.display, DisplayFrame.moves(self, layout: layout) { return 0.25 }
        return nil
    }

    /// While playing, when the periodic save falls due if no tick has looked since `lastTick` (nil
    /// once one has: if the core did not save then, e.g. the position did not move, the ticks go
    /// on as usual). The shell ticks exactly then, not up to a tick late.
    public func saveTickDue(lastTick: Double) -> Double? {
        guard phase == .playing else { return nil }
        return lastTick < placeSaveDue ? placeSaveDue : nil
    }
}

// SPDX-License-Identifier: MIT

extension State {
    /// How often the shell sends `Event.tick`: while playing, four times a second when something
    /// shows the position as it moves (a panel, a terminal's status line: `showsTime`); once a
    /// second when a tick must catch a moment nothing else reports (a parental rule's limit, warning
    /// or quiet hours; a stream's title and state, read on the tick); else only for the periodic
    /// save (`placeSaveSpacing`: whoever asks for the status or position gets the heard frame
    /// fresh, and a track's end, the sleep timer and every command come as events or timers).
    /// While paused or stopped, four times a second only while the panel's frame changes with time
    /// (scrolling text, an overlay or a message whose time runs out: `DisplayFrame.moves`). Nil: no
    /// ticks, the loop sleeps until an event or a timer that is really due.
    public func tickInterval(showsTime: Bool) -> Double? {
        if phase == .playing {
            if settings.display != nil || showsTime { return 0.25 }
            return ticksEachSecondWhilePlaying ? 1 : settings.placeSaveSpacing
        }
        if let layout = settings.display, DisplayFrame.moves(self, layout: layout) { return 0.25 }
        return nil
    }

    /// While playing, something only a tick a second notices in time: a parental rule (the daily
    /// limit counted and its warning, quiet hours beginning) or a stream (its title and state).
    var ticksEachSecondWhilePlaying: Bool {
        if !settings.parental.isEmpty { return true }
        guard let track = currentTrack else { return false }
        return Library.isStreamURL(track.info.path)
    }

    /// While playing, when the periodic save falls due if no tick has looked since `lastTick` (nil
    /// once one has: if the core did not save then, e.g. the position did not move, the ticks go
    /// on as usual). The shell ticks exactly then, not up to a tick late.
    public func saveTickDue(lastTick: Double) -> Double? {
        guard phase == .playing else { return nil }
        return lastTick < placeSaveDue ? placeSaveDue : nil
    }
}

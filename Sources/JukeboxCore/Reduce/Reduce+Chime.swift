// SPDX-License-Identifier: MIT

// Chimes: the start-up chime in front of the first playback (`startCurrent`), and a warning's
// chime in the middle of a track. Either is a play of its own; when it ends (or cannot sound) the
// track starts where it was (`engineReport`), and a play of the music meanwhile replaces it.
extension State {
    /// Plays `path` as the chime, the current track to start at `seconds` when it is over.
    mutating func startChime(_ path: String, thenAt seconds: Double, _ step: inout Step) {
        chimePlay = nextPlayID
        nextPlayID += 1
        afterChime = seconds
        loaded = nil
        handedNext = nil
        step.commands.append(.startTrack(playID: chimePlay!, path: path, at: 0, paused: false))
    }

    /// A warning's chime (`settings.warningChime`), only while a track plays: it stops where it was
    /// heard and goes on from there once the chime is over. Paused, stopped or waiting, a warning
    /// is its message only (a box that was quiet does not start sounding).
    mutating func warningChime(_ step: inout Step) {
        guard let chime = settings.warningChime, phase == .playing, chimePlay == nil, loaded != nil else { return }
        startChime(chime, thenAt: position, &step)
    }
}

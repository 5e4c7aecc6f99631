// SPDX-License-Identifier: MIT

/// Where the writer thread's stream stands, one explicit state instead of flags (a paused device,
/// a pause played out, an end whose reports wait, a linger deadline), with every transition a named
/// function. Pure: the writer (`AudioEngine+Writing.swift`) carries out what each one implies.
/// Whether the device is open is the output's own state (`AlsaStreamState`), not this one's.
enum WriterPhase: Equatable {
    /// Writing what the queue brings (or waiting for it).
    case writing
    /// The last track's end is written: its reports (`.finished`, and a failure after it) wait
    /// until the device has played it out (`finishIfDrained`), or until the next track continues.
    case ending
    /// Paused by the engine. `drained`: the held-back tail was faded out and played out, so the
    /// device holds nothing and is not paused (resuming just writes on, fading in); else the
    /// device itself is paused (`PCMOutput.pause`). `ending`: an end's reports still wait.
    case paused(drained: Bool, ending: Bool)
    /// The last track ended (or a play failed before writing): the device stays open until
    /// `until` (the engine's clock) for a play that follows at once, then is released.
    case lingering(until: Double)

    /// What resuming does with the device.
    enum Resume: Equatable {
        /// Not paused: nothing.
        case none
        /// The pause was played out: the next frames fade in.
        case fadeIn
        /// Resume the paused device (`PCMOutput.pause(false)`; when it cannot, the engine drops
        /// and decodes again from the frame heard).
        case resumeDevice
    }

    /// The engine is paused and the device holds or played out what was written.
    var isPaused: Bool {
        if case .paused = self { return true }
        return false
    }

    /// The last track's end was written and its reports wait.
    var endWritten: Bool {
        switch self {
        case .ending, .paused(_, ending: true): return true
        case .writing, .paused, .lingering: return false
        }
    }

    /// The deadline of the device kept open after an end, if lingering.
    var lingerUntil: Double? {
        if case .lingering(let until) = self { return until }
        return nil
    }

    /// A track's own end was written (its held-back tail out): its reports are held.
    mutating func wroteEnd() {
        switch self {
        case .paused(let drained, _): self = .paused(drained: drained, ending: true)
        case .writing, .ending, .lingering: self = .ending
        }
    }

    /// The held reports were sent (the next track continues the stream, or the end was played out).
    mutating func sentReports() {
        switch self {
        case .ending: self = .writing
        case .paused(let drained, _): self = .paused(drained: drained, ending: false)
        case .writing, .lingering: break
        }
    }

    /// The device was paused (`drained`: played out instead, see `paused`).
    mutating func paused(drained: Bool) {
        self = .paused(drained: drained, ending: endWritten)
    }

    /// The engine resumed: the writer writes on; returns what to do with the device.
    mutating func resumed() -> Resume {
        guard case .paused(let drained, let ending) = self else { return .none }
        self = ending ? .ending : .writing
        return drained ? .fadeIn : .resumeDevice
    }

    /// A stream was opened on the device: nothing of an earlier one is paused.
    mutating func openedDevice() {
        if case .paused(_, let ending) = self { self = ending ? .ending : .writing }
    }

    /// The stream was forgotten (flushed, ended, or the device lost): nothing paused, no report
    /// held. A linger already running goes on (see `stopLingering`).
    mutating func forgotStream() {
        if case .lingering = self { return }
        self = .writing
    }

    /// After an end (or a play that failed before writing): keep the device open until `until`;
    /// nil (no device open) lingers not at all.
    mutating func linger(until: Double?) {
        self = until.map { .lingering(until: $0) } ?? .writing
    }

    /// A flush: any linger is over (the device was released, or a play continues on it).
    mutating func stopLingering() {
        if case .lingering = self { self = .writing }
    }
}

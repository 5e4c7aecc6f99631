// SPDX-License-Identifier: MIT

/// The state of an `AlsaOutput`'s stream, and every transition of it (pure: the output carries
/// the actions out with libasound). As squeezelite's output states: one value says what the
/// stream is doing, instead of a handle that may be nil and a pause flag beside it.
enum AlsaStreamState: Equatable {
    /// No stream: nothing is open (`open` opens one; `probe` may try the device).
    case closed
    /// Prepared or running: writes go to the device.
    case open
    /// Paused: writes are refused until resume. `holding`: `snd_pcm_pause` holds the queued frames;
    /// else nothing was playing (not started yet, or underrun) and only writes are held.
    case paused(holding: Bool)

    /// What the output does with the device for a transition.
    enum Action: Equatable {
        /// Nothing: the state alone changed, or nothing changes.
        case none
        /// `snd_pcm_pause(on)`; when it succeeds, `pauseDone(on)` follows.
        case pauseDevice(Bool)
        /// The device cannot pause: throw `.unsupported` (the engine drops and rewrites).
        case refuse
    }

    /// Whether a stream is open (paused or not).
    var isOpen: Bool { self != .closed }

    /// Whether writes (and rewinds) go to the device now.
    var takesWrites: Bool { self == .open }

    /// A stream was opened and prepared (any stream before was closed first).
    mutating func opened() { self = .open }

    /// The stream was closed (or never opened).
    mutating func closed() { self = .closed }

    /// The queue was emptied (`snd_pcm_drop` or a finished drain) and the stream prepared again.
    mutating func emptied() {
        if isOpen { self = .open }
    }

    /// `pause(on)` was asked. `canPause`: the hardware parameters allow it; `running`: the device
    /// is running now (`SND_PCM_STATE_RUNNING`); `devicePaused`: it is paused now (`SND_PCM_STATE_PAUSED`).
    mutating func pause(_ on: Bool, canPause: Bool, running: Bool, devicePaused: Bool) -> Action {
        switch (self, on) {
        case (.closed, _), (.open, false), (.paused, true):
            return .none
        case (.open, true), (.paused, false):
            break
        }
        guard canPause else { return .refuse }
        if on && !running {
            self = .paused(holding: false)
            return .none
        }
        if !on && !devicePaused {
            self = .open
            return .none
        }
        return .pauseDevice(on)
    }

    /// `snd_pcm_pause(on)` succeeded (after it fails, the stream stays as it was).
    mutating func pauseDone(_ on: Bool) {
        self = on ? .paused(holding: true) : .open
    }

    /// A drain begins: a paused stream is resumed first (`snd_pcm_pause(0)`, its answer not
    /// needed: the drain reports a device that is gone), and is open from then on.
    mutating func draining() -> Action {
        guard case .paused = self else { return .none }
        self = .open
        return .pauseDevice(false)
    }
}

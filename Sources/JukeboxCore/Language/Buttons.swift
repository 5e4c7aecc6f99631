// SPDX-License-Identifier: MIT

/// A physical input line with a role: a button on the box, the rotary encoder's push, or the
/// mute wire from a car's phone kit.
public enum Button: String, Equatable, Hashable, Sendable, CaseIterable, Codable {
    /// Play/pause (long: stop).
    case play
    /// Next (hold: seek forward).
    case next
    /// Previous (hold: seek back).
    case previous
    /// Volume up (repeats while held).
    case volumeUp
    /// Volume down (repeats while held).
    case volumeDown
    /// Power (hold 3 s: run the power command; a tap: the sleep timer's next step).
    case power
    /// Stop.
    case stop
    /// Shuffle on/off.
    case shuffle
    /// Repeat mode.
    case repeatMode = "repeat"
    /// The rotary encoder's push button (play/pause).
    case encoderPush
    /// A signal line (e.g. a car phone kit's mute wire): while active, the player is interrupted.
    case mute
}

/// What a gesture does.
public enum ButtonAction: String, Equatable, Hashable, Sendable, CaseIterable, Codable {
    case togglePlay, play, pause, stop, next, previous, seekForward, seekBack
    case volumeUp, volumeDown, shuffle, cycleRepeat, power
    /// The sleep timer's next step: off → 15 → 30 → 60 min → off (`State.sleepSteps`).
    case sleep
}

/// Which gestures of one button do what. A button with a `long`, `hold` or `double` action
/// fires `tap` on release (a press might still become something else); otherwise `press`
/// fires the moment it goes down.
public struct ButtonBinding: Equatable, Sendable {
    /// Fires when the button goes down (lowest latency; cannot also have a chord).
    public var press: ButtonAction?
    /// Fires on release after a short press.
    public var tap: ButtonAction?
    /// Fires once when held for `longAfter` seconds.
    public var long: ButtonAction?
    /// Fires when held for `longAfter`, then every `repeatEvery` while still held.
    public var hold: ButtonAction?
    /// Fires on the second of two presses within `Settings.doublePressWindow`.
    public var double: ButtonAction?
    /// Seconds a press must last to count as long.
    public var longAfter: Double
    /// Seconds between hold repeats.
    public var repeatEvery: Double

    /// A binding; unspecified gestures do nothing.
    public init(press: ButtonAction? = nil, tap: ButtonAction? = nil, long: ButtonAction? = nil,
                hold: ButtonAction? = nil, double: ButtonAction? = nil, longAfter: Double = 0.8,
                repeatEvery: Double = 0.2) {
        self.press = press
        self.tap = tap
        self.long = long
        self.hold = hold
        self.double = double
        self.longAfter = longAfter
        self.repeatEvery = repeatEvery
    }

    /// The defaults of a jukebox box.
    public static let defaults: [Button: ButtonBinding] = [
        .play: ButtonBinding(tap: .togglePlay, long: .stop),
        .next: ButtonBinding(tap: .next, hold: .seekForward, repeatEvery: 0.3),
        .previous: ButtonBinding(tap: .previous, hold: .seekBack, repeatEvery: 0.3),
        .volumeUp: ButtonBinding(press: .volumeUp, hold: .volumeUp, longAfter: 0.5, repeatEvery: 0.15),
        .volumeDown: ButtonBinding(press: .volumeDown, hold: .volumeDown, longAfter: 0.5, repeatEvery: 0.15),
        .power: ButtonBinding(tap: .sleep, long: .power, longAfter: 3),
        .stop: ButtonBinding(press: .stop),
        .shuffle: ButtonBinding(press: .shuffle),
        .repeatMode: ButtonBinding(press: .cycleRepeat),
        .encoderPush: ButtonBinding(press: .togglePlay),
    ]
}

/// Two buttons pressed together do something of their own (and neither does its own gesture).
public struct Chord: Equatable, Sendable {
    /// One button.
    public var first: Button
    /// The other.
    public var second: Button
    /// What pressing both does.
    public var action: ButtonAction

    /// Creates a chord.
    public init(_ first: Button, _ second: Button, _ action: ButtonAction) {
        self.first = first
        self.second = second
        self.action = action
    }
}

/// One button as the core sees it.
public struct ButtonState: Equatable, Sendable {
    /// The debounced state.
    public var pressed = false
    /// The latest raw level reported.
    public var level = false
    /// Whether a bounce window is open (edges are only remembered).
    public var settling = false
    /// A long or hold action fired during this press.
    public var longFired = false
    /// A chord or double press used this press up.
    public var consumed = false
    /// A short press waits to see whether a second one follows.
    public var tapPending = false
    /// When the line's level was last read (the clock of the edges' kernel timestamps): edges
    /// stamped before it are already accounted for by that read.
    public var readAt: Double?

    /// A released button.
    public init() {}
}

/// A gesture a button made, as observers (the `events` stream, MQTT's device triggers) name it:
/// read from the core's button state before and after an event, so it is exactly what the core
/// decided (debounced, chords and doubles accounted for), whether or not an action is bound to it.
public struct ButtonGesture: Equatable, Sendable {
    /// The kinds of gesture.
    public enum Kind: String, Equatable, Sendable, CaseIterable {
        /// Released before its long press (every short press, the first of a double too).
        case short
        /// Held until its long or hold action fired (only buttons with one).
        case long
        /// Pressed again within the double-press window (only buttons with a double action).
        case double
    }
    /// The button.
    public var button: Button
    /// What it did.
    public var kind: Kind

    /// A gesture.
    public init(_ button: Button, _ kind: Kind) {
        self.button = button
        self.kind = kind
    }

    /// The gestures made between two states of the buttons (`State.buttons` before and after one
    /// event), in the order of `Button.allCases`. The mute line is a signal, not a button: none.
    public static func between(_ before: [Button: ButtonState], _ after: [Button: ButtonState]) -> [ButtonGesture] {
        var found: [ButtonGesture] = []
        for button in Button.allCases where button != .mute {
            let old = before[button] ?? ButtonState(), new = after[button] ?? ButtonState()
            if !old.pressed, new.pressed, old.tapPending, new.consumed { found.append(ButtonGesture(button, .double)) }
            if new.pressed, !old.longFired, new.longFired { found.append(ButtonGesture(button, .long)) }
            // `release` leaves the press's flags as they were: a release of a press that was
            // neither long nor used up by a chord or a double is a short press.
            if old.pressed, !new.pressed, !old.longFired, !old.consumed { found.append(ButtonGesture(button, .short)) }
        }
        return found
    }
}

/// The rotary encoder's decoder state.
public struct EncoderState: Equatable, Sendable {
    /// The last A/B levels (A is bit 1, B bit 0).
    public var ab: UInt8 = 0
    /// Valid quadrature steps not yet worth a detent (signed).
    public var steps = 0
    /// When the last detent was counted (for acceleration).
    public var lastDetentAt = -1.0

    /// A resting encoder.
    public init() {}
}

/// Linux input key codes the core maps (from linux/input-event-codes.h). A Bluetooth speaker's
/// buttons come from BlueZ's AVRCP input device (profiles/audio/avctp.c's `key_map`): PLAY as
/// KEY_PLAYCD (`playCD`), PAUSE as KEY_PAUSECD (`pause`), STOP as KEY_STOPCD, FORWARD and BACKWARD
/// as KEY_NEXTSONG and KEY_PREVIOUSSONG.
public enum MediaKey {
    public static let mute = 113, volumeDown = 114, volumeUp = 115, nextSong = 163, playPause = 164
    public static let previousSong = 165, stopCD = 166, rewind = 168, playCD = 200, pause = 201, play = 207
    public static let fastForward = 208

    /// Every key above, as remotes, keyboards, gpio-ir receivers (rc keymaps), BlueZ's AVRCP input
    /// device and gpio-keys overlays send them: an input device that can send any of them "has media
    /// keys" (the config's `"*"`).
    public static let all: [Int] = [playPause, play, playCD, pause, stopCD, nextSong, previousSong, volumeUp,
                                    volumeDown, fastForward, rewind, mute]
}

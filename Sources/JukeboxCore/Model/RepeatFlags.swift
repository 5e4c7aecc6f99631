// SPDX-License-Identifier: MIT

/// The three flags players such as MPD show for how a queue continues (`repeat`, `single`,
/// `consume`), over jukebox's one `RepeatMode`. The face parses and replies; what a flag change
/// means is decided here, so it is tested by a table (`RepeatFlagsTests`).
public enum RepeatFlag: Equatable, Sendable, CaseIterable {
    /// Start the queue again after its end.
    case `repeat`
    /// Only the current song: with repeat, repeat that song.
    case single
    /// Remove each song once played (jukebox has no such mode).
    case consume
}

/// The value asked for a flag: off, on, or MPD's "oneshot" (once, then off).
public enum RepeatFlagValue: Equatable, Sendable, CaseIterable {
    case off, on, oneshot
}

/// What setting a flag does to the repeat mode.
public enum RepeatFlagChange: Equatable, Sendable {
    /// Set the repeat mode to this one (asked even when it is the mode already).
    case set(RepeatMode)
    /// Nothing to change; the request succeeds.
    case unchanged
    /// jukebox has no such mode; the text names it ("single oneshot", "consume", …).
    case refused(String)
}

extension RepeatMode {
    /// The mode as the `repeat` and `single` flags: `all` is repeat, `one` is repeat with single
    /// ("repeat the current song"). `consume` is always off.
    public var flags: (repeat: Bool, single: Bool) {
        switch self {
        case .off: return (false, false)
        case .all: return (true, false)
        case .one: return (true, true)
        }
    }

    /// What setting `flag` to `value` does from this mode. What jukebox has no mode for is
    /// refused: single without repeat (stop after the song), single oneshot, and consume.
    /// Oneshot is only a value for `single` and `consume`; the face refuses it for `repeat`
    /// as a bad argument before asking.
    public func setting(_ flag: RepeatFlag, to value: RepeatFlagValue) -> RepeatFlagChange {
        let (rep, single) = flags
        switch (flag, value) {
        case (.repeat, .on), (.repeat, .oneshot): return .set(single ? .one : .all)
        case (.repeat, .off): return .set(.off)
        case (.single, .oneshot): return .refused("single oneshot")
        case (.single, .on): return rep ? .set(.one) : .refused("single-without-repeat (stop after the song)")
        case (.single, .off): return single ? .set(.all) : .unchanged
        case (.consume, .off): return .unchanged
        case (.consume, .on), (.consume, .oneshot): return .refused("consume")
        }
    }
}

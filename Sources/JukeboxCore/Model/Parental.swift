// SPDX-License-Identifier: MIT

/// The local date and time of day as the shell read them from the wall clock (`localtime_r`, so
/// the time zone and daylight saving time are the shell's fact): the core never converts.
public struct LocalTime: Equatable, Sendable {
    /// The local date as days since 1970-01-01 (a later date is a larger number).
    public var day: Int
    /// Minutes since local midnight, 0..<1440.
    public var minute: Int

    public init(day: Int, minute: Int) {
        self.day = day
        self.minute = minute
    }

    /// `HH:MM` of a minute of the day.
    public static func text(_ minute: Int) -> String {
        // In parts: Swift 6.0.3's type checker gives up on one long `+` with conditionals.
        let h: String = String(minute / 60), m: String = String(minute % 60)
        let hh: String = h.count < 2 ? "0" + h : h
        let mm: String = m.count < 2 ? "0" + m : m
        return hh + ":" + mm
    }
}

/// A span of the day in local minutes, `from` up to (not including) `to`; one with `from` after
/// `to` goes across midnight (19:30–07:00), one with `from == to` is the whole day.
public struct DayWindow: Equatable, Sendable {
    public var from: Int
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }

    /// Whether the local minute `minute` is inside.
    public func contains(_ minute: Int) -> Bool {
        if from == to { return true }
        return from < to ? (from..<to).contains(minute) : minute >= from || minute < to
    }
}

/// The config's `parental.quietHours`: in the window nothing starts but the tracks under
/// `folders`, and those at most at `volumeMax`.
public struct QuietHours: Equatable, Sendable {
    public var window: DayWindow
    /// Folders (absolute paths) whose tracks may still play (a lullaby folder); empty: none.
    public var folders: [String]
    /// The highest volume in quiet hours (what the folders play at); nil: the other caps only.
    public var volumeMax: Int?

    public init(window: DayWindow, folders: [String] = [], volumeMax: Int? = nil) {
        self.window = window
        self.folders = folders
        self.volumeMax = volumeMax
    }
}

/// Which output a volume cap holds: the speaker (headphones not in, or not known) or headphones.
public enum CapOutput: String, Equatable, Sendable, CaseIterable {
    case speaker, headphones
}

/// One of the config's `parental.caps`: the highest volume in a span of the day.
public struct VolumeCap: Equatable, Sendable {
    public var window: DayWindow
    public var volumeMax: Int
    /// The output it holds; nil: both.
    public var output: CapOutput?

    public init(window: DayWindow, volumeMax: Int, output: CapOutput? = nil) {
        self.window = window
        self.volumeMax = volumeMax
        self.output = output
    }
}

/// The config's `parental` section: rules a child cannot get around (`Reduce+Parental.swift`).
/// The empty value (the default) has no rule, and the wall clock is not even read.
public struct ParentalSettings: Equatable, Sendable {
    public var quietHours: QuietHours?
    /// The daily listening limit in seconds of sound (monotonic time while playing); nil: none.
    public var dailyLimit: Double?
    /// Seconds before the limit's end that a warning is given.
    public var warnBefore: Double = 300
    /// The local minute of the day at which a new listening day begins (06:00 = 360).
    public var resetAt: Int = 360
    public var caps: [VolumeCap] = []

    public init(quietHours: QuietHours? = nil, dailyLimit: Double? = nil, warnBefore: Double = 300, resetAt: Int = 360,
                caps: [VolumeCap] = []) {
        self.quietHours = quietHours
        self.dailyLimit = dailyLimit
        self.warnBefore = warnBefore
        self.resetAt = resetAt
        self.caps = caps
    }

    /// No rule at all.
    public var isEmpty: Bool { quietHours == nil && dailyLimit == nil && caps.isEmpty }
}

/// The daily limit's count: seconds of sound in the listening day `day` (saved with the place, so
/// a restart or a power cut does not give the day back).
public struct Listening: Equatable, Sendable, Codable {
    public var seconds: Double
    /// The listening day (`LocalTime.day` of the date it began on, after `resetAt`); nil: not
    /// known yet (the wall clock was never synchronised while counting).
    public var day: Int?

    public init(seconds: Double = 0, day: Int? = nil) {
        self.seconds = seconds
        self.day = day
    }
}

/// What the core knows of the wall clock and the count (`State.parental`).
public struct ParentalState: Equatable, Sendable {
    /// The local time last reported (`Event.wallClock`), trusted only while `clockSynchronized`.
    public var clock: LocalTime?
    /// Whether the kernel said the wall clock is synchronised (NTP, an RTC) at the last report.
    public var clockSynchronized = false
    public var listening = Listening()
    /// The monotonic time up to which playing was counted; nil while not playing (the first tick
    /// of a play starts the count).
    public var countedAt: Double?
    /// Whether the warning before the limit was given this listening day (or this run).
    public var warned = false
    /// The volume a person chose that a parental cap took away only because the time of day was
    /// not known (every cap holds then): given back once the clock is synchronised, as far as the
    /// caps that then hold allow, unless a person set the volume meanwhile. The state file keeps
    /// it as the volume, so a restart before the clock is synchronised does not lose it either.
    public var heldVolume: Int?

    public init() {}
}

// SPDX-License-Identifier: MIT

/// The wait before trying again something that failed or ended by itself (a child program, a
/// panel on a bus): `first`, then twice the last, up to `longest`; back to `first` after a
/// success, or after a run of at least `steady` seconds (a program that ran that long was
/// working, and its end is news, not a loop). Pure: the caller says when; one definition for
/// every adapter that starts something again.
public struct RetryBackoff: Equatable, Sendable {
    /// The first wait (seconds).
    public let first: Double
    /// The longest wait.
    public let longest: Double
    /// A run at least this long resets the wait to `first`; nil: only `succeeded()` does.
    public let steady: Double?
    /// The wait the next failure gets.
    public private(set) var next: Double
    private var startedAt: Double?

    /// `first` and `longest` are seconds, `longest` not below `first`.
    public init(first: Double = 1, longest: Double, steady: Double? = nil) {
        self.first = first
        self.longest = max(first, longest)
        self.steady = steady
        next = first
    }

    /// It worked: the next failure waits `first` again.
    public mutating func succeeded() {
        next = first
        startedAt = nil
    }

    /// It started at `now` (a run whose length `failed(at:)` weighs against `steady`).
    public mutating func started(at now: Double) { startedAt = now }

    /// It failed, or the run that started ended, at `now`: the seconds to wait before the next
    /// try. The wait after it doubles, up to `longest`.
    public mutating func failed(at now: Double) -> Double {
        if let steady, let startedAt, now - startedAt >= steady { next = first }
        startedAt = nil
        let wait = next
        next = min(next * 2, longest)
        return wait
    }
}

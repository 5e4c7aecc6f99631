// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// A panel's link to the runtime loop: throttles frames, retries a missing or failing panel with
/// back-off, and reports a failure and a recovery once each.
///
/// Frames given faster than `minInterval` are held; a newer frame replaces a held one (counted in
/// `framesDropped`), so the panel shows the latest frame at most once per `minInterval`. Every
/// `recheckInterval` the current frame is given to the driver again (nothing is sent when it is
/// already shown) so periodic re-initialisation and recovery happen while the screen is idle.
/// After an error the next attempt waits 1 s, doubling up to `maxBackoff`. No call blocks longer
/// than one driver update (see `PanelDriver`). Not thread-safe: the runtime loop owns it.
public final class DisplayLink {
    /// What the link knows about the panel.
    public enum State: Sendable, Equatable {
        /// Nothing sent successfully yet, no error either.
        case connecting
        case connected
        /// The last attempt failed with this error; retrying with back-off.
        case failed(DeviceError)
    }

    /// A change worth one log line.
    public enum Report: Sendable, Equatable {
        /// The panel stopped answering (or never did); later failures are only counted.
        case failed(DeviceError)
        /// It answers again after a failure.
        case recovered
    }

    public let driver: PanelDriver
    public let minInterval: Double
    public let maxBackoff: Double
    public let recheckInterval: Double
    public private(set) var state = State.connecting
    /// Failed attempts, frames the driver sent something for, frames replaced before being sent,
    /// and payload bytes written.
    public private(set) var errorCount = 0
    public private(set) var framesSent = 0
    public private(set) var framesDropped = 0
    public private(set) var bytesSent = 0

    private var current: DisplayFrame?
    private var pending = false
    private var lastUpdate = -Double.infinity
    private var initRetryAt: Double?
    private var retryAt: Double?
    private var backoff: RetryBackoff

    /// A link for `driver`; `minInterval` bounds the refresh rate (0.1 s suits an HD44780, 0.2 s
    /// an OLED at 100 kHz).
    public init(driver: PanelDriver, minInterval: Double = 0.1, maxBackoff: Double = 30, recheckInterval: Double = 1) {
        self.driver = driver
        self.minInterval = minInterval
        self.maxBackoff = maxBackoff
        self.recheckInterval = recheckInterval
        backoff = RetryBackoff(first: min(1, maxBackoff), longest: maxBackoff)
    }

    /// Takes the frame to show now or as soon as the throttle allows; returns a report when the
    /// panel failed or recovered.
    public func show(_ frame: DisplayFrame, now: Double) -> Report? {
        if frame == current, !pending { return tick(now: now) }
        if pending { framesDropped += 1 }
        current = frame
        pending = true
        return tick(now: now)
    }

    /// Does what is due at `now`; call it at `nextDeadline` (or on any loop tick).
    public func tick(now: Double) -> Report? {
        guard let frame = current else { return nil }
        if let retryAt, now < retryAt { return nil }
        if let initRetryAt, now < initRetryAt { return nil }
        let due = initRetryAt != nil || retryAt != nil
            || (pending && now >= lastUpdate + minInterval) || now >= lastUpdate + recheckInterval
        guard due else { return nil }
        do {
            let result = try driver.update(frame, now: now)
            retryAt = nil
            backoff.succeeded()
            var report: Report?
            if case .failed = state {
                report = .recovered
                state = .connecting
            }
            switch result {
            case .initialising(let at):
                initRetryAt = at
                return report
            case .sent(let bytes, _):
                framesSent += 1
                bytesSent += bytes
            case .unchanged:
                break
            }
            initRetryAt = nil
            pending = false
            lastUpdate = now
            state = .connected
            return report
        } catch {
            errorCount += 1
            initRetryAt = nil
            retryAt = now + backoff.failed(at: now)
            let first: Bool
            if case .failed = state { first = false } else { first = true }
            state = .failed(error)
            return first ? .failed(error) : nil
        }
    }

    /// When `tick` has something to do next (nil: nothing until the next `show`).
    public var nextDeadline: Double? {
        guard current != nil else { return nil }
        if let retryAt { return retryAt }
        if let initRetryAt { return initRetryAt }
        return pending ? lastUpdate + minInterval : lastUpdate + recheckInterval
    }
}

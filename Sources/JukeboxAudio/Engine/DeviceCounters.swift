// SPDX-License-Identifier: MIT

/// Device faults an output met and what became of them, counted over the output's lifetime
/// (across reopens). For diagnostics; nothing decides on them.
public struct DeviceCounters: Sendable, Equatable {
    /// Underruns (`-EPIPE`) met while writing, injected or real.
    public var xruns: Int
    /// Suspends (`-ESTRPIPE`) met while writing.
    public var suspends: Int
    /// Xruns and suspends recovered inside the output (the stream went on).
    public var recoveries: Int
    /// Times the device consumed nothing for the stall timeout (then treated as lost).
    public var stalls: Int
    /// Times a stream was lost while playing (unplugged, I/O error, failed recovery, stall).
    public var lost: Int

    /// Creates counters, all zero unless given.
    public init(xruns: Int = 0, suspends: Int = 0, recoveries: Int = 0, stalls: Int = 0, lost: Int = 0) {
        self.xruns = xruns
        self.suspends = suspends
        self.recoveries = recoveries
        self.stalls = stalls
        self.lost = lost
    }
}

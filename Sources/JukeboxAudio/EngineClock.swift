// SPDX-License-Identifier: MIT
import JukeboxSystem

/// The engine's files call the one monotonic clock (`JukeboxSystem.monotonicNow`) by this name.
/// (Kept as a name only, not a second clock reader; it can go once AudioEngine*.swift say
/// `monotonicNow()` themselves.)
@inline(__always)
func monotonicSeconds() -> Double { monotonicNow() }

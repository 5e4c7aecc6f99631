// SPDX-License-Identifier: MIT

/// A small deterministic generator (SplitMix64): the shell passes the seed in, so a shuffle is
/// reproducible in tests and the core never reads a source of randomness itself.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array {
    /// Fisher–Yates shuffle driven by `seed`: the same seed gives the same permutation.
    public func shuffled(seed: UInt64) -> [Element] {
        var result = self
        var rng = SeededGenerator(seed: seed)
        var i = result.count - 1
        while i > 0 {
            let j = Int(rng.next() % UInt64(i + 1))
            result.swapAt(i, j)
            i -= 1
        }
        return result
    }
}

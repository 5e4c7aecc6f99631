// SPDX-License-Identifier: MIT
import JukeboxCore

/// The fuzzer draws from the core's seeded generator (SplitMix64): the same seed gives the same run.
extension SeededGenerator {
    /// A number in 0..<n (n > 0).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
}

/// Mutations in the spirit of libFuzzer's: flips, interesting bytes, insertions, deletions,
/// copies, dictionary tokens and splices with another input.
enum Mutator {
    static func mutate(_ input: [UInt8], tokens: [String], other: [UInt8], maxLength: Int, _ random: inout SeededGenerator) -> [UInt8] {
        var data = input
        for _ in 0...random.below(4) {
            let at = data.isEmpty ? 0 : random.below(data.count + 1)
            switch random.below(9) {
            case 0 where !data.isEmpty:
                let i = random.below(data.count)
                data[i] ^= UInt8(1 << random.below(8))
            case 1 where !data.isEmpty:
                let interesting: [UInt8] = [0x00, 0x0A, 0x0D, 0x1B, 0x20, 0x22, 0x2C, 0x30, 0x39, 0x5B, 0x5C, 0x7B, 0x7F, 0x80, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]
                data[random.below(data.count)] = interesting[random.below(interesting.count)]
            case 2:
                data.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            case 3 where !data.isEmpty:
                let from = random.below(data.count)
                data.removeSubrange(from..<min(data.count, from + 1 + random.below(8)))
            case 4, 5:
                data.insert(contentsOf: Array(tokens[random.below(tokens.count)].utf8), at: at)
            case 6 where !data.isEmpty:
                let from = random.below(data.count)
                let piece = data[from..<min(data.count, from + 1 + random.below(32))]
                data.insert(contentsOf: Array(piece), at: at)
            case 7 where !other.isEmpty:
                let cut = random.below(other.count)
                data = Array(data.prefix(at)) + Array(other[cut...])
            case 8 where !data.isEmpty:
                // A run of one byte: long lines, deep nesting, long digit strings.
                data.insert(contentsOf: [UInt8](repeating: data[random.below(data.count)], count: 1 + random.below(1500)), at: at)
            default:
                data.append(UInt8(truncatingIfNeeded: random.next()))
            }
        }
        return Array(data.prefix(maxLength))
    }
}

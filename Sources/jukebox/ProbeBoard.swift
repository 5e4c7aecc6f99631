// SPDX-License-Identifier: MIT

/// The board probes (gpio, i2c, display, input); filled in with the board adapters.
enum ProbeBoard {
    static func run(_ what: String, _ args: [String]) throws(UsageError) -> Int32 {
        throw UsageError(message: "unknown probe '\(what)' (tone, gpio, i2c, display, input)")
    }
}

// SPDX-License-Identifier: MIT

/// Splits what a client sends into lines (LF, an optional CR before it dropped) of at most
/// `maxLength` bytes, for the control socket and the MPD listener. A longer line is reported
/// once, as nil, when it passes the bound, and the rest of it up to its newline is thrown away:
/// a client cannot make the loop hold more than `maxLength` bytes of it.
struct LineSplitter {
    /// Longest line kept, in bytes.
    let maxLength: Int
    private var partial: [UInt8] = []
    private var discarding = false

    /// Whether a line is begun and not finished (an over-long one being thrown away is not).
    var midLine: Bool { !partial.isEmpty }

    init(maxLength: Int) { self.maxLength = maxLength }

    /// Feeds bytes; `line` gets each complete line, or nil for one over `maxLength`.
    mutating func feed(_ bytes: ArraySlice<UInt8>, _ line: ([UInt8]?) -> Void) {
        for byte in bytes {
            if byte == 0x0A {
                if discarding {
                    discarding = false
                } else {
                    if partial.last == 0x0D { partial.removeLast() }
                    line(partial)
                }
                partial.removeAll(keepingCapacity: true)
            } else if !discarding {
                partial.append(byte)
                if partial.count > maxLength {
                    partial = []
                    discarding = true
                    line(nil)
                }
            }
        }
    }
}

// SPDX-License-Identifier: MIT

/// A file could not be opened, sought or decoded.
public struct DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file concerned, as given to the decoder.
    public var path: String
    /// Why, in words a person understands ("file is empty", "not a recognised audio format").
    public var reason: String

    /// Creates an error for `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// "`path`: `reason`".
    public var description: String { "\(path): \(reason)" }
}

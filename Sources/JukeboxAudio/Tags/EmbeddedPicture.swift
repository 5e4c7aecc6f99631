// SPDX-License-Identifier: MIT

/// A picture embedded in an audio file's tags (`TagReader.picture`).
public struct EmbeddedPicture: Equatable, Sendable {
    /// Its MIME type as the tag says (`image/jpeg`...; empty when it says none).
    public var mimeType: String
    /// The image file's bytes.
    public var bytes: [UInt8]

    /// Creates a picture.
    public init(mimeType: String, bytes: [UInt8]) {
        self.mimeType = mimeType
        self.bytes = bytes
    }
}

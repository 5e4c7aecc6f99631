// SPDX-License-Identifier: MIT

/// A station's playlist fetched from a URL (PLS or M3U, as radio directories hand them out): which
/// stream it names. Pure; `HTTPStream` fetches (bounded) and follows it.
public enum StreamPlaylist {
    /// The most bytes of a playlist read (a station's is a few hundred).
    public static let maxBytes = 64 << 10
    /// Playlists followed from one another, at most (a playlist naming a playlist…).
    public static let maxDepth = 3

    /// What a playlist says.
    public enum Reading: Equatable, Sendable {
        /// The first `http(s)://` entry.
        case stream(String)
        /// An HLS playlist (segments, not a stream): not played.
        case hls
        /// No `http(s)://` entry at all.
        case empty
    }

    /// Whether a response of this type (or, without a telling type, at a URL ending so) is a playlist.
    public static func isPlaylist(contentType: String?, url: String) -> Bool {
        switch contentType {
        case "audio/x-scpls", "audio/scpls", "application/pls+xml", "audio/x-mpegurl", "audio/mpegurl",
             "application/x-mpegurl", "application/vnd.apple.mpegurl":
            return true
        case nil, "", "text/plain", "application/octet-stream":
            let path = url.split(separator: "?", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            return path.hasSuffix(".pls") || path.hasSuffix(".m3u") || path.hasSuffix(".m3u8")
        default:
            return false
        }
    }

    /// Reads a PLS (`File1=URL`) or M3U (a URL per line, `#` lines aside) playlist.
    public static func read(_ bytes: [UInt8]) -> Reading {
        let text = String(decoding: bytes.prefix(maxBytes), as: UTF8.self)
        var firstStream: String?
        // "\r\n" is one Character in Swift: named, or CRLF playlists would be one long line.
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            var line = Substring(raw)
            while line.first == " " || line.first == "\t" || line.first == "\u{FEFF}" { line = line.dropFirst() }
            while line.last == " " || line.last == "\t" { line = line.dropLast() }
            if line.hasPrefix("#EXT-X-") { return .hls }
            if line.hasPrefix("#") || line.isEmpty { continue }
            // PLS: `FileN=URL`; M3U: the URL itself.
            var entry = line
            if line.lowercased().hasPrefix("file"), let equals = line.firstIndex(of: "=") {
                entry = line[line.index(after: equals)...]
            }
            let candidate = String(entry)
            let lower = candidate.lowercased()
            if firstStream == nil, lower.hasPrefix("http://") || lower.hasPrefix("https://"),
               !candidate.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
                firstStream = candidate
            }
        }
        return firstStream.map { .stream($0) } ?? .empty
    }
}

// SPDX-License-Identifier: MIT

/// The pure parts of the web face's covers (table-tested): which file of a folder is its cover,
/// what an image's bytes are, and the ETag of a cover.
public enum CoverImage {
    /// Cover file names in the order they are preferred (compared without case: `Folder.jpg`,
    /// `COVER.PNG` count). JPEG and PNG only: the page shows nothing else.
    public static let names = ["cover.jpg", "cover.jpeg", "cover.png", "folder.jpg", "folder.jpeg", "folder.png",
                               "front.jpg", "front.jpeg", "front.png", "album.jpg", "album.png", "albumart.jpg"]
    /// A larger image is refused (a mistaken "cover" would cost a Pi's memory and the Wi-Fi).
    public static let maxBytes = 4 << 20

    /// The name among `entries` (a folder's names) that is its cover, or nil.
    public static func choose(_ entries: [String]) -> String? {
        var byName: [String: String] = [:]
        for entry in entries where !entry.hasPrefix(".") {
            let lower = entry.lowercased()
            if names.contains(lower), byName[lower] == nil || entry < byName[lower]! { byName[lower] = entry }
        }
        return names.lazy.compactMap { byName[$0] }.first
    }

    /// The Content-Type of an image by its first bytes (never by its name or a tag's word):
    /// `image/jpeg` (FF D8 FF) or `image/png` (its 8-byte signature); nil for anything else.
    public static func sniff(_ bytes: [UInt8]) -> String? {
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return "image/jpeg" }
        if bytes.count >= 8, Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return "image/png" }
        return nil
    }

    /// A strong ETag for the bytes (FNV-1a, 64 bits, and the length).
    public static func etag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "-\(bytes.count)\""
    }

    /// Whether an If-None-Match header names `etag` (a list, or `*`).
    public static func matches(ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains { part in
            let tag = part.spaceTrimmed
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}

/// A radio station of the web face's list: a name and an `http(s)://` URL.
public struct Station: Equatable, Sendable, Codable {
    public var name: String
    public var url: String

    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}

/// The stations list (pure, table-tested): validation and its file, an extended M3U playlist
/// (`#EXTM3U`, then `#EXTINF:-1,NAME` and the URL for each station) that the player plays like any
/// playlist (`ctl load …/stations.m3u`: `next` goes to the next station) and a card can name.
public enum StationList {
    public static let maxStations = 200
    public static let maxName = 100
    /// A URL must stay one control line (`load URL`, 1024 bytes) with room to spare.
    public static let maxURL = 1000

    /// Why the station cannot be kept, or nil: a name of 1–100 characters and a URL of at most
    /// 1000 bytes, `http://` or `https://` with a host, both without control characters (a name
    /// or URL is one line of the file and of a control line); the URL without spaces.
    public static func problem(_ station: Station) -> String? {
        func hasControl(_ s: String) -> Bool {
            s.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value)
                || $0.value == 0x2028 || $0.value == 0x2029 }
        }
        let name = station.name.spaceTrimmed
        if name.isEmpty { return "a station needs a name" }
        if name.count > maxName { return "a station's name is at most \(maxName) characters" }
        if hasControl(station.name) { return "a station's name cannot hold control characters" }
        let url = station.url
        if url.utf8.count > maxURL { return "a station's URL is at most \(maxURL) bytes" }
        if hasControl(url) || url.contains(" ") { return "a station's URL cannot hold spaces or control characters" }
        let lower = url.lowercased()
        let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
        if scheme == 0 { return "a station's URL starts with http:// or https://" }
        let host = url.dropFirst(scheme).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if host.isEmpty || host.hasPrefix(":") || host.contains("@") { return "a station's URL names no host" }
        return nil
    }

    /// Why the list cannot be kept (the first problem, with the station's number), or nil.
    public static func problem(_ stations: [Station]) -> String? {
        if stations.count > maxStations { return "at most \(maxStations) stations" }
        for (i, station) in stations.enumerated() {
            if let problem = problem(station) { return "station \(i + 1): \(problem)" }
        }
        return nil
    }

    /// The file's text for a valid list.
    public static func m3u(_ stations: [Station]) -> String {
        "#EXTM3U\n" + stations.map { "#EXTINF:-1," + $0.name.spaceTrimmed + "\n" + $0.url + "\n" }.joined()
    }

    /// The stations of a file's text: each `http(s)` line, named by the `#EXTINF` line before it
    /// (else by the URL); what is not a valid station is left out; at most `maxStations`.
    public static func parse(_ text: String) -> [Station] {
        var stations: [Station] = []
        var name: String?
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = String(raw).spaceTrimmed
            if line.hasPrefix("#EXTINF:") {
                name = line.split(separator: ",", maxSplits: 1).dropFirst().first.map { String($0).spaceTrimmed }
                continue
            }
            if line.hasPrefix("#") || line.isEmpty { continue }
            let station = Station(name: name.flatMap { $0.isEmpty ? nil : $0 } ?? String(line.prefix(maxName)), url: line)
            name = nil
            if problem(station) == nil { stations.append(station) }
            if stations.count == maxStations { break }
        }
        return stations
    }
}

extension StringProtocol {
    /// The text without spaces and tabs at either end.
    var spaceTrimmed: String {
        guard let start = firstIndex(where: { $0 != " " && $0 != "\t" }), let end = lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(self[start...end])
    }
}

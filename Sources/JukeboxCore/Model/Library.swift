// SPDX-License-Identifier: MIT

/// Pure rules for turning files, folders and playlists into queue entries. The shell walks the
/// file system and reads tags; these functions decide what counts and in which order it plays.
public enum Library {
    /// File extensions the decoder plays (lowercase, no dot).
    public static let audioExtensions: Set<String> = [
        "wav", "wave", "aif", "aiff", "aifc", "flac", "ogg", "oga", "opus", "mp3", "m4a", "m4b", "mp4",
    ]

    /// Extensions read as M3U/M3U8 playlists.
    public static let playlistExtensions: Set<String> = ["m3u", "m3u8"]

    /// The longest URL taken into the queue (a URL is shown, saved and sent to libcurl).
    public static let maxURLLength = 2048

    /// Whether `path` is an HTTP(S) stream URL (by its scheme, any case) rather than a file: what
    /// the queue plays through the stream adapter. At most `maxURLLength` bytes, with a host, no
    /// spaces or control characters.
    public static func isStreamURL(_ path: String) -> Bool {
        let lower = path.prefix(8).lowercased()
        let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
        guard scheme > 0, path.utf8.count <= maxURLLength, path.utf8.count > scheme else { return false }
        return !path.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
            && path.utf8.dropFirst(scheme).first != UInt8(ascii: "/")
    }

    /// The queue entry of a stream URL before anything is known of it: the URL without its scheme as
    /// the title (the station's name and the current title come from the stream while it plays).
    public static func streamTrack(_ url: String) -> TrackInfo {
        let bare = url.drop { $0 != "/" }.drop { $0 == "/" }
        return TrackInfo(path: url, title: bare.isEmpty ? url : String(bare))
    }

    /// Whether a file name looks like audio jukebox can decode.
    public static func isAudio(_ path: String) -> Bool {
        audioExtensions.contains(Paths.fileExtension(path))
    }

    /// Whether a file name looks like a playlist.
    public static func isPlaylist(_ path: String) -> Bool {
        playlistExtensions.contains(Paths.fileExtension(path))
    }

    /// The play order of a folder's tracks: by disc number, then track number, then path
    /// (so sub-folders such as `CD1/`, `CD2/` keep their order when tags lack a disc number).
    /// Untagged numbers sort after tagged ones within the same folder level; names compare
    /// numerically (`2 x` before `10 x`).
    public static func folderOrder(_ tracks: [TrackInfo]) -> [TrackInfo] {
        tracks.sorted { a, b in
            let folderA = Paths.directory(a.path), folderB = Paths.directory(b.path)
            if folderA != folderB {
                // Disc tags win over folder names; without them the folder path decides.
                if let da = a.discNumber, let db = b.discNumber, da != db { return da < db }
                return naturalLess(folderA, folderB)
            }
            if a.discNumber != b.discNumber {
                return (a.discNumber ?? Int.max) < (b.discNumber ?? Int.max)
            }
            if a.trackNumber != b.trackNumber {
                return (a.trackNumber ?? Int.max) < (b.trackNumber ?? Int.max)
            }
            return naturalLess(Paths.fileName(a.path), Paths.fileName(b.path))
        }
    }

    /// Compares strings so that runs of digits compare as numbers ("track 2" < "track 10"),
    /// the rest case-insensitively by Unicode scalar; ties fall back to the exact strings.
    public static func naturalLess(_ a: String, _ b: String) -> Bool {
        let x = Array(a.lowercased().unicodeScalars), y = Array(b.lowercased().unicodeScalars)
        var i = 0, j = 0
        while i < x.count && j < y.count {
            let dx = x[i].properties.numericType == .decimal, dy = y[j].properties.numericType == .decimal
            if dx && dy {
                let si = i, sj = j
                while i < x.count && x[i].properties.numericType == .decimal { i += 1 }
                while j < y.count && y[j].properties.numericType == .decimal { j += 1 }
                let na = String(String.UnicodeScalarView(x[si..<i])).drop { $0 == "0" }
                let nb = String(String.UnicodeScalarView(y[sj..<j])).drop { $0 == "0" }
                if na.count != nb.count { return na.count < nb.count }
                if na != nb { return na < nb }
                continue
            }
            if x[i] != y[j] { return x[i].value < y[j].value }
            i += 1; j += 1
        }
        if x.count - i != y.count - j { return x.count - i < y.count - j }
        return a < b
    }

    /// The entries of an M3U or M3U8 playlist, resolved against the playlist's folder.
    /// Comment and directive lines (`#...`) and blank lines are skipped; a byte-order mark
    /// and CR line ends are tolerated; `file://` URLs become paths; `http://` and `https://` URLs
    /// (streams, `isStreamURL`) are kept as they are; other URLs are skipped.
    public static func parseM3U(_ text: String, playlistPath: String) -> [String] {
        let base = Paths.directory(playlistPath)
        var result: [String] = []
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            var line = Substring(rawLine)
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
            let entry = line.trimmingSpaces()
            if entry.isEmpty || entry.hasPrefix("#") { continue }
            if entry.hasPrefix("file://") {
                result.append(Paths.resolve(percentDecoded(String(entry.dropFirst(7))), against: base))
            } else if isStreamURL(entry) {
                result.append(entry)
            } else if entry.contains("://") {
                continue
            } else {
                result.append(Paths.resolve(entry.replacingBackslashes(), against: base))
            }
        }
        return result
    }

    static func percentDecoded(_ s: String) -> String {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "%"), it.count >= 2,
               let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v); it = it.dropFirst(2)
            } else {
                bytes.append(c)
            }
        }
        return losslessPath(bytes)
    }

    /// `bytes` of a file name as a path, losslessly: the same escape as JukeboxSystem's
    /// `FileSystemPath.string` (bytes not part of valid UTF-8, and those of a sequence for
    /// U+EF80…U+EFFF, become U+EF00 + byte), so a `file://` entry's `%E9` still names the file.
    static func losslessPath(_ bytes: [UInt8]) -> String {
        var out = String.UnicodeScalarView()
        var i = 0
        while i < bytes.count {
            var length = 0
            var value: UInt32 = 0
            switch bytes[i] {
            case 0x00...0x7F: length = 1; value = UInt32(bytes[i])
            case 0xC2...0xDF: length = 2; value = UInt32(bytes[i] & 0x1F)
            case 0xE0...0xEF: length = 3; value = UInt32(bytes[i] & 0x0F)
            case 0xF0...0xF4: length = 4; value = UInt32(bytes[i] & 0x07)
            default: break
            }
            var valid = length > 0 && i + length <= bytes.count
            if valid {
                for k in (i + 1)..<(i + length) where bytes[k] & 0xC0 != 0x80 { valid = false }
            }
            if valid {
                for k in (i + 1)..<(i + length) { value = value << 6 | UInt32(bytes[k] & 0x3F) }
                let minimum: UInt32 = [0, 0, 0x80, 0x800, 0x10000][length]
                valid = value >= minimum && value <= 0x10FFFF && !(0xD800...0xDFFF).contains(value)
                    && !DisplayText.isEscapedByte(Unicode.Scalar(value) ?? " ")
            }
            if valid, let scalar = Unicode.Scalar(value) {
                out.append(scalar)
                i += length
            } else if length > 1, i + length <= bytes.count, Unicode.Scalar(value).map(DisplayText.isEscapedByte) == true {
                for k in i..<(i + length) { out.append(Unicode.Scalar(0xEF00 + UInt32(bytes[k]))!) }
                i += length
            } else {
                out.append(Unicode.Scalar(0xEF00 + UInt32(bytes[i]))!)
                i += 1
            }
        }
        return String(out)
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    // Playlists written on Windows use backslashes.
    func replacingBackslashes() -> String {
        String(map { $0 == "\\" ? "/" : $0 })
    }
}

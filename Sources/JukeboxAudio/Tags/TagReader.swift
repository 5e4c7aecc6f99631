// SPDX-License-Identifier: MIT
import CSndfile
import CTagLib
import Glibc
import JukeboxSystem

/// Reads tags with TagLib's C API and the duration with libsndfile.
///
/// Must be called from one thread only: TagLib's C binding configures strings globally and is not
/// thread-safe. Never throws: an unreadable file yields empty tags (all nil).
public enum TagReader {
    /// Tags of the file at `path`. Title, artist, album and track number come from TagLib; the disc
    /// number from TagLib 2's property API when the installed library has it; the duration from
    /// libsndfile, which also supplies RIFF INFO / AIFF strings for each field TagLib left empty.
    public static func read(path: String) -> TrackTags {
        var tags = TrackTags()
        let taglibSeconds = readTagLib(path: path, into: &tags)
        if FileDecoder.isMP4(path) {
            readMP4(path: path, into: &tags)
        } else {
            readSndfile(path: path, taglibSeconds: taglibSeconds, into: &tags)
            tags.chapters = FileChapters.read(path: path).map { ($0.start, $0.title) }
        }
        tags.loudness = FileLoudness.read(path: path)
        return tags
    }

    /// An MP4 file's exact length (what `MP4Decoder` plays) and its chapters, from the container.
    private static func readMP4(path: String, into tags: inout TrackTags) {
        guard let file = try? MP4File(path: path), let movie = try? MP4Movie.read(file) else { return }
        let track = movie.track
        let span = track.audioSpan(outputRate: Int(track.timescale))
        let units = span.frames ?? max(0, Int64(clamping: track.table.duration) - span.skip)
        if track.timescale > 0 { tags.durationSeconds = Double(units) / Double(track.timescale) }
        tags.chapters = movie.chapters.map { ($0.start, TagText.clean($0.title)) }
    }

    /// The first picture embedded in the file at `path` (a cover in FLAC, ID3 or MP4 tags), nil
    /// when it has none or one over `limit` bytes, or when the installed TagLib cannot read
    /// pictures (its C API has them from TagLib 2: Debian 13, not Debian 12's 1.13).
    public static func picture(path: String, limit: Int) -> EmbeddedPicture? {
        taglib_set_strings_unicode(1)
        taglib_set_string_management_enabled(0)
        return withTagLibFile(path) { file in
            guard taglib_file_is_valid(file) != 0 else { return nil }
            return TagLibProperties.picture(file: UnsafeRawPointer(file), limit: limit)
        } ?? nil
    }

    /// Runs `body` with TagLib's file for `path`, opened through a descriptor that
    /// `openRegularFile` checked (a FIFO or device never reaches TagLib, whose read of one never
    /// ends); nil when it is not a regular file or TagLib cannot open it. TagLib's C API takes only
    /// a name and, before TagLib 2, picks the format by the name's extension alone, so it is given
    /// a link named `t.EXT` in a private folder (`mkdtemp`, mode 0700, in /dev/shm) to `/proc/self/fd/N`; where
    /// no such folder can be made, `/proc/self/fd/N` itself (TagLib 2 also detects by content).
    static func withTagLibFile<T>(_ path: String, _ body: (UnsafeMutablePointer<TagLib_File>) -> T) -> T? {
        guard let fd = try? openRegularFile(path) else { return nil }
        defer { close(fd) }
        let target = "/proc/self/fd/\(fd)"
        let last = path.split(separator: "/").last ?? ""
        let ext = last.contains(".") ? String(last.split(separator: ".").last ?? "").filter { $0.isASCII && ($0.isLetter || $0.isNumber) } : ""
        // /dev/shm first: a tmpfs everywhere, so a library scan writes nothing to an SD card.
        let tmp = isDirectory("/dev/shm") ? "/dev/shm"
            : getenv("TMPDIR").map { pathString(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var folder = cPath(tmp + "/jukebox-tags-XXXXXX")
        var name = target
        let made = mkdtemp(&folder) != nil
        let folderPath = made ? pathString(cString: folder) : ""
        if made, symlink(cPath(target), cPath(folderPath + "/t." + ext)) == 0 { name = folderPath + "/t." + ext }
        defer {
            if made {
                unlink(cPath(folderPath + "/t." + ext))
                rmdir(cPath(folderPath))
            }
        }
        guard let file = taglib_file_new(cPath(name)) else { return nil }
        defer { taglib_file_free(file) }
        return body(file)
    }

    /// Whether `picture(path:limit:)` can find anything with the installed TagLib.
    public static var readsPictures: Bool { TagLibProperties.readsPictures }

    /// Reads TagLib's tags into `tags`; returns TagLib's own length in whole seconds (0 unknown).
    @discardableResult
    private static func readTagLib(path: String, into tags: inout TrackTags) -> Int {
        // Caller-owned strings (freed with taglib_free), so nothing accumulates in TagLib's global list.
        taglib_set_strings_unicode(1)
        taglib_set_string_management_enabled(0)
        return withTagLibFile(path) { file -> Int in
            guard taglib_file_is_valid(file) != 0 else { return 0 }
            let seconds = taglib_file_audioproperties(file).map { Int(taglib_audioproperties_length($0)) } ?? 0
            guard let tag = taglib_file_tag(file) else { return seconds }
            tags.title = take(taglib_tag_title(tag))
            tags.artist = take(taglib_tag_artist(tag))
            tags.album = take(taglib_tag_album(tag))
            let track = taglib_tag_track(tag)
            tags.trackNumber = track > 0 ? Int(track) : nil
            tags.discNumber = TagLibProperties.discNumber(file: UnsafeRawPointer(file))
            return seconds
        } ?? 0
    }

    private static func readSndfile(path: String, taglibSeconds: Int, into tags: inout TrackTags) {
        var info = SF_INFO()
        guard let fd = try? openRegularFile(path) else { return }
        defer { close(fd) }
        // A copy libsndfile owns: it closes a descriptor whose open fails whatever close_desc
        // says, and with close_desc 1 `sf_close` closes it after a good open.
        guard let handle = sf_open_fd(dup(fd), Int32(SFM_READ), &info, 1) else { return }
        defer { sf_close(handle) }
        if info.samplerate > 0, info.frames >= 0, info.frames < Int64.max / 2 {
            var seconds = Double(info.frames) / Double(info.samplerate)
            if Int(info.format) & Int(SF_FORMAT_TYPEMASK) == Int(SF_FORMAT_MPEG) {
                seconds = mpegSeconds(seconds, path: path, taglibSeconds: taglibSeconds)
            }
            tags.durationSeconds = seconds
        }
        // Field by field: TagLib 2 reads a RIFF INFO title but not every INFO field libsndfile
        // writes (the track number), so a found title must not stop the fallback.
        if tags.title == nil { tags.title = sndfileString(handle, SF_STR_TITLE) }
        if tags.artist == nil { tags.artist = sndfileString(handle, SF_STR_ARTIST) }
        if tags.album == nil { tags.album = sndfileString(handle, SF_STR_ALBUM) }
        if tags.trackNumber == nil, let text = sndfileString(handle, SF_STR_TRACKNUMBER) {
            tags.trackNumber = leadingNumber(text)
        }
    }

    /// An MP3's length with its ID3v2 tag not counted as audio. Without a Xing/Info header
    /// libsndfile's length is libmpg123's estimate, the file's size over the bytes per frame,
    /// and that size includes an ID3v2 tag in front: a 50 MB picture made a 20 s MP3 last 55 min.
    /// The estimate scaled to the bytes after the tag is taken when it is nearer TagLib's length
    /// (whole seconds, the tag not counted) than libsndfile's own: an exact length (an Info
    /// header's frame count) is kept.
    static func mpegSeconds(_ seconds: Double, path: String, taglibSeconds: Int) -> Double {
        guard taglibSeconds > 0, let (tagBytes, fileBytes) = id3v2Size(path: path), tagBytes > 0, fileBytes > tagBytes else {
            return seconds
        }
        let scaled = seconds * Double(fileBytes - tagBytes) / Double(fileBytes)
        let taglib = Double(taglibSeconds)
        return abs(scaled - taglib) < abs(seconds - taglib) ? scaled : seconds
    }

    /// The size of the ID3v2 tag at the start of the file at `path` (its header and footer
    /// included) and the file's size; nil when it cannot be read. 0 when there is no tag.
    static func id3v2Size(path: String) -> (tag: Int, file: Int)? {
        guard let fd = try? openRegularFile(path) else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        var header = [UInt8](repeating: 0, count: 10)
        guard Glibc.read(fd, &header, 10) == 10 else { return (0, Int(status.st_size)) }
        guard header[0] == 0x49, header[1] == 0x44, header[2] == 0x33, header[6...9].allSatisfy({ $0 < 0x80 }) else {
            return (0, Int(status.st_size))
        }
        let size = header[6...9].reduce(0) { $0 << 7 | Int($1) }
        return (10 + size + (header[5] & 0x10 != 0 ? 10 : 0), Int(status.st_size))
    }

    private static func sndfileString(_ handle: OpaquePointer, _ kind: Int) -> String? {
        guard let raw = sf_get_string(handle, Int32(kind)) else { return nil }
        return nonEmpty(String(cString: raw))
    }

    private static func take(_ raw: UnsafeMutablePointer<CChar>?) -> String? {
        guard let raw else { return nil }
        defer { taglib_free(raw) }
        return nonEmpty(String(cString: raw))
    }

    /// A text tag as it enters: `TagText.field` (at most 200 characters, control characters
    /// dropped, spaces trimmed; nil when blank), the same cleaning as a stream's title.
    static func nonEmpty(_ text: String) -> String? {
        TagText.field(text.trimmingASCIIWhitespace())
    }

    /// The positive integer at the start of "3", "3/12" or " 03 "; nil otherwise.
    static func leadingNumber(_ text: String) -> Int? {
        let digits = text.trimmingASCIIWhitespace().prefix { $0.isASCII && $0.isNumber }
        guard let value = Int(digits), value > 0 else { return nil }
        return value
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\0" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}

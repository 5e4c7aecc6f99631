// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// A piece of a file: the whole file's size and the bytes from the asked offset.
public struct FileChunk: Equatable, Sendable {
    /// The file's size in bytes.
    public var size: Int
    /// The bytes read (at most the asked limit).
    public var bytes: [UInt8]

    /// Creates a chunk.
    public init(size: Int, bytes: [UInt8]) {
        self.size = size
        self.bytes = bytes
    }
}

/// `albumart`'s file side: the cover image next to a song, read a chunk at a time. It does I/O
/// and runs only on a `WorkerThread`, never on the loop.
public enum MPDCovers {
    /// `readpicture`'s reply for the embedded `picture` (MIME type and bytes; nil: none, an empty
    /// reply as MPD gives): `size`, `type` (when known, made inert) and the bytes from `offset`,
    /// at most `limit` of them. An offset past the end is MPD's "Bad file offset".
    public static func pictureChunk(_ picture: (type: String, bytes: [UInt8])?, offset: Int, limit: Int) -> FileWorkResult {
        guard let picture else { return .success(FileWorkOutput()) }
        guard offset >= 0, offset <= picture.bytes.count else { return .failure(MPDError(.arg, "Bad file offset")) }
        let chunk = Array(picture.bytes[offset..<min(picture.bytes.count, offset + max(0, limit))])
        let type = picture.type.isEmpty ? [] : ["type: \(DisplayText.inert(picture.type.prefix(100)))"]
        return .success(FileWorkOutput(lines: ["size: \(picture.bytes.count)"] + type, bytes: chunk))
    }

    /// The names looked for in the song's folder, in this order (MPD's own list starts the same).
    public static let names = ["cover.jpg", "cover.png", "cover.webp", "cover.jpeg", "folder.jpg", "folder.png"]
    /// Larger images are refused: a client asks for the whole file in chunks, and a mistaken
    /// multi-megabyte "cover" would only cost the board's memory and the network.
    public static let maxSize = 8 << 20

    /// The chunk at `offset` (at most `limit` bytes) of the cover of `uri` (a song or folder under
    /// one of `roots`). The URI is refused when it climbs out (`..`) or is absolute; the cover is
    /// refused when its real path (symlinks followed) is outside the real music folder.
    public static func read(uri: String, roots: [String], offset: Int, limit: Int) -> Result<FileChunk, MPDError> {
        let rel = MPDLibrary.normalized(uri)
        let parts = rel.split(separator: "/")
        guard !uri.hasPrefix("/"), !parts.contains(".."), !parts.contains(".") else { return .failure(MPDError(.arg, "Malformed URI")) }
        for root in roots {
            guard let realRoot = realPath(root) else { continue }
            let candidate = rel.isEmpty ? root : root + "/" + rel
            guard fileExists(candidate) else { continue }
            let folder = isDirectory(candidate) ? candidate : Paths.directory(candidate)
            for name in names {
                guard let real = realPath(folder + "/" + name) else { continue }
                guard real.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else { continue }
                return chunk(real, offset: offset, limit: limit)
            }
            return .failure(MPDError(.noExist, "No file exists"))
        }
        return .failure(MPDError(.noExist, "No file exists"))
    }

    /// `path` with every symlink, `.` and `..` resolved, or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let p = Glibc.realpath(cPath(path), nil) else { return nil }
        defer { free(p) }
        return pathString(cString: p)
    }

    /// Reads `limit` bytes at `offset` of the regular file `path` (already resolved).
    static func chunk(_ path: String, offset: Int, limit: Int) -> Result<FileChunk, MPDError> {
        guard let fd = try? openRegularFile(path, noFollow: true) else { return .failure(MPDError(.noExist, "No file exists")) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(MPDError(.noExist, "No file exists")) }
        let size = Int(st.st_size)
        guard size <= maxSize else { return .failure(MPDError(.system, "the cover is larger than \(maxSize >> 20) MiB")) }
        guard offset <= size else { return .failure(MPDError(.arg, "Bad file offset")) }
        var bytes = [UInt8](repeating: 0, count: min(limit, size - offset))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)
        return .success(FileChunk(size: size, bytes: bytes))
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// Turns the paths a person names (files, folders, M3U/M3U8 playlists) into queue entries.
/// Walking and tag reading are I/O, so they live here; what counts as audio and the order of a
/// folder are the core's rules (`Library`). Problems become messages, never failures.
public struct LibraryLoader {
    /// Reads one audio file's info (tags, duration); called on the caller's thread only.
    public var readInfo: (String) -> TrackInfo
    /// Deepest folder nesting followed (guards against link loops and runaway trees).
    public var maxDepth = 32

    /// A loader that reads tags with `readInfo`.
    public init(readInfo: @escaping (String) -> TrackInfo) {
        self.readInfo = readInfo
    }

    /// The file whose presence in a folder makes it an audiobook (`bookmarks: audiobooks`).
    public static let resumeMarker = ".jukebox-resume"

    /// Whether one of `paths` is a folder holding `resumeMarker`, or a playlist or file in one.
    public static func resumeMarked(_ paths: [String]) -> Bool {
        paths.prefix(Bookmark.maxPaths).contains { raw in
            let path = absolutePath(raw)
            let folder = isDirectory(path) ? path : Paths.directory(path)
            return fileExists(folder == "/" ? "/" + resumeMarker : folder + "/" + resumeMarker)
        }
    }

    /// The tracks named by `paths`, in order: folders sorted by the core's folder order,
    /// playlists in their own order, `http(s)://` URLs as streams (`Library.streamTrack`: nothing is
    /// fetched here; a URL that does not play is skipped with its reason when its turn comes).
    /// Messages name each path that could not be used and why.
    public func load(_ paths: [String]) -> (tracks: [TrackInfo], messages: [String]) {
        var tracks: [TrackInfo] = []
        var messages: [String] = []
        for raw in paths {
            if Library.isStreamURL(raw) {
                tracks.append(Library.streamTrack(raw))
                continue
            }
            if raw.lowercased().hasPrefix("http://") || raw.lowercased().hasPrefix("https://") {
                messages.append("not a usable URL (spaces, control characters, no host or over \(Library.maxURLLength) bytes): \(raw)")
                continue
            }
            let path = absolutePath(raw)
            if isDirectory(path) {
                var files: [String] = []
                var visited = ancestorIdentities(path)
                walk(path, depth: 0, into: &files, visited: &visited, messages: &messages)
                if files.isEmpty { messages.append("no audio files in \(path)") }
                tracks += Library.folderOrder(files.map(readNoting))
            } else if !fileExists(path) {
                messages.append("no such file or folder: \(path)")
            } else if fileKind(path) != .regular {
                messages.append("not a regular file: \(path)")
            } else if Library.isPlaylist(path) {
                tracks += playlist(path, messages: &messages)
            } else if Library.isAudio(path) {
                tracks.append(readNoting(path))
            } else {
                messages.append("not an audio file or playlist (by its name): \(path)")
            }
        }
        return (tracks, messages)
    }

    // A file's tags, read as progress of the job in hand (`JobRunner` bounds stalls, not length).
    private func readNoting(_ path: String) -> TrackInfo {
        JobProgress.note()
        return readInfo(path)
    }

    private func playlist(_ path: String, messages: inout [String]) -> [TrackInfo] {
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: 16 << 20) } catch {
            messages.append("cannot read playlist: \(error)")
            return []
        }
        var result: [TrackInfo] = []
        for entry in Library.parseM3U(FileSystemPath.string(bytes), playlistPath: path) {
            if Library.isStreamURL(entry) {
                result.append(Library.streamTrack(entry))
            } else if !fileExists(entry) {
                messages.append("playlist \(Paths.fileName(path)): no such file: \(entry)")
            } else if fileKind(entry) == .other {
                messages.append("playlist \(Paths.fileName(path)): not a regular file: \(entry)")
            } else if isDirectory(entry) {
                var files: [String] = []
                var visited = ancestorIdentities(entry)
                walk(entry, depth: 0, into: &files, visited: &visited, messages: &messages)
                result += Library.folderOrder(files.map(readNoting))
            } else {
                result.append(readNoting(entry))
            }
        }
        return result
    }

    private func walk(_ dir: String, depth: Int, into files: inout [String], visited: inout Set<String>,
                      messages: inout [String]) {
        guard let identity = fileIdentity(dir) else { return }
        guard depth <= maxDepth, visited.insert(identity).inserted else { return }
        let names: [String]
        do { names = try directoryEntries(dir) } catch {
            messages.append("cannot read folder: \(error)")
            return
        }
        for name in names where !name.hasPrefix(".") {
            JobProgress.note()
            let path = dir == "/" ? "/" + name : dir + "/" + name
            switch fileKind(path) {
            case .directory: walk(path, depth: depth + 1, into: &files, visited: &visited, messages: &messages)
            case .regular where Library.isAudio(path): files.append(path)
            case .other where Library.isAudio(path):
                messages.append("not a regular file: \(path)")  // a FIFO, socket or device: never opened
            default: break
            }
        }
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

extension SearchTagCache {
    /// The tracks of `files` (as `load` gives them: unreadable files left out, with messages), each
    /// read only when the cache has no tags for it at its present size and modification time. For
    /// `ls --json`: following a big folder's pages read every file's tags at each page (1,000 files,
    /// 13 pages: 13,000 reads, seconds each page on a busy box); now once, while a file that changed
    /// is read again and a new one shows at once (the folder itself is listed on every request).
    public func tracks(_ files: [String], load: ([String]) -> (tracks: [TrackInfo], messages: [String])) -> (tracks: [TrackInfo], messages: [String]) {
        var stamps: [String: Stamp] = [:]
        var known: [String: TrackInfo] = [:]
        var missing: [String] = []
        for file in files {
            var st = stat()
            guard stat(cPath(file), &st) == 0 else {
                missing.append(file)  // `load` says why it cannot be read
                continue
            }
            let stamp = Stamp(size: Int(st.st_size), seconds: Int(st.st_mtim.tv_sec), nanoseconds: Int(st.st_mtim.tv_nsec))
            stamps[file] = stamp
            if let (track, _) = get(file, stamp: stamp) { known[file] = track } else { missing.append(file) }
        }
        guard !missing.isEmpty else { return (files.compactMap { known[$0] }, []) }
        let read = load(missing)
        put(read.tracks, stamps: stamps)
        let asked = Set(files)
        for track in read.tracks { known[track.path] = track }
        // In the files' order; a track the loader named otherwise (never seen) is kept all the same.
        return (files.compactMap { known[$0] } + read.tracks.filter { !asked.contains($0.path) }, read.messages)
    }
}

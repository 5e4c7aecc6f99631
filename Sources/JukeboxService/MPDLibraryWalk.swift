// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// How an MPD library update is cut into tag reader requests: one per top-level folder, and one
/// for the audio files beside them. The tag reader serves requests in order, one at a time, so an
/// `add` asked during a long update waits for one folder (an artist, an album), not for the whole
/// library. Lists directories: runs on a `WorkerThread`, never on the loop.
public enum MPDLibraryWalk {
    /// The requests for `bases` (music folders, or folders or files under them): each folder's
    /// visible subfolders one by one, then its audio files together; an audio file as itself.
    /// What does not exist gives nothing (the update then removes it from the index).
    /// Playlists are left out: the loader would read their entries as tracks.
    public static func groups(_ bases: [String]) -> [[String]] {
        var groups: [[String]] = []
        for base in bases {
            if isDirectory(base) {
                let names = ((try? directoryEntries(base)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
                var files: [String] = []
                for name in names {
                    JobProgress.note()  // a stat per entry: progress, not a stall (`JobRunner`)
                    let path = base + "/" + name
                    if isDirectory(path) { groups.append([path]) } else if Library.isAudio(path) { files.append(path) }
                }
                if !files.isEmpty { groups.append(files) }
            } else if fileExists(base), Library.isAudio(base) {
                groups.append([base])
            }
        }
        return groups
    }
}

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
        // Folders already given (dev:inode, and every folder above a base): a link back to one
        // (`music/loop → music`) would list the same files again under another name.
        var seen = Set<String>()
        for base in bases {
            let kind = fileKind(base)
            if kind == .directory {
                seen.formUnion(ancestorIdentities(base))
                guard let id = fileIdentity(base), seen.insert(id).inserted else { continue }
                let names = ((try? directoryEntries(base)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
                var files: [String] = []
                for name in names {
                    JobProgress.note()  // a stat per entry: progress, not a stall (`JobRunner`)
                    let path = base + "/" + name
                    switch fileKind(path) {
                    case .directory:
                        if let id = fileIdentity(path), seen.insert(id).inserted { groups.append([path]) }
                    case .regular:
                        if Library.isAudio(path) { files.append(path) }
                    default: break  // a FIFO, socket or device is never opened
                    }
                }
                if !files.isEmpty { groups.append(files) }
            } else if kind == .regular, Library.isAudio(base) {
                groups.append([base])
            }
        }
        return groups
    }
}

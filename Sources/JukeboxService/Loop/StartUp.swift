// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// The facts a start (or a state file readable again) gives the core, from what the shell read
/// and looked at: the core decides what follows from them.
public enum StartUp {
    /// The events for a loaded state file, in order: that it cannot be read, or the music its
    /// current track lives in not being there, then the restore of a queue. An empty queue is
    /// restored only when `restoreEmpty` (its volume and modes still apply).
    public static func events(for loaded: StateStore.Loaded, restoreEmpty: Bool = true,
                              missingFolder: (String) -> String? = missingFolder(of:)) -> [Event] {
        if let reason = loaded.unreadable { return [.stateFileUnreadable(reason)] }
        guard let snapshot = loaded.snapshot, restoreEmpty || !snapshot.tracks.isEmpty else { return [] }
        let current = snapshot.current.map { snapshot.tracks[$0].path }
        return (current.flatMap(missingFolder).map { [.musicMissing($0)] } ?? []) + [.restore(snapshot)]
    }

    /// The outermost folder on the way to `file`'s folder that is not there (`/srv/music` for
    /// `/srv/music/Album/1.flac` before the stick is mounted), or nil when `file`'s folder is
    /// there (then a missing `file` itself is really gone, and skipped when it is reached). A stream
    /// URL has no folder: nil (a stream that fails is skipped with its reason).
    public static func missingFolder(of file: String) -> String? {
        if Library.isStreamURL(file) { return nil }
        var missing = Paths.directory(file)
        guard !isDirectory(missing) else { return nil }
        while true {
            let parent = Paths.directory(missing)
            if parent == missing || isDirectory(parent) { return missing }
            missing = parent
        }
    }
}

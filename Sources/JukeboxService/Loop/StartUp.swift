// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

/// The facts a start (or a state file readable again, or a failed play) gives the core, from
/// what the shell read and looked at: the core decides what follows from them.
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

    /// The bookmarks event for `store`'s bookmarks file, its problems logged; none when it cannot
    /// be read (then the core never saves over it).
    static func bookmarks(_ store: StateStore, limit: Int, log: Log) -> [Event] {
        let loaded = BookmarkFile.read(store.bookmarksPath, limit: limit)
        for line in loaded.messages { log.warning(line) }
        return loaded.bookmarks.map { [.bookmarksLoaded($0)] } ?? []
    }

    /// The events for a state file that could not be read, read again (`loaded`, off the loop:
    /// `StateFileWatch`): none while it still cannot; else the place it holds (which wins over
    /// what played meanwhile), then that saving resumes.
    static func readAgain(_ loaded: StateStore.Loaded, path: String, log: Log) -> [Event] {
        guard loaded.unreadable == nil else { return [] }
        for m in loaded.messages { log.warning(m) }
        log.info("the state file \(path) can be read again")
        return events(for: loaded, restoreEmpty: false) + [.stateFileUnreadable(nil)]
    }

    /// `event` with the facts a failed play carries about the current track's music (its stick,
    /// the folders above it) when it carries none yet: the core decides on them (`MissingMusic`).
    static func withFacts(_ event: Event, state: State, sources: [EventSource]) -> Event {
        guard case .trackFailed(let id, let reason, nil) = event, let track = state.currentTrack,
              let missing = missingMusic(of: track.info.path, sources: sources) else { return event }
        return .trackFailed(playID: id, reason: reason, missing: missing)
    }

    /// What the file system says of `file`'s music when its play failed: the stick holding it
    /// gone (asked of each `USBWatch` among `sources`), the outermost folder above it missing;
    /// nil when both are there. Facts only: what they mean is the core's (`MissingMusic`).
    public static func missingMusic(of file: String, sources: [EventSource]) -> MissingMusic? {
        let stick = sources.lazy.compactMap { ($0 as? USBWatch)?.goneStick(holding: file) }.first
        let folder = missingFolder(of: file)
        return stick == nil && folder == nil ? nil : MissingMusic(goneStick: stick, goneFolder: folder)
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

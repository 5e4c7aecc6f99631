// SPDX-License-Identifier: MIT

/// A start that had nothing saved to play and found nothing playable in the configured music
/// folders waits for music to arrive there (a partition, a share or a stick mounted late, files
/// copied or uploaded later): `State.musicAwaited`. The wait is the start's only: it ends when the
/// music comes (`Event.musicFound` with tracks) or when a person changes the queue first.
public struct MusicWait: Equatable, Sendable {
    /// The folders (or files) the config names, as the start read them.
    public var folders: [String]
    /// `State.queueRevision` when the wait began: another one means a person loaded, added or
    /// cleared meanwhile, and what arrives then changes nothing.
    public var queueRevision: Int

    public init(folders: [String], queueRevision: Int) {
        self.folders = folders
        self.queueRevision = queueRevision
    }
}

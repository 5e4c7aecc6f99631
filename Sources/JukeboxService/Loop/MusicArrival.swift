// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// What the loop knows of the folders a start waits for music in (`State.awaitedMusicFolders`):
/// how they looked when last handed to a read, and whether that read is under way. The loop
/// looks at them once a second with one stat each: a mount that arrived changes the device and
/// the inode, entries added change the folder's time. Reading them (readdir, tags) is the tag
/// reader's, never the loop's; what the tracks mean is the core's (`Event.musicFound`).
struct MusicArrival {
    /// A folder as stat(2) gives it (after links); nil where there is nothing to stat.
    struct Mark: Equatable {
        var device: UInt64
        var inode: UInt64
        var seconds: Int
        var nanoseconds: Int
    }

    /// The folders and their marks when the last read was handed over; nil before the first.
    private var seen: [String: Mark?]?
    /// A read is under way: no other is started, and the marks stay those it was started with,
    /// so a change while it reads is found by the next look.
    private(set) var reading = false

    /// `path`'s mark now; nil when it cannot be stat'ed (not there yet, a dangling link).
    static func mark(_ path: String) -> Mark? {
        var st = stat()
        guard stat(cPath(path), &st) == 0 else { return nil }
        return Mark(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), seconds: Int(st.st_mtim.tv_sec),
                    nanoseconds: Int(st.st_mtim.tv_nsec))
    }

    /// Whether `folders` must be read now: no read is under way and they look other than when
    /// the last read was handed over. The first look always reads (the start's own read came
    /// before it, and a file added in between would otherwise never be seen). When true the
    /// marks are kept and a read counts as under way until `finished`.
    mutating func due(_ folders: [String], mark: (String) -> Mark? = MusicArrival.mark) -> Bool {
        guard !reading else { return false }
        var now: [String: Mark?] = [:]
        for folder in folders { now[folder] = .some(mark(folder)) }
        guard seen != now else { return false }
        seen = now
        reading = true
        return true
    }

    /// The read handed over by `due` came back (or could not be started).
    mutating func finished() { reading = false }
}

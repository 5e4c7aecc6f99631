// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// What the loop knows of the folders a start waits for music in (`State.awaitedMusicFolders`):
/// how they looked when last handed to a read, and whether a look or a read is under way. They
/// are looked at once a second with one stat each (`MusicWatch`, on the tag reader's thread): a
/// mount that arrived changes the device and the inode, entries added change the folder's time
/// (and, while nothing playable is there, the time of the folders inside them: an album's folder
/// copied in before its files). Reading them (readdir, tags) is the tag reader's too, never the
/// loop's; what the tracks mean is the core's (`Event.musicFound`).
struct MusicArrival {
    /// A folder as stat(2) gives it (after links); nil where there is nothing to stat.
    struct Mark: Equatable {
        var device: UInt64
        var inode: UInt64
        var seconds: Int
        var nanoseconds: Int
        /// A folder (a stick's mount point must be one to be there).
        var directory = true
    }

    /// The folders and their marks when the last read was handed over; nil before the first.
    private var seen: [String: Mark?]?
    /// The folders found inside them by the last read that found nothing to play
    /// (`subfolders(of:)`): looked at too, since files copied into an album's folder made
    /// before that read change its time, not the top folder's.
    private var inside: [String] = []
    /// A look or a read is under way: no other is started, and the marks stay those the read
    /// was started with, so a change while it reads is found by the next look.
    private(set) var busy = false

    /// `path`'s mark now; nil when it cannot be stat'ed (not there yet, a dangling link).
    static func mark(_ path: String) -> Mark? {
        var st = stat()
        guard stat(cPath(path), &st) == 0 else { return nil }
        return Mark(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), seconds: Int(st.st_mtim.tv_sec),
                    nanoseconds: Int(st.st_mtim.tv_nsec), directory: st.st_mode & S_IFMT == S_IFDIR)
    }

    /// The paths to stat for a look at `folders` (they and the folders found inside), or nil
    /// while a look or a read is under way; a look counts as under way until `looked`.
    mutating func lookStarted(_ folders: [String]) -> [String]? {
        guard !busy else { return nil }
        busy = true
        return folders + inside
    }

    /// What the look found (each path with its mark): whether the folders must be read now, i.e.
    /// they look other than when the last read was handed over. The first look always reads (the
    /// start's own read came before it, and a file added in between would otherwise never be
    /// seen). When true the marks are kept and a read counts as under way until `finished`; nil
    /// marks (the look was given up) read nothing and change nothing.
    mutating func looked(_ marks: [(path: String, mark: Mark?)]?) -> Bool {
        guard let marks else {
            busy = false
            return false
        }
        var now: [String: Mark?] = [:]
        for (path, mark) in marks { now[path] = .some(mark) }
        guard seen != now else {
            busy = false
            return false
        }
        seen = now
        return true
    }

    /// The read handed over by `looked` came back (or could not be started), with the folders it
    /// found inside (none when it found music: the wait is over). Folders new to the look make
    /// the next one read again, with their marks from then on. A read `gaveUp` (a share that
    /// stopped answering under it) read nothing: the next look reads again even if the folders
    /// look the same, or music there before the share came back would never be read.
    mutating func finished(inside folders: [String] = [], gaveUp: Bool = false) {
        busy = false
        inside = folders
        if gaveUp { seen = nil }
    }

    /// How many folders inside the awaited ones are looked at, at most, and how deep: a stat
    /// each a second stays cheap.
    static let insideLimit = 64, insideDepth = 3

    /// The folders inside `folders`, breadth first, in name order, hidden ones left out, at most
    /// `insideLimit` of them and `insideDepth` levels down. Reads directories: the tag reader's
    /// thread only, never the loop.
    static func subfolders(of folders: [String]) -> [String] {
        var found: [String] = [], level = folders
        for _ in 0..<insideDepth {
            var next: [String] = []
            for folder in level {
                guard let names = try? directoryEntries(folder) else { continue }
                for name in names.sorted() where !name.hasPrefix(".") {
                    let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
                    guard fileKind(path) == .directory else { continue }
                    guard found.count < insideLimit else { return found }
                    found.append(path)
                    next.append(path)
                }
            }
            level = next
        }
        return found
    }
}

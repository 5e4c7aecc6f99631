// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// What the loop knows of the folders a start waits for music in (`State.awaitedMusicFolders`):
/// how they looked when last handed to a read, and whether that read is under way. The loop
/// looks at them once a second with one stat each: a mount that arrived changes the device and
/// the inode, entries added change the folder's time (and, while nothing playable is there, the
/// time of the folders inside them: an album's folder copied in before its files). Reading them (readdir, tags) is the tag
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
    /// The folders found inside them by the last read that found nothing to play
    /// (`subfolders(of:)`): looked at too, since files copied into an album's folder made
    /// before that read change its time, not the top folder's.
    private var inside: [String] = []
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
        for folder in folders + inside { now[folder] = .some(mark(folder)) }
        guard seen != now else { return false }
        seen = now
        reading = true
        return true
    }

    /// The read handed over by `due` came back (or could not be started), with the folders it
    /// found inside (none when it found music: the wait is over). Folders new to the look make
    /// the next one read again, with their marks from then on.
    mutating func finished(inside folders: [String] = []) {
        reading = false
        inside = folders
    }

    /// How many folders inside the awaited ones are looked at, at most, and how deep: a stat
    /// each a second on the loop stays cheap.
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

/// The folders a read found inside the awaited ones, handed from the tag reader's thread to the
/// loop with its result (the mailbox orders the two).
final class FoldersInside: @unchecked Sendable {
    var paths: [String] = []
}

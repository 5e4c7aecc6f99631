// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// A stick's audio files in play order, listed before any tag is read (a listing of 20,000 files
/// is a fraction of a second; reading their tags is many seconds), so its first folder can play
/// while the rest is read.
public enum USBScan {
    /// The deepest folder level walked.
    static let maxDepth = 16

    /// The audio files under `root` grouped by folder, folders in the natural order of their
    /// paths (the order `Library.folderOrder` gives untagged folders), hidden names skipped.
    public static func folders(_ root: String) -> [(folder: String, files: [String])] {
        var byFolder: [String: [String]] = [:]
        var visited = Set<String>()
        walk(root, depth: 0, into: &byFolder, visited: &visited)
        return byFolder.keys.sorted(by: Library.naturalLess).map { ($0, byFolder[$0]!) }
    }

    /// The files of the first part to read: the first folder, or every folder through the one
    /// holding `bookmarked` (so the stick resumes there at once); and the rest.
    public static func split(_ folders: [(folder: String, files: [String])], through bookmarked: String?) -> (first: [String], rest: [String]) {
        guard !folders.isEmpty else { return ([], []) }
        var end = 1
        if let bookmarked, let at = folders.firstIndex(where: { $0.folder == Paths.directory(bookmarked) }) { end = at + 1 }
        return (folders[..<end].flatMap { $0.files }, folders[end...].flatMap { $0.files })
    }

    private static func walk(_ dir: String, depth: Int, into byFolder: inout [String: [String]], visited: inout Set<String>) {
        var st = stat()
        guard depth <= maxDepth, stat(cPath(dir), &st) == 0, visited.insert("\(st.st_dev):\(st.st_ino)").inserted,
              let names = try? directoryEntries(dir) else { return }
        for name in names where !name.hasPrefix(".") {
            let path = dir.hasSuffix("/") ? dir + name : dir + "/" + name
            let kind = fileKind(path)
            if kind == .directory {
                walk(path, depth: depth + 1, into: &byFolder, visited: &visited)
            } else if kind == .regular, Library.isAudio(path) {
                byFolder[dir, default: []].append(path)
            }
        }
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// The measured loudness of untagged files, kept in one small text file beside the state file
/// (`STATE.loudness`) so that each file is scanned once: keyed by path, size and modification
/// time (a file changed is measured again), at most `limit` entries (the oldest dropped).
///
/// The file: a first line `jukebox-loudness 1`, then one entry a line,
/// `GAIN<TAB>PEAK<TAB>SIZE<TAB>MTIME-NS<TAB>PATH` (gain in dB, peak linear). Paths holding a tab,
/// a newline or a NUL are not kept. Read whole at start, written whole and atomically
/// (`writeAtomically`) off the loop; a damaged file is ignored (the caller logs the reason), never fatal.
public struct LoudnessCache: Equatable, Sendable {
    /// What identifies a file's content well enough: where it is, how big, when last written.
    public struct Key: Hashable, Sendable {
        public var path: String
        public var size: Int64
        public var mtime: Int64

        public init(path: String, size: Int64, mtime: Int64) {
            self.path = path
            self.size = size
            self.mtime = mtime
        }

        /// The key of the file at `path` now (nil when it is not a regular file).
        public static func of(_ path: String) -> Key? {
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return Key(path: path, size: Int64(st.st_size), mtime: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
        }
    }

    /// The most entries kept.
    public static let limit = 20_000
    /// The largest file read (20,000 entries of long paths fit easily).
    static let maxBytes = 16 << 20
    static let header = "jukebox-loudness 1"

    /// Track gain (dB) and peak by key.
    public private(set) var entries: [Key: Loudness] = [:]
    /// Keys oldest first.
    private var order: [Key] = []
    /// Each path's key (one entry a path).
    private var keys: [String: Key] = [:]
    /// The most entries this cache keeps.
    public let capacity: Int

    /// An empty cache.
    public init(capacity: Int = LoudnessCache.limit) { self.capacity = max(1, capacity) }

    /// The measurement of `key`, if kept.
    public subscript(key: Key) -> Loudness? { entries[key] }

    /// Keeps `loudness` for `key` (replacing an entry of the same path), dropping the oldest past `capacity`.
    public mutating func insert(_ loudness: Loudness, for key: Key) {
        guard !key.path.utf8.contains(where: { $0 == 9 || $0 == 10 || $0 == 0 }), loudness.trackGain?.isFinite == true else { return }
        if let old = keys[key.path] {
            entries[old] = nil
            order.removeAll { $0 == old }
        }
        entries[key] = loudness
        keys[key.path] = key
        order.append(key)
        if order.count > capacity {
            let dropped = order.count - capacity
            for old in order.prefix(dropped) {
                entries[old] = nil
                keys[old.path] = nil
            }
            order.removeFirst(dropped)
        }
    }

    /// The file's text.
    public var text: String {
        var lines = [Self.header]
        for key in order {
            guard let l = entries[key], let gain = l.trackGain else { continue }
            lines.append("\(gain)\t\(l.trackPeak ?? 0)\t\(key.size)\t\(key.mtime)\t\(key.path)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads `text`; throws a reason when it is not a cache file or a line is damaged.
    public static func parse(_ text: String, capacity: Int = LoudnessCache.limit) throws(LoudnessFailure) -> LoudnessCache {
        var cache = LoudnessCache(capacity: capacity)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        guard lines.first == Substring(header) else { throw LoudnessFailure(reason: "not a loudness cache (first line)") }
        for (number, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, let gain = Double(fields[0]), gain.isFinite, (-60...30).contains(gain),
                  let peak = Double(fields[1]), peak.isFinite, (0...10).contains(peak),
                  let size = Int64(fields[2]), size >= 0, let mtime = Int64(fields[3]), fields[4].hasPrefix("/") else {
                throw LoudnessFailure(reason: "line \(number + 2) is damaged")
            }
            cache.insert(Loudness(trackGain: gain, trackPeak: peak > 0 ? peak : nil),
                         for: Key(path: String(fields[4]), size: size, mtime: mtime))
        }
        return cache
    }

    /// The cache in the file at `path`: empty when there is none; empty with a reason when it
    /// cannot be read or is damaged (it is then written anew over it).
    public static func read(_ path: String) -> (cache: LoudnessCache, problem: String?) {
        guard fileExists(path) else { return (LoudnessCache(), nil) }
        do {
            let bytes = try readFile(path, limit: maxBytes)
            return (try parse(String(decoding: bytes, as: UTF8.self)), nil)
        } catch let error as LoudnessFailure {
            return (LoudnessCache(), "\(path): \(error.reason); ignored")
        } catch {
            return (LoudnessCache(), "\(path): \(error); ignored")
        }
    }

    /// Writes the cache to `path` atomically.
    public func write(to path: String) throws(SystemError) {
        try writeAtomically(Array(text.utf8), to: path)
    }
}

/// Why a loudness cache file was not read, or a file not measured.
public struct LoudnessFailure: Error, Equatable {
    /// In words a person understands.
    public var reason: String

    /// Creates a failure.
    public init(reason: String) { self.reason = reason }
}

// SPDX-License-Identifier: MIT

/// A process's resident memory by mapping, summed from the text of `/proc/PID/smaps`: what the
/// RSS figures of docs/TESTING.md name ("libFLAC 0.3, heap and stacks 1.0").
///
/// Mappings are grouped by what they hold: a file by its name without the folder (`libc.so.6`,
/// `jukebox`; the versions of one library stay apart), `[heap]`, `[stack]`, `[vdso]` as the kernel
/// names them, and the unnamed anonymous mappings sorted by their neighbours, the way glibc lays
/// them out: a writable mapping right above a small inaccessible one (`---p`, at most 64 KiB) is a
/// thread's stack above its guard (`[thread stacks]`); one right below an inaccessible one is a
/// malloc arena, whose reserve lies above it unused (`[malloc arenas]`; arenas follow each other,
/// so one may also lie above the last one's reserve, which is large); the rest is `[anon]` (the
/// Swift runtime's and libraries' own `mmap`s). A heuristic: a stack allocated by hand without a
/// guard, or an arena that filled its reserve, counts as `[anon]`.
public struct SmapsSummary: Sendable, Equatable {
    /// One group's sums, in KiB.
    public struct Use: Sendable, Equatable {
        /// The group's name (see the type's description).
        public var name: String
        /// Resident (`Rss:`), proportional (`Pss:`) and anonymous resident (`Anonymous:`) KiB.
        public var rss: Int, pss: Int, anonymous: Int
        /// How many mappings the group holds.
        public var mappings: Int

        public init(name: String, rss: Int, pss: Int, anonymous: Int, mappings: Int) {
            self.name = name
            self.rss = rss
            self.pss = pss
            self.anonymous = anonymous
            self.mappings = mappings
        }
    }

    /// The groups, largest `rss` first (ties by name).
    public var uses: [Use]
    /// The sums over every mapping: `Rss:`, `Pss:`, `Anonymous:` and `Pss_Anon:`, in KiB. The
    /// kernel prints `Pss_Anon:` only in `smaps_rollup` (since 5.8), whose one block this reads too.
    public var rss: Int, pss: Int, anonymous: Int, pssAnon: Int

    public init(uses: [Use], rss: Int, pss: Int, anonymous: Int, pssAnon: Int) {
        self.uses = uses
        self.rss = rss
        self.pss = pss
        self.anonymous = anonymous
        self.pssAnon = pssAnon
    }

    /// The groups whose resident size is at least `minimum` KiB, at most `count` of them.
    public func largest(_ count: Int, minimum: Int = 0) -> [Use] {
        Array(uses.filter { $0.rss >= minimum }.prefix(count))
    }

    /// Sums `text`, the contents of `/proc/PID/smaps`. Lines it does not know are skipped, so a
    /// kernel's new fields change nothing; text that is not smaps gives an empty summary.
    public static func parse(_ text: String) -> SmapsSummary {
        var maps: [Mapping] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let header = Mapping(header: line) {
                maps.append(header)
                continue
            }
            guard !maps.isEmpty else { continue }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, let kib = Int(words[1]) else { continue }
            switch words[0] {
            case "Rss:": maps[maps.count - 1].rss = kib
            case "Pss:": maps[maps.count - 1].pss = kib
            case "Anonymous:": maps[maps.count - 1].anonymous = kib
            case "Pss_Anon:": maps[maps.count - 1].pssAnon = kib
            default: break
            }
        }
        var groups: [String: Use] = [:]
        for (i, m) in maps.enumerated() {
            let name = m.group(below: i > 0 ? maps[i - 1] : nil, above: i + 1 < maps.count ? maps[i + 1] : nil)
            var use = groups[name] ?? Use(name: name, rss: 0, pss: 0, anonymous: 0, mappings: 0)
            use.rss += m.rss
            use.pss += m.pss
            use.anonymous += m.anonymous
            use.mappings += 1
            groups[name] = use
        }
        let uses = groups.values.sorted { $0.rss != $1.rss ? $0.rss > $1.rss : $0.name < $1.name }
        return SmapsSummary(uses: uses, rss: maps.map(\.rss).reduce(0, +), pss: maps.map(\.pss).reduce(0, +),
                            anonymous: maps.map(\.anonymous).reduce(0, +), pssAnon: maps.map(\.pssAnon).reduce(0, +))
    }

    /// One mapping's header line and the fields summed.
    private struct Mapping {
        var start: UInt64, end: UInt64
        var permissions: Substring
        var path: Substring
        var rss = 0, pss = 0, anonymous = 0, pssAnon = 0

        /// A header: `start-end perms offset dev inode [path]`; nil for any other line.
        init?(header line: Substring) {
            let words = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard words.count >= 5, words[0].contains("-"), words[1].count == 4, !words[0].hasSuffix(":") else { return nil }
            let range = words[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16) else { return nil }
            self.start = start
            self.end = end
            permissions = words[1]
            path = words.count > 5 ? Substring(words[5].drop { $0 == " " }) : ""
        }

        var inaccessible: Bool { permissions.hasPrefix("---") }

        /// The group this mapping counts in, given the mappings next to it in the address space.
        func group(below: Mapping?, above: Mapping?) -> String {
            if path.hasPrefix("/") {
                // A deleted file keeps its name with " (deleted)" after it.
                let name = path.split(separator: "/").last.map(String.init) ?? String(path)
                return name
            }
            if !path.isEmpty { return String(path) }
            if inaccessible { return "[guard and reserve]" }
            if let below, below.inaccessible, below.end == start, below.path.isEmpty, below.end - below.start <= 64 * 1024 {
                return "[thread stacks]"
            }
            if let above, above.inaccessible, above.start == end, above.path.isEmpty { return "[malloc arenas]" }
            return "[anon]"
        }
    }
}

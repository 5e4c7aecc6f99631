// SPDX-License-Identifier: MIT
import CLinux
import Glibc

/// Gives back the resident pages of code and read-only tables that the process touched once and
/// no longer uses: start-up (relocating a 13 MB program, the Swift runtime's set-up, the libraries'
/// constructors), parsing the configuration, a batch of tags read with TagLib. Measured while
/// playing, more than a third of the player's resident memory was such pages (issue 13).
///
/// How: `madvise(MADV_DONTNEED)` on the read-only segments of every loaded ELF object (the
/// program, its libraries, plugins libasound loaded), page runs that hold no private copy of a
/// page. Those pages are copies of the file, still in the page cache; the next touch maps them
/// again (a minor fault), so what is in use comes back at once and the rest stays out. It loses
/// nothing: a page with a private copy (a debugger's breakpoint, a uprobe) is skipped, as is every
/// object with text relocations, and the kernel itself drops clean file pages like these under
/// memory pressure. The segments come from `dl_iterate_phdr`, whose lock keeps a `dlclose` on
/// another thread (libasound unloading a plugin) from unmapping them meanwhile.
public enum ColdPages {
    /// What one `release` did.
    public struct Released: Equatable, Sendable {
        /// Runs of pages advised.
        public var runs = 0
        /// The pages among them that were resident (KiB).
        public var kib = 0
    }

    /// Releases the cold pages of every loaded object (see the type). Safe from any thread; about a
    /// millisecond. Does nothing when /proc/self/pagemap cannot be read (nothing would show the
    /// private copies).
    @discardableResult
    public static func release() -> Released {
        final class Pass {
            let pagemap: Int32
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            var released = Released()
            var entries = [UInt64](repeating: 0, count: 512)
            init(pagemap: Int32) { self.pagemap = pagemap }
        }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return Released() }
        defer { close(pagemap) }
        let pass = Pass(pagemap: pagemap)
        withExtendedLifetime(pass) {
            clinux_each_readonly_segment({ start, end, context in
                let pass = Unmanaged<Pass>.fromOpaque(context!).takeUnretainedValue()
                ColdPages.advise(from: Int(start), to: Int(end), pass.page, pass.pagemap, &pass.entries, &pass.released)
            }, Unmanaged.passUnretained(pass).toOpaque())
        }
        return pass.released
    }

    /// Advises [from, to) (whole pages) a chunk of page-map entries at a time, leaving out each
    /// page that is a private copy.
    private static func advise(from: Int, to: Int, _ page: Int, _ pagemap: Int32, _ entries: inout [UInt64],
                               _ released: inout Released) {
        var first = from / page
        let last = to / page
        while first < last {
            let count = min(entries.count, last - first)
            let got = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, count * 8, off_t(first * 8)) }
            guard got == count * 8 else { return }
            let plan = runs(entries[..<count])
            for run in plan.runs {
                let address = UnsafeMutableRawPointer(bitPattern: (first + run.lowerBound) * page)
                if madvise(address, run.count * page, MADV_DONTNEED) == 0 { released.runs += 1 }
            }
            released.kib += plan.residentPages * page / 1024
            first += count
        }
    }

    /// The runs of pages that may be advised, as indices into `entries` (/proc/self/pagemap
    /// entries: bit 63 present, 62 swapped, 61 file page or shared), and how many of those pages are
    /// resident. A page present but not a file page is a private copy, and a swapped one was one.
    static func runs(_ entries: ArraySlice<UInt64>) -> (runs: [Range<Int>], residentPages: Int) {
        let present: UInt64 = 1 << 63, swapped: UInt64 = 1 << 62, file: UInt64 = 1 << 61
        var out: [Range<Int>] = [], resident = 0
        var start: Int?
        for (i, entry) in zip(0..., entries) {
            let privateCopy = entry & swapped != 0 || (entry & present != 0 && entry & file == 0)
            if privateCopy {
                if let s = start { out.append(s..<i) }
                start = nil
            } else {
                if start == nil { start = i }
                if entry & present != 0 { resident += 1 }
            }
        }
        if let s = start { out.append(s..<entries.count) }
        return (out, resident)
    }
}

// SPDX-License-Identifier: MIT
import JukeboxFixtures
import XCTest

/// `SmapsSummary`, the bench's reading of /proc/PID/smaps by mapping (issue 33), on fixed text:
/// files grouped by name, the kernel's names kept, unnamed anonymous mappings sorted by their
/// neighbours, and lines it does not know skipped.
final class SmapsSummaryTests: XCTestCase {
    /// One mapping's smaps block.
    private func block(_ range: String, _ perms: String, _ path: String, rss: Int, pss: Int, anon: Int, pssAnon: Int? = nil) -> String {
        let header = "\(range) \(perms) 00000000 00:00 0"
        var lines: [String] = [path.isEmpty ? header : header + "                          " + path]
        lines.append("Size:               \(rss + 4) kB")
        lines.append("KernelPageSize:        4 kB")
        lines.append("Rss:                \(rss) kB")
        lines.append("Pss:                \(pss) kB")
        if let pssAnon { lines.append("Pss_Anon:           \(pssAnon) kB") }
        lines.append("Anonymous:          \(anon) kB")
        lines.append("THPeligible:    0")
        lines.append("VmFlags: rd wr mr mw me ac sd")
        return lines.joined(separator: "\n")
    }

    func testGroupsFilesByNameAndAnonymousMappingsByNeighbours() {
        let blocks: [String] = [
            block("55d000000000-55d000100000", "r--p", "/usr/bin/jukebox", rss: 400, pss: 400, anon: 0),
            block("55d000100000-55d000800000", "r-xp", "/usr/bin/jukebox", rss: 3000, pss: 3000, anon: 0),
            block("55d000800000-55d000900000", "rw-p", "/usr/bin/jukebox", rss: 100, pss: 100, anon: 100, pssAnon: 100),
            block("55d001000000-55d001200000", "rw-p", "[heap]", rss: 600, pss: 600, anon: 600, pssAnon: 600),
            // A malloc arena: its used part, then the reserve above it.
            block("7f0000000000-7f0000100000", "rw-p", "", rss: 200, pss: 200, anon: 200, pssAnon: 200),
            block("7f0000100000-7f0004000000", "---p", "", rss: 0, pss: 0, anon: 0),
            // A second arena right above the first one's reserve.
            block("7f0004000000-7f0004200000", "rw-p", "", rss: 300, pss: 300, anon: 300, pssAnon: 300),
            block("7f0004200000-7f0008000000", "---p", "", rss: 0, pss: 0, anon: 0),
            // Two thread stacks, each above its guard page.
            block("7f1000000000-7f1000001000", "---p", "", rss: 0, pss: 0, anon: 0),
            block("7f1000001000-7f1000801000", "rw-p", "", rss: 20, pss: 20, anon: 20, pssAnon: 20),
            block("7f1000801000-7f1000802000", "---p", "", rss: 0, pss: 0, anon: 0),
            block("7f1000802000-7f1001002000", "rw-p", "", rss: 16, pss: 16, anon: 16, pssAnon: 16),
            // A lone anonymous mapping, a gap away from anything inaccessible.
            block("7f2000000000-7f2000010000", "rw-p", "", rss: 64, pss: 64, anon: 64, pssAnon: 64),
            block("7f3000000000-7f3000100000", "r-xp", "/usr/lib/aarch64-linux-gnu/libc.so.6", rss: 800, pss: 120, anon: 0),
            block("7f3000100000-7f3000104000", "rw-p", "/usr/lib/aarch64-linux-gnu/libc.so.6", rss: 16, pss: 16, anon: 12, pssAnon: 12),
            block("7ffc00000000-7ffc00021000", "rw-p", "[stack]", rss: 132, pss: 132, anon: 132, pssAnon: 132),
        ]
        let s = SmapsSummary.parse(blocks.joined(separator: "\n") + "\n")
        XCTAssertEqual(s.rss, [400, 3000, 100, 600, 200, 300, 20, 16, 64, 800, 16, 132].reduce(0, +))
        XCTAssertEqual(s.pss, [400, 3000, 100, 600, 200, 300, 20, 16, 64, 120, 16, 132].reduce(0, +))
        XCTAssertEqual(s.anonymous, [100, 600, 200, 300, 20, 16, 64, 12, 132].reduce(0, +))
        XCTAssertEqual(s.pssAnon, [100, 600, 200, 300, 20, 16, 64, 12, 132].reduce(0, +))
        let byName = Dictionary(uniqueKeysWithValues: s.uses.map { ($0.name, $0) })
        XCTAssertEqual(byName["jukebox"], .init(name: "jukebox", rss: 3500, pss: 3500, anonymous: 100, mappings: 3))
        XCTAssertEqual(byName["libc.so.6"], .init(name: "libc.so.6", rss: 816, pss: 136, anonymous: 12, mappings: 2))
        XCTAssertEqual(byName["[heap]"]?.rss, 600)
        XCTAssertEqual(byName["[stack]"]?.rss, 132)
        XCTAssertEqual(byName["[malloc arenas]"], .init(name: "[malloc arenas]", rss: 500, pss: 500, anonymous: 500, mappings: 2))
        XCTAssertEqual(byName["[thread stacks]"], .init(name: "[thread stacks]", rss: 36, pss: 36, anonymous: 36, mappings: 2))
        XCTAssertEqual(byName["[anon]"]?.rss, 64)
        XCTAssertEqual(byName["[guard and reserve]"]?.mappings, 4)
        XCTAssertEqual(s.uses.first?.name, "jukebox", "largest first")
        XCTAssertEqual(s.largest(2).map(\.name), ["jukebox", "libc.so.6"])
        XCTAssertEqual(s.largest(10, minimum: 150).map(\.name), ["jukebox", "libc.so.6", "[heap]", "[malloc arenas]"])
        XCTAssertEqual(s.largest(10, minimum: 150).map(\.rss), [3500, 816, 600, 500])
    }

    func testPathsWithSpacesAndDeletedFilesKeepTheirNames() {
        let text = block("7f3000000000-7f3000100000", "r--p", "/tmp/a folder/lib x.so (deleted)", rss: 8, pss: 8, anon: 0)
        XCTAssertEqual(SmapsSummary.parse(text).uses.map(\.name), ["lib x.so (deleted)"])
    }

    func testTextThatIsNotSmapsGivesNothing() {
        for text in ["", "\n\n", "Rss: 12 kB\nPss: 3 kB\n", "hello world this is not smaps\n", "VmRSS:\t 1234 kB\n"] {
            XCTAssertEqual(SmapsSummary.parse(text), SmapsSummary(uses: [], rss: 0, pss: 0, anonymous: 0, pssAnon: 0), text)
        }
    }

    func testAKernelWithoutPssAnonGivesZeroForIt() {
        let text = block("7f2000000000-7f2000010000", "rw-p", "", rss: 64, pss: 64, anon: 64)
        let s = SmapsSummary.parse(text)
        XCTAssertEqual(s.pssAnon, 0)
        XCTAssertEqual(s.anonymous, 64)
    }
}

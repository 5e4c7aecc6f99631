// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore
import JukeboxWaiting
@testable import JukeboxService
import JukeboxTestSupport
import XCTest

final class ColdPagesTests: XCTestCase {
    /// qemu-user 7.2 (the arm64 suite's emulator, `JUKEBOX_QEMU_USER=1`) answers `madvise` with
    /// success and does nothing, and /proc/self/pagemap there is the emulator's own: what these
    /// tests measure does not happen under it. A real kernel runs them: the host's, the arm64 guest's.
    private func skipUnderQemuUser() throws {
        if ProcessInfo.processInfo.environment["JUKEBOX_QEMU_USER"] == "1" {
            throw XCTSkip("qemu-user ignores madvise: nothing is released under emulation")
        }
    }

    func testRunsLeaveOutPrivateCopies() {
        let present: UInt64 = 1 << 63, swapped: UInt64 = 1 << 62, file: UInt64 = 1 << 61
        let entries: [UInt64] = [present | file, 0, present | file, present, present | file, swapped, 0, present | file]
        let plan = ColdPages.runs(entries[...])
        XCTAssertEqual(plan.runs, [0..<3, 4..<5, 6..<8])
        XCTAssertEqual(plan.residentPages, 4)
        XCTAssertEqual(ColdPages.runs([present, present][...]).runs, [])
        XCTAssertEqual(ColdPages.runs([0, 0][...]).runs, [0..<2])
    }

    /// The guard that makes the advice lossless: a page of a loaded library that holds a private
    /// copy (as a debugger's breakpoint does) keeps its contents. Without the guard MADV_DONTNEED
    /// would put the file's byte back.
    func testAPrivateCopyInALoadedLibrarySurvivesAndTheProcessGoesOn() throws {
        try skipUnderQemuUser()
        // libc's first mapping starts with its ELF header, in a read-only segment; EI_PAD (bytes
        // 9–15 of e_ident) is read by nobody after loading.
        let first = try XCTUnwrap(mappings().first { $0.path.hasSuffix("/libc.so.6") })
        let page = try XCTUnwrap(UnsafeMutableRawPointer(bitPattern: first.start))
        let header = page.assumingMemoryBound(to: UInt8.self)
        XCTAssertEqual(Array(UnsafeBufferPointer(start: header, count: 4)), [0x7F, 0x45, 0x4C, 0x46])
        XCTAssertEqual(header[12], 0)
        XCTAssertEqual(mprotect(page, Int(getpagesize()), PROT_READ | PROT_WRITE), 0)
        header[12] = 0x5A
        XCTAssertEqual(mprotect(page, Int(getpagesize()), PROT_READ), 0)

        let released = ColdPages.release()
        XCTAssertGreaterThan(released.runs, 0)
        XCTAssertGreaterThan(released.kib, 0, "a running test process has code it touched once")
        XCTAssertEqual(header[12], 0x5A, "a page with a private copy was advised")

        // Put it back as it was (the copy stays private, which harms nothing).
        XCTAssertEqual(mprotect(page, Int(getpagesize()), PROT_READ | PROT_WRITE), 0)
        header[12] = 0
        XCTAssertEqual(mprotect(page, Int(getpagesize()), PROT_READ), 0)

        // Code and tables come back on use: the standard library, libc, Foundation.
        XCTAssertEqual(strlen("jukebox"), 7)
        XCTAssertEqual([3, 1, 2].sorted(), [1, 2, 3])
        let json = try JSONEncoder().encode(["a": 1])
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"{"a":1}"#)
    }

    /// Code that was resident and is not used between two looks is released: the test binary's own
    /// text shrinks. How much comes straight back depends on the build and on what other threads
    /// run meanwhile (an AddressSanitizer build kept 59%, a plain one under half), so only the
    /// direction is asserted.
    func testResidentCodeShrinks() throws {
        try skipUnderQemuUser()
        let program = try XCTUnwrap(mappings().first { $0.perms == "r-xp" && $0.path.hasSuffix(".xctest") })
        let before = try XCTUnwrap(residentKiB(start: program.start))
        let released = ColdPages.release()
        let after = try XCTUnwrap(residentKiB(start: program.start))
        XCTAssertGreaterThan(released.kib, 0)
        XCTAssertLessThan(after, before, "before \(before) KiB, after \(after) KiB")
    }

    /// A file mapping that is no loaded ELF object (a data file, a locale archive) is left alone.
    func testAMappedDataFileIsNotTouched() throws {
        try skipUnderQemuUser()
        let dir = TempDir()
        let path = dir.write("data.bin", String(repeating: "x", count: 65536))
        let fd = open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        let map = try XCTUnwrap(mmap(nil, 65536, PROT_READ, MAP_PRIVATE, fd, 0))
        XCTAssertNotEqual(map, MAP_FAILED)
        defer { munmap(map, 65536) }
        var sum = 0
        for i in stride(from: 0, to: 65536, by: Int(getpagesize())) { sum += Int(map.load(fromByteOffset: i, as: UInt8.self)) }
        XCTAssertEqual(sum, 65536 / Int(getpagesize()) * Int(UInt8(ascii: "x")))
        XCTAssertEqual(residentKiB(start: Int(bitPattern: map)), 64)
        ColdPages.release()
        XCTAssertEqual(residentKiB(start: Int(bitPattern: map)), 64)
    }

    func testTheRuntimeReleasesAfterATrackStartsAndAfterTagsAreRead() throws {
        let audio = RecordingAudio()
        let runtime = Runtime(state: State(), audio: audio, store: nil, status: RecordingStatus(), log: Log(level: .error))
        let calls = Counter()
        runtime.releaseColdPages = { calls.add() }
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac"), TrackInfo(path: "/m/b.flac")]))
        XCTAssertEqual(calls.value, 0, "no track has started")
        runtime.dispatch(.trackStarted(playID: 1))
        XCTAssertEqual(calls.value, 1)
        runtime.dispatch(.pause)
        XCTAssertEqual(calls.value, 1)

        runtime.loadTracks = { paths in (paths.map { TrackInfo(path: $0) }, []) }
        var read: [TrackInfo]?
        XCTAssertTrue(runtime.readTracks(["/m/c.flac"]) { tracks, _ in read = tracks })
        XCTAssertTrue(waitFor(5) {
            runtime.waitForSaves()  // takes the workers' results, the tags among them
            return read != nil
        })
        XCTAssertEqual(read?.map(\.path), ["/m/c.flac"])
        XCTAssertEqual(calls.value, 2)
    }

    private final class Counter: @unchecked Sendable {
        var value = 0
        func add() { value += 1 }
    }

    private struct Mapping {
        var start: Int, perms: String, path: String
    }

    /// /proc/self/maps, parsed.
    private func mappings() -> [Mapping] {
        procLines("/proc/self/maps").compactMap { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, let dash = f[0].firstIndex(of: "-"), let start = Int(f[0][..<dash], radix: 16) else { return nil }
            return Mapping(start: start, perms: String(f[1]), path: String(f[5]))
        }
    }

    /// `Rss` of the mapping that starts at `start`, from /proc/self/smaps.
    private func residentKiB(start: Int) -> Int? {
        var inIt = false
        for line in procLines("/proc/self/smaps") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = f.first, range.contains("-"), !range.hasSuffix(":") {
                inIt = Int(range[..<range.firstIndex(of: "-")!], radix: 16) == start
            } else if inIt, f.count >= 2, f[0] == "Rss:" {
                return Int(f[1])
            }
        }
        return nil
    }

    /// A /proc file's lines (Foundation's file reading sees its size, 0, and reads nothing).
    private func procLines(_ path: String) -> [Substring] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }
}

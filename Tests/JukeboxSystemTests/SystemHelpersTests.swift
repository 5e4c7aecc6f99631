// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem
import XCTest

/// The helpers every module shares: EINTR, typed errors, bounded reads, listings, threads.
final class SystemHelpersTests: XCTestCase {
    func testSysRetriesEINTRAndNamesTheCallOnOtherErrors() throws {
        var calls = 0
        let r = try sys("read", "x") { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 5
        }
        XCTAssertEqual(r, 5)
        XCTAssertEqual(calls, 3)
        XCTAssertThrowsError(try sys("open", "/nope") { errno = ENOENT; return -1 }) { error in
            XCTAssertEqual(error as? SystemError, SystemError(call: "open", subject: "/nope", errno: ENOENT))
            XCTAssertEqual("\(error)", "open /nope: \(errnoText(ENOENT))")
        }
    }

    func testRetryingEINTRGivesUpAfterItsAttemptsWithErrnoAsLeft() {
        var calls = 0
        let r = retryingEINTR { () -> Int32 in calls += 1; errno = EINTR; return -1 }
        XCTAssertEqual(r, -1)
        XCTAssertEqual(calls, 9)
        XCTAssertEqual(errno, EINTR)
    }

    func testFilesAreReadWithinTheirLimitAndDirectoriesListedWithoutDots() throws {
        var template = Array("/tmp/jukebox-system-XXXXXX".utf8CString)
        // The name is read from the array after the call: the pointer mkdtemp returns points into
        // storage that is only lent for the call (under qemu-aarch64 it was reused at once, and
        // String(cString:) then copied it onto itself: "initialize overlapping range").
        guard mkdtemp(&template) != nil else { return XCTFail("mkdtemp: \(errnoText(errno))") }
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { _ = unlink(dir + "/a"); _ = rmdir(dir) }
        let fd = open(dir + "/a", O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        writeAll(fd, "hello\nworld\n")
        close(fd)
        XCTAssertEqual(readFileText(dir + "/a"), "hello\nworld\n")
        XCTAssertNil(readFileText(dir + "/a", limit: 4), "longer than the limit")
        XCTAssertNil(readFileText(dir + "/missing"))
        XCTAssertEqual(try directoryEntries(dir), ["a"])
        XCTAssertThrowsError(try directoryEntries(dir + "/missing")) { error in
            XCTAssertEqual((error as? SystemError)?.call, "opendir")
        }
    }

    func testAThreadWaitsOnItsMonitorUntilToldAndIsJoinedOnce() {
        final class Shared: @unchecked Sendable {
            let monitor = Monitor()
            var go = false, done = false
        }
        let shared = Shared()
        let thread = NativeThread(name: "jukebox-test") {
            shared.monitor.withLock {
                while !shared.go { shared.monitor.wait() }
                shared.done = true
            }
        }
        shared.monitor.withLock {
            shared.go = true
            shared.monitor.broadcast()
        }
        thread.join()
        XCTAssertTrue(shared.monitor.withLock { shared.done })
        thread.join()    // a second join and a detach after it do nothing
        thread.detach()
    }

    func testTheMonotonicClockNeverGoesBack() {
        var last = monotonicNow()
        for _ in 0..<1000 {
            let now = monotonicNow()
            XCTAssertGreaterThanOrEqual(now, last)
            last = now
        }
    }
}

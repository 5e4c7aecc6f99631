// SPDX-License-Identifier: MIT
import JukeboxCore
import Foundation
@testable import JukeboxService
import JukeboxTestSupport
import JukeboxSystem
import XCTest

/// The notify protocol against real datagram sockets standing in for systemd's.
final class SystemdNotifierTests: XCTestCase {
    /// A datagram socket bound to `address` (a path, or `@name` for the abstract namespace)
    /// that collects what the notifier sends.
    final class Listener {
        let fd: Int32
        let address: String

        init(_ address: String) throws {
            self.address = address
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0, let (addr, length) = SystemdNotifier.makeAddress(address) else {
                throw SystemError(call: "socket", subject: address, errno: errno)
            }
            var a = addr
            let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            if rc != 0 { throw SystemError(call: "bind", subject: address, errno: errno) }
        }

        deinit {
            close(fd)
            if address.hasPrefix("/") { unlink(address) }
        }

        /// Every datagram waiting now (waits up to 0.2 s for the first one only).
        func received() -> [String] {
            var messages: [String] = []
            var wait: Int32 = 200
            while true {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, wait) == 1 else { return messages }
                wait = 0
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n >= 0 else { return messages }
                messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
            }
        }
    }

    func testPathSocketReceivesExactlyTheMessagesAndStatusOnlyWhenItChanges() throws {
        let dir = TempDir()
        let listener = try Listener(dir.file("notify"))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        XCTAssertTrue(notifier.isEnabled)
        notifier.extendTimeout(seconds: 30)
        notifier.status("waiting for audio device: default")
        notifier.ready()
        notifier.status("playing: Song – Artist")
        notifier.status("playing: Song – Artist")
        notifier.watchdogPing()
        notifier.status("paused")
        notifier.status("paused")
        notifier.stopping()
        XCTAssertEqual(listener.received(), [
            "EXTEND_TIMEOUT_USEC=30000000", "STATUS=waiting for audio device: default", "READY=1", "STATUS=playing: Song – Artist",
            "WATCHDOG=1", "STATUS=paused", "STOPPING=1",
        ])
        XCTAssertEqual(notifier.sent, 7)
        XCTAssertEqual(notifier.failures, 0)
    }

    func testStatusLineBreaksBecomeSpaces() throws {
        let dir = TempDir()
        let listener = try Listener(dir.file("notify"))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        notifier.status("stopped:\nqueue empty")
        XCTAssertEqual(listener.received(), ["STATUS=stopped: queue empty"])
    }

    func testAbstractSocketReceivesReloadWithMonotonicTime() throws {
        let listener = try Listener("@jukebox-test-\(getpid())-\(UUID().uuidString)")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let before = UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
        notifier.ready()
        notifier.reloading()
        notifier.readyAgain()
        let messages = listener.received()
        XCTAssertEqual(messages.count, 3)
        XCTAssertEqual(messages.first, "READY=1")
        XCTAssertEqual(messages.last, "READY=1")
        let reload = messages.count == 3 ? messages[1].split(separator: "\n").map(String.init) : []
        XCTAssertEqual(reload.first, "RELOADING=1")
        XCTAssertEqual(reload.count, 2)
        let usec = reload.last.flatMap { $0.hasPrefix("MONOTONIC_USEC=") ? UInt64($0.dropFirst(15)) : nil }
        XCTAssertNotNil(usec)
        if let usec { XCTAssert(usec >= before && usec < before + 5_000_000, "\(usec) vs \(before)") }
    }

    func testAbstractAddressIsExactLengthWithoutTrailingNul() throws {
        let (addr, length) = try XCTUnwrap(SystemdNotifier.makeAddress("@abc"))
        XCTAssertEqual(Int(length), 2 + 4)
        let bytes = withUnsafeBytes(of: addr.sun_path) { Array($0.prefix(4)) }
        XCTAssertEqual(bytes, [0, UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "c")])
        let (_, pathLength) = try XCTUnwrap(SystemdNotifier.makeAddress("/run/systemd/notify"))
        XCTAssertEqual(Int(pathLength), 2 + 19 + 1)
    }

    func testUnusableAddressesDisableTheNotifier() {
        for value in ["relative/notify", "@", "vsock:2:1234", "/" + String(repeating: "x", count: 120)] {
            let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": value, "WATCHDOG_USEC": "1000000"])
            XCTAssertFalse(notifier.isEnabled, value)
            XCTAssertNil(notifier.watchdogInterval, value)
            XCTAssertNotNil(notifier.lastError, value)
            notifier.ready()
            XCTAssertEqual(notifier.failures, 0, value)
        }
    }

    func testUnsetSocketIsANoOp() {
        let notifier = SystemdNotifier(environment: ["WATCHDOG_USEC": "10000000"])
        XCTAssertFalse(notifier.isEnabled)
        XCTAssertNil(notifier.watchdogInterval)
        notifier.ready()
        notifier.status("playing")
        notifier.watchdogPing()
        notifier.reloading()
        notifier.readyAgain()
        notifier.stopping()
        XCTAssertFalse(notifier.send("READY=1"))
        XCTAssertEqual(notifier.sent, 0)
        XCTAssertEqual(notifier.failures, 0)
        XCTAssertNil(notifier.lastError)
        XCTAssertFalse(SystemdNotifier(environment: [:]).isEnabled)
        XCTAssertFalse(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled)
    }

    func testSocketWithoutListenerCountsFailuresAndNeverThrows() {
        let dir = TempDir()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": dir.file("nobody")])
        notifier.ready()
        notifier.status("paused")
        notifier.status("paused")  // not recorded as sent, so it is tried again
        XCTAssertEqual(notifier.failures, 3)
        XCTAssertEqual(notifier.sent, 0)
        XCTAssertNotNil(notifier.lastError)
    }

    func testWatchdogIntervalFromEnvironment() throws {
        let dir = TempDir()
        let listener = try Listener(dir.file("notify"))
        func interval(_ env: [String: String]) -> Double? {
            SystemdNotifier(environment: env.merging(["NOTIFY_SOCKET": listener.address]) { a, _ in a }).watchdogInterval
        }
        let me = String(getpid())
        XCTAssertEqual(interval(["WATCHDOG_USEC": "10000000"]), 10)
        XCTAssertEqual(interval(["WATCHDOG_USEC": "2500000", "WATCHDOG_PID": me]), 2.5)
        XCTAssertNil(interval(["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": String(getpid() + 1)]))
        XCTAssertNil(interval(["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "systemd"]))
        XCTAssertNil(interval(["WATCHDOG_USEC": "0"]))
        XCTAssertNil(interval(["WATCHDOG_USEC": "-5"]))
        XCTAssertNil(interval(["WATCHDOG_USEC": "10s"]))
        XCTAssertNil(interval([:]))
        XCTAssertEqual(SystemdNotifier.watchdogInterval(usec: "500000", pid: "42", ownPID: 42), 0.5)
    }
}

/// The loop speaking to systemd: READY only once audio started, STATUS as it changes, STOPPING.
final class RuntimeNotifyTests: XCTestCase {
    func testReadyComesAfterTheFirstSampleAndStatusFollowsThePlayer() throws {
        let dir = TempDir()
        let listener = try SystemdNotifierTests.Listener(dir.file("notify"))
        let (runtime, _) = RuntimeTests.endingWithTheQueue()
        runtime.notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": dir.file("notify"), "WATCHDOG_USEC": "20000000"])
        XCTAssertEqual(runtime.run(initial: [.replaceQueue([TrackInfo(path: "/m/a.flac", artist: "Band")])]), 0)
        let messages = listener.received()
        XCTAssertEqual(messages.filter { !$0.hasPrefix("WATCHDOG") }, [
            "STATUS=playing: a – Band", "READY=1", "STATUS=stopped: a – Band", "STOPPING=1",
        ])
        XCTAssertTrue(messages.contains("WATCHDOG=1"), "\(messages)")
    }
}

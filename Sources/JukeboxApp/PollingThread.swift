// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxSystem

/// A chip polled on a thread of its own (the card readers on SPI or I2C, the battery gauge), so the
/// loop never waits for a bus: a look takes a few ms and a chip that hangs costs this thread, not
/// the player. `poll` runs at most every `interval` seconds; what it returns, stamped with the
/// thread's clock at the look's start, crosses to the loop through a queue and an eventfd (`fd`),
/// and `take` hands it over there. `close()` stops and joins the thread.
final class PollingThread<Output: Sendable>: @unchecked Sendable {
    private let monitor = Monitor()
    private var queue: [(Output, Double)] = []
    private var stopping = false
    /// Readable while something waits in the queue (poll it beside the loop's other sources).
    let fd: Int32
    private var thread: NativeThread?

    /// Starts polling at once. `poll` is owned by the thread (it need not be Sendable in spirit:
    /// nothing else calls it).
    init(name: String, interval: Double, clock: @escaping @Sendable () -> Double = monotonicNow,
         poll: @escaping @Sendable () -> [Output]) {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        thread = NativeThread(name: name) { [self] in
            while true {
                let started = clock()
                let outputs = poll()
                monitor.lock()
                if !outputs.isEmpty {
                    queue += outputs.map { ($0, started) }
                    var one: UInt64 = 1
                    _ = Glibc.write(fd, &one, 8)
                }
                if !stopping {
                    let left = interval - (clock() - started)
                    if left > 0 { monitor.wait(seconds: left) }
                }
                let stop = stopping
                monitor.unlock()
                if stop { return }
            }
        }
    }

    deinit { close() }

    /// Whether the thread runs (a closed one has no fd to poll).
    var running: Bool { fd >= 0 && thread != nil }

    /// What the thread found since the last `take`, in order, with the time of each look.
    func take() -> [(Output, Double)] {
        var count: UInt64 = 0
        _ = Glibc.read(fd, &count, 8)
        return monitor.withLock { () -> [(Output, Double)] in
            defer { queue = [] }
            return queue
        }
    }

    /// Stops and joins the thread (within one look); safe to call twice.
    func close() {
        guard let thread else { return }
        monitor.withLock {
            stopping = true
            monitor.broadcast()
        }
        thread.join()
        self.thread = nil
        _ = Glibc.close(fd)
    }
}

// SPDX-License-Identifier: MIT
import Glibc

/// A mutex with one condition variable, on CLOCK_MONOTONIC so timed waits ignore wall-clock jumps.
/// `Synchronization.Mutex` has no condition variable, and the engine threads must sleep until told.
final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for a broadcast; the caller holds the lock and re-checks its condition afterwards.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a broadcast or until `seconds` have passed; the caller holds the lock.
    func wait(seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        pthread_cond_timedwait(cond, mutex, &deadline)
    }

    func broadcast() { pthread_cond_broadcast(cond) }
}

/// Seconds on CLOCK_MONOTONIC.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Sleeps at least `seconds` (restarting after signals).
func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

// SPDX-License-Identifier: MIT
import Glibc

/// A mutex with one condition variable, on CLOCK_MONOTONIC so timed waits ignore wall-clock jumps.
/// `Synchronization.Mutex` has no condition variable, and the engine's threads and the shell's
/// workers must sleep until told. pthread primitives also mean ThreadSanitizer sees every lock.
public final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    /// A new, unlocked monitor.
    public init() {
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

    /// Takes the mutex (pair with `unlock` on the same thread).
    public func lock() { pthread_mutex_lock(mutex) }
    /// Gives the mutex back.
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the mutex. (Inlinable: the engine's threads call it for every chunk.)
    @inlinable
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for a broadcast; the caller holds the lock and re-checks its condition afterwards.
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a broadcast or until `seconds` have passed; the caller holds the lock.
    public func wait(seconds: Double) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        pthread_cond_timedwait(cond, mutex, &deadline)
    }

    /// Wakes every waiter (call holding the lock, after changing what they wait for).
    public func broadcast() { pthread_cond_broadcast(cond) }
}

// SPDX-License-Identifier: MIT
import Glibc

/// A joinable pthread running one closure, and the mutex and condition variable its owner shares
/// with it. The shell's workers (the state writer, the tag reader) block in file system calls,
/// which must never happen on the loop. pthread primitives, not `Synchronization.Mutex`:
/// ThreadSanitizer sees them (see `Mailbox`).
final class ServiceThread: @unchecked Sendable {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var thread = pthread_t()
    private var started = false
    private var joined = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Starts `body` on the thread (once).
    func start(_ body: @escaping @Sendable () -> Void) {
        precondition(!started)
        started = true
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// Runs `body` holding the mutex.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for `signal` (call with the mutex held, inside `locked`).
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Wakes the waiting thread (call inside `locked`).
    func signal() { pthread_cond_broadcast(cond) }

    /// Waits for the closure to return; later calls do nothing.
    func join() {
        guard started, !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    /// Lets the thread end by itself, unwaited for (the process may end first).
    func detach() {
        guard started, !joined else { return }
        joined = true
        pthread_detach(thread)
    }
}

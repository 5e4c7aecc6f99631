// SPDX-License-Identifier: MIT
import Glibc

/// A joinable pthread running one closure. The engine's threads and the shell's workers (the state
/// writer, the tag reader) block in C and file system calls (libsndfile, snd_pcm_writei, fsync),
/// which must never occupy Swift's cooperative pool or the loop. Pair it with a `Monitor` for what
/// the thread and its owner share.
public final class NativeThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    private var thread = pthread_t()
    private var joined = false

    /// Starts `body` on a new thread called `name` (at most 15 bytes: it shows in /proc and top).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let short = String(name.utf8.prefix(15)) ?? "jukebox"
        let box = Unmanaged.passRetained(Box {
            // The thread names itself (pthread_setname_np is not visible from Swift on Glibc).
            let fd = open("/proc/thread-self/comm", O_WRONLY)
            if fd >= 0 {
                _ = short.withCString { Glibc.write(fd, $0, strlen($0)) }
                close(fd)
            }
            body()
        }).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// Waits for the closure to return; later calls (and calls after `detach`) do nothing.
    public func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    /// Lets the thread end by itself, unwaited for (the process may end first); later calls (and
    /// calls after `join`) do nothing.
    public func detach() {
        guard !joined else { return }
        joined = true
        pthread_detach(thread)
    }
}

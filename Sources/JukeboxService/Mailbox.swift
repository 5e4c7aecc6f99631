// SPDX-License-Identifier: MIT
import CLinux
import JukeboxCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Events posted from other threads (the audio engine) to the loop: a short locked append plus
/// an eventfd the loop polls, so the poster never waits for the loop.
public final class Mailbox: Sendable {
    private let events = Mutex<[Event]>([])
    /// The fd that becomes readable when events are waiting.
    public let fd: Int32

    /// A new, empty mailbox.
    public init() {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(fd >= 0, "eventfd failed")
    }

    deinit { close(fd) }

    /// Posts an event; safe from any thread, never blocks on the loop.
    public func post(_ event: Event) {
        events.withLock { $0.append(event) }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Takes every waiting event, oldest first (loop thread).
    public func drain() -> [Event] {
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
        return events.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }
}

// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxSystem

/// The bound on stopping: once SIGTERM or SIGINT came, the process ends within `grace` seconds
/// whatever is stuck. The loop handles the signal itself (it saves the place and stops: its
/// signalfd), but a thread stuck in a read can hold that up — start-up reading the music before
/// the loop exists, the last save's fsync on a dead disk, an engine thread in a driver. A thread of
/// its own (`jukebox-stop`) watches a signalfd of its own without reading it, so the signal stays
/// pending for the loop, and `Runtime` tells it too when it took the signal first; when the grace
/// has passed it says so on stderr and `_exit`s.
public final class ShutdownWatchdog: @unchecked Sendable {
    /// The process's one watchdog.
    public static let shared = ShutdownWatchdog()
    /// Seconds between the signal and the forced exit, by default.
    public static let defaultGrace = 5.0

    private let monitor = Monitor()
    private var thread: NativeThread?
    private var grace = ShutdownWatchdog.defaultGrace
    private var armedAt: Double?
    private var signalName = ""
    /// Written by `arm` to wake the watching thread (which otherwise sleeps: no idle wakeups).
    private var wake: Int32 = -1

    /// Starts the watching thread (once; later calls do nothing). Call after `Runtime.blockSignals`,
    /// so the signals stay blocked in it and pending for the loop.
    public func start(grace: Double = ShutdownWatchdog.defaultGrace) {
        monitor.withLock {
            guard thread == nil else { return }
            self.grace = grace
            wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            thread = NativeThread(name: "jukebox-stop") { [self] in watch() }
            thread?.detach()
        }
    }

    /// The stop has begun (the loop took SIGTERM or SIGINT): the forced exit is due `grace`
    /// seconds from now, unless it is already due. Does nothing while the watchdog is not started.
    public func arm(_ name: String = "SIGTERM") {
        monitor.withLock {
            guard thread != nil, armedAt == nil else { return }
            armedAt = monotonicNow()
            signalName = name
            monitor.broadcast()
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
    }

    private func watch() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        let fd = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        let wake = monitor.withLock { self.wake }
        // Until armed: wait for a signal to be pending (poll only: the loop reads it), or for the
        // loop to say it took one (`arm` writes the eventfd). No timeout: no wakeups while idle.
        while monitor.withLock({ armedAt == nil }) {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) > 0, fds[0].revents != 0 {
                // Which one it is stays unread; both mean stop.
                arm("SIGTERM or SIGINT")
            }
        }
        let name: String = monitor.withLock {
            while true {
                let left = (armedAt ?? monotonicNow()) + grace - monotonicNow()
                if left <= 0 { return signalName }
                monitor.wait(seconds: left)
            }
        }
        let secs = grace == grace.rounded() ? "\(Int(grace))" : "\(grace)"
        writeAll(2, "jukebox: still running \(secs) s after \(name) (a thread is stuck, e.g. in a read of a hung disk or share): exiting now\n")
        _exit(1)
    }
}

// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxSystem

/// Watches the USB mount roots (config `usb.roots`, e.g. `/media/jukebox`) and reports a stick
/// mounted right under one as `Event.usbInserted`, and gone as `Event.usbRemoved`.
///
/// An `EventSource` on the loop's poll: inotify on each root says at once that a folder came or
/// went; `maintain` (about once a second) looks again, because an unmount leaves the folder in
/// place (systemd-mount keeps its mount point). A look is a `readdir` of the root and an `lstat`
/// per entry (no automount is triggered, nothing under the stick is read), so it never blocks
/// the loop for long.
public final class USBWatch: EventSource {
    /// The folders whose subfolders are sticks.
    public let roots: [String]
    /// Whether only a subfolder that is a mount point (another device than its root) is a stick;
    /// false lets any subfolder be one (tests, a bind-less setup).
    public let mountsOnly: Bool
    /// The kernel's block devices by number (`/sys/dev/block`; a scratch folder in tests).
    public let sysBlock: String
    private var notify: Int32 = -1
    /// Wakes the loop when `maintain` found a change (it cannot return events itself).
    private var wake: Int32 = -1
    private var present: Set<String> = []
    private var pendingEvents: [Event] = []

    /// Starts watching `roots`. The sticks already there at start are not reported: they were
    /// not inserted now (a queue playing from one was restored with the state).
    public init(roots: [String], mountsOnly: Bool = true, sysBlock: String = "/sys/dev/block") {
        self.roots = roots
        self.mountsOnly = mountsOnly
        self.sysBlock = sysBlock
        notify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        addWatches()
        _ = rescan()
    }

    deinit {
        if notify >= 0 { close(notify) }
        if wake >= 0 { close(wake) }
    }

    /// The sticks seen at the last look.
    public var sticks: [String] { present.sorted() }

    public var fds: [Int32] { [notify, wake].filter { $0 >= 0 } }

    public func read(fd: Int32) -> [Event] {
        if fd == wake {
            var count: UInt64 = 0
            _ = Glibc.read(wake, &count, 8)
            defer { pendingEvents = [] }
            return pendingEvents + rescan()
        }
        // The events themselves only say "look again": drain them, then compare.
        var buffer = [UInt8](repeating: 0, count: 4096)
        var ignored = false
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= n {
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    if event.mask & UInt32(IN_IGNORED) != 0 { ignored = true }
                    offset += MemoryLayout<inotify_event>.size + Int(event.len)
                }
            }
        }
        if ignored { addWatches() }
        return rescan()
    }

    public func maintain() {
        // A root made since (by the first mount) is watched from now on.
        addWatches()
        let found = rescan()
        guard !found.isEmpty else { return }
        pendingEvents += found
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    /// The stick `file` is on, when it is under a root and that stick is not there now (looked
    /// at now, not at the last look): a read that failed because the stick was pulled out a
    /// moment before the watcher saw it is the stick's absence, not the track's fault.
    public func goneStick(holding file: String) -> String? {
        for root in roots {
            let base = root.hasSuffix("/") ? String(root.dropLast()) : root
            guard file.hasPrefix(base + "/") else { continue }
            guard let name = file.dropFirst(base.count + 1).split(separator: "/").first, !name.isEmpty else { continue }
            let stick = base + "/" + name
            var rootStat = stat(), st = stat()
            let rootThere = lstat(cPath(base), &rootStat) == 0
            guard lstat(cPath(stick), &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, rootThere,
                  !(mountsOnly && st.st_dev == rootStat.st_dev) else { return stick }
            // Pulled out, not unmounted yet: a read fails (EIO) before systemd undoes the mount,
            // but the disk has left the kernel's block devices by then. (A file system on no block
            // device, major 0 — tmpfs, NFS, FUSE — has no such entry to lose; and without sysfs
            // mounted nothing can be told.)
            let (major, minor) = Self.deviceNumbers(st.st_dev)
            var entry = stat()
            if major != 0, stat(cPath(sysBlock), &entry) == 0,
               stat(cPath("\(sysBlock)/\(major):\(minor)"), &entry) != 0, errno == ENOENT { return stick }
            return nil
        }
        return nil
    }

    /// glibc's `major`/`minor` (macros Swift does not import) of a `dev_t`.
    public static func deviceNumbers(_ dev: dev_t) -> (major: UInt64, minor: UInt64) {
        let d = UInt64(dev)
        return (((d & 0x0000_0000_000f_ff00) >> 8) | ((d & 0xffff_f000_0000_0000) >> 32),
                (d & 0xff) | ((d & 0x0000_0fff_fff0_0000) >> 12))
    }

    private func addWatches() {
        guard notify >= 0 else { return }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR)
        for root in roots { _ = inotify_add_watch(notify, cPath(root), mask) }
    }

    /// The sticks under the roots now, compared with the last look: insertions then removals,
    /// each in path order.
    private func rescan() -> [Event] {
        var now: Set<String> = []
        for root in roots {
            var rootStat = stat()
            guard lstat(cPath(root), &rootStat) == 0, (rootStat.st_mode & S_IFMT) == S_IFDIR,
                  let names = try? directoryEntries(root) else { continue }
            for name in names where !name.hasPrefix(".") {
                let path = root.hasSuffix("/") ? root + name : root + "/" + name
                var st = stat()
                guard lstat(cPath(path), &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { continue }
                if mountsOnly && st.st_dev == rootStat.st_dev { continue }
                now.insert(path)
            }
        }
        let events = now.subtracting(present).sorted().map { Event.usbInserted(path: $0) }
            + present.subtracting(now).sorted().map { Event.usbRemoved(path: $0) }
        present = now
        return events
    }
}

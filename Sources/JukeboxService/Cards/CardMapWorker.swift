// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxSystem

/// Keeps the cards map current without the loop touching the disk: a thread of its own
/// (`jukebox-cards`) reads the map at start, whenever its folder says the file changed (inotify:
/// an editor's save, a copy, `card assign`'s rename), on `reload()` (SIGHUP), and writes
/// assignments. Each read that finds new bytes is posted as `Mailbox.Result.cards`: a good map
/// becomes `Event.cardsLoaded`, a bad one is reported and the previous map stays.
public final class CardMapWorker: @unchecked Sendable {
    /// What one read or write found.
    public struct Report: Sendable {
        /// The map read, when it was read and is good.
        public var map: CardMap?
        /// Why the map was refused (one problem per line), or why an assignment failed.
        public var problem: String?
        /// The assignment this answers, if any.
        public var assignment: Int?
    }

    /// The map file.
    public let path: String
    private let mailbox: Mailbox
    private let monitor = Monitor()
    private let wake: Int32
    private var thread: NativeThread?
    // Shared with the thread, under the monitor.
    private var reloadAsked = false
    private var assignments: [(number: Int, id: String, value: String?)] = []
    private var stopping = false
    // The loop's own.
    private var nextAssignment = 1
    private var waiting: [Int: (String?) -> Void] = [:]

    /// Starts the thread; its first read is posted at once.
    public init(path: String, mailbox: Mailbox) {
        self.path = path
        self.mailbox = mailbox
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        reloadAsked = true
        thread = NativeThread(name: "jukebox-cards") { [self] in run() }
    }

    deinit { close(wake) }

    /// Reads the map again (SIGHUP); from the loop.
    public func reload() {
        monitor.withLock { reloadAsked = true }
        poke()
    }

    /// Writes `value` as card `id`'s entry; `done` is called on the loop with the error, nil once
    /// the map on disk has it (its new map is posted before). From the loop.
    /// A nil `value` takes the card off the map (`card delete`).
    public func assign(id: String, value: String?, done: @escaping (String?) -> Void) {
        let number = nextAssignment
        nextAssignment += 1
        waiting[number] = done
        monitor.withLock { assignments.append((number, id, value)) }
        poke()
    }

    /// Hands a report to whoever waits for it (the loop calls this for each `Mailbox.Result.cards`).
    public func settled(_ report: Report) {
        if let number = report.assignment { waiting.removeValue(forKey: number)?(report.problem) }
    }

    /// Ends the thread (after the read or write in hand) and waits for it.
    public func finish() {
        monitor.withLock { stopping = true }
        poke()
        thread?.join()
        thread = nil
    }

    private func poke() {
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    private func run() {
        let folder = Paths.directory(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let notify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        defer { if notify >= 0 { close(notify) } }
        var watching = false
        var lastBytes: [UInt8]?? = .none
        var lastProblem: String?
        func watch() {
            guard notify >= 0, !watching else { return }
            let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
            watching = inotify_add_watch(notify, cPath(folder), mask) >= 0
        }
        func readMap(force: Bool) {
            switch CardMapFile.read(path) {
            case .success(let bytes):
                // Unchanged bytes (a second event for one save, a SIGHUP with nothing new) say nothing.
                if !force, case .some(let last) = lastBytes, last == bytes { return }
                lastBytes = .some(bytes)
                switch CardMapFile.parse(bytes ?? [], source: path) {
                case .success(let map):
                    lastProblem = nil
                    mailbox.post(result: .cards(Report(map: map, problem: nil, assignment: nil)))
                case .failure(let e):
                    lastProblem = e.message
                    mailbox.post(result: .cards(Report(map: nil, problem: e.message, assignment: nil)))
                }
            case .failure(let e):
                lastBytes = .none
                if e.message != lastProblem {
                    lastProblem = e.message
                    mailbox.post(result: .cards(Report(map: nil, problem: e.message, assignment: nil)))
                }
            }
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            watch()
            let (reload, work, stop) = monitor.withLock { () -> (Bool, [(number: Int, id: String, value: String?)], Bool) in
                defer { reloadAsked = false; assignments = [] }
                return (reloadAsked, assignments, stopping)
            }
            if stop { return }
            for job in work {
                var problem: String?
                do throws(CardMapError) { try CardMapFile.update(id: job.id, value: job.value, path: path) } catch { problem = error.message }
                // The new map first, so the reply follows the map it made.
                if problem == nil { readMap(force: false) }
                mailbox.post(result: .cards(Report(map: nil, problem: problem, assignment: job.number)))
            }
            if reload { readMap(force: true) }
            var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if watching { fds.append(pollfd(fd: notify, events: Int16(POLLIN), revents: 0)) }
            // Without a watch (the folder is not there yet) look again every few seconds.
            _ = poll(&fds, nfds_t(fds.count), watching ? -1 : 5000)
            var counter: UInt64 = 0
            _ = read(wake, &counter, 8)
            var changed = !watching
            if watching, fds[1].revents != 0 {
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(notify, $0.baseAddress, $0.count) }
                    guard n > 0 else { break }
                    var offset = 0
                    while offset + MemoryLayout<inotify_event>.size <= n {
                        let (mask, length) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                            let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                            return (event.mask, Int(event.len))
                        }
                        let start = offset + MemoryLayout<inotify_event>.size
                        let end = min(start + length, n)
                        let entry = FileSystemPath.string(buffer[start..<end].prefix { $0 != 0 })
                        if entry == name { changed = true }
                        // The folder itself went away (unmounted, removed): watch it again later.
                        if mask & UInt32(IN_IGNORED) != 0 { watching = false; changed = true }
                        offset = end
                    }
                }
            }
            if changed { readMap(force: false) }
        }
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// Reads shairport-sync's metadata pipe (config `airplayMetadata`) for the AirPlay sender's name
/// (`ssnc`/`snam`, the ANNOUNCE's `X-Apple-Client-Name`) and reports it as
/// `Event.sourceSender(name: "airplay", …)`: the core shows it with the source's interruption.
///
/// An `EventSource` on the loop's poll; it never blocks. The FIFO is jukebox's own: made here
/// (mode 0620, so shairport-sync, in the group jukebox, may write it) before shairport-sync
/// looks for it, opened `O_RDWR | O_NONBLOCK | O_NOFOLLOW` (read and write, so a writer closing
/// it never makes it read as ended, and the poll never spins). Something in its place that is not
/// a FIFO owned by this user (a link, a file, shairport-sync's own FIFO made 0666 because it
/// started first) is refused with one line and left alone: never followed, never deleted.
public final class AirPlayMetadata: EventSource {
    /// The pipe's path.
    public let path: String
    private let log: Log
    private var fd: Int32 = -1
    private var items = AirPlayMetadataItems()
    private var rejectedSaid = false

    /// Makes (if missing) and opens the pipe at `path`; a problem is logged once and nothing is read.
    public init(path: String, log: Log) {
        self.path = path
        self.log = log
        if let problem = open() { log.error("airplay metadata: \(path): \(problem); the AirPlay sender's name is not shown") }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Whether the pipe is open and read.
    public var isReading: Bool { fd >= 0 }

    public var fds: [Int32] { fd >= 0 ? [fd] : [] }

    public var needsMaintenance: Bool { false }

    public func maintain() {}

    public func read(fd: Int32) -> [Event] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var events: [Event] = []
        // At most 64 KiB a turn: a writer that floods the pipe does not keep the loop here.
        for _ in 0..<16 {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            for outcome in items.feed(buffer[0..<n]) {
                switch outcome {
                case .item(let item) where item.type == AirPlayMetadataItems.ssnc && item.code == AirPlayMetadataItems.snam:
                    events.append(.sourceSender(name: "airplay", sender: String(decoding: item.data, as: UTF8.self)))
                case .item:
                    break
                case .rejected(let why):
                    // Said once: the pipe's writer is not to be trusted with the log's size.
                    if !rejectedSaid { log.warning("airplay metadata: \(path): \(why) (said once)") }
                    rejectedSaid = true
                }
            }
        }
        return events
    }

    /// Makes and opens the pipe; what is wrong, or nil.
    private func open() -> String? {
        let made = mkfifo(cPath(path), 0o600) == 0
        if !made && errno != EEXIST { return "cannot make it: " + errnoText(errno) }
        var st = stat()
        guard lstat(cPath(path), &st) == 0 else { return errnoText(errno) }
        if let problem = Self.notOurs(st) { return problem + ", so it is not jukebox's own (remove it, and start jukebox before shairport-sync)" }
        let opened = Glibc.open(cPath(path), O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { return "cannot open it: " + errnoText(errno) }
        // Looked at again through the descriptor: the name may have changed hands meanwhile.
        guard fstat(opened, &st) == 0, Self.notOurs(st) == nil, fchmod(opened, 0o620) == 0 else {
            close(opened)
            return "changed while it was opened"
        }
        fd = opened
        return nil
    }

    /// Why `st` is not a FIFO of this user's, or nil.
    static func notOurs(_ st: stat) -> String? {
        let kind = st.st_mode & S_IFMT
        if kind != S_IFIFO { return kind == S_IFLNK ? "a symbolic link" : "not a FIFO" }
        if st.st_uid != geteuid() { return "owned by uid \(st.st_uid), not \(geteuid())" }
        return nil
    }
}

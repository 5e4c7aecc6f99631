// SPDX-License-Identifier: MIT
import CHTTP
import Glibc
import JukeboxSystem

/// One episode's audio downloaded to a file, on the calling thread (the feeds thread): into a new
/// temporary file beside it (`O_CREAT|O_EXCL|O_NOFOLLOW`, never through a link), fsynced and
/// renamed over `path` once whole, the folder fsynced; at most `maxBytes` (the budget left: more
/// ends it, "larger than the budget left"). Anything short of a whole file leaves nothing: the
/// temporary file is removed (one a killed player left is removed by the next download into the
/// folder). Not resumed across restarts: the core asks again and it starts over.
public enum EpisodeDownload {
    /// Downloads `url` to `path` (its folder made if missing); the bytes written, or why not.
    public static func run(_ url: String, to path: String, maxBytes: Int64, settings: FeedFetchSettings,
                           shouldStop: @escaping () -> Bool = { false }) -> Result<Int64, FeedFetchError> {
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard !folder.isEmpty else { return .failure(.failed("not an absolute path: \(path)")) }
        // The folder and those above it (the downloads folder, then the podcast's).
        var made = ""
        for part in folder.split(separator: "/") {
            made += "/" + part
            if !isDirectory(made), mkdir(cPath(made), 0o755) != 0, errno != EEXIST {
                return .failure(.failed("cannot make \(made): \(String(cString: strerror(errno)))"))
            }
        }
        // A download cut by a power cut or a SIGKILL left its temporary file: downloads run one at
        // a time on one thread of the one player (the state file's lock), so any is a leftover.
        for name in (try? directoryEntries(folder)) ?? [] where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            unlink(cPath(folder + "/" + name))
        }
        let temp: String, fd: Int32
        do { (temp, fd) = try createTemporary(beside: path, fallbackName: "episode") } catch {
            return .failure(.failed("cannot create the episode's file: \(error)"))
        }
        let sink = FileSink(fd: fd, maxBytes: maxBytes, deadline: monotonicNow() + settings.totalSeconds, shouldStop: shouldStop)
        let result = FeedHTTP.run(url, settings: settings, sink: sink)
        var failure = sink.failure(result)
        if failure == nil, fsync(fd) != 0 { failure = .failed("fsync \(temp): \(String(cString: strerror(errno)))") }
        close(fd)
        if failure == nil, rename(cPath(temp), cPath(path)) != 0 {
            failure = .failed("rename \(temp): \(String(cString: strerror(errno)))")
        }
        if let failure {
            unlink(cPath(temp))
            return .failure(failure)
        }
        let dirfd = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirfd >= 0 {
            fsync(dirfd)
            close(dirfd)
        }
        return .success(sink.written)
    }
}

/// A download's file and why it ended; touched by libcurl's callbacks on the fetching thread only.
final class FileSink: TransferSink {
    let fd: Int32
    let maxBytes: Int64
    let deadline: Double
    let shouldStop: () -> Bool
    var written: Int64 = 0
    var tooLarge = false
    var timedOut = false
    var stopped = false
    var writeError: String?

    init(fd: Int32, maxBytes: Int64, deadline: Double, shouldStop: @escaping () -> Bool) {
        self.fd = fd
        self.maxBytes = maxBytes
        self.deadline = deadline
        self.shouldStop = shouldStop
    }

    /// Writes `bytes` whole; false (the transfer ends) past the bound or on a write error.
    func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard written + Int64(bytes.count) <= maxBytes else {
            tooLarge = true
            return false
        }
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                writeError = String(cString: strerror(errno))
                return false
            }
            offset += n
        }
        written += Int64(bytes.count)
        return true
    }

    func stops() -> Bool {
        if shouldStop() { stopped = true }
        if monotonicNow() > deadline { timedOut = true }
        return stopped || timedOut
    }

    /// Why the transfer brought no whole file, or nil when it did.
    func failure(_ result: jb_http_result) -> FeedFetchError? {
        if tooLarge { return .failed("larger than the budget left (" + FeedFailure.size(maxBytes) + ")") }
        if let writeError { return .failed("cannot write the episode: \(writeError)") }
        if stopped { return .stopped }
        if timedOut { return .failed("not whole after the download's time limit") }
        if let words = FeedHTTP.failure(result) { return .failed(words) }
        return written > 0 ? nil : .failed("the server sent no audio")
    }
}

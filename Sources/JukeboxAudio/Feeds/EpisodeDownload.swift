// SPDX-License-Identifier: MIT
import CHTTP
import Glibc
import JukeboxSystem

/// One episode's audio downloaded to a file, on the calling thread (the feeds thread), resumed
/// where an earlier try stopped. The bytes go to a partial file beside it (`.NAME.partial`, opened
/// `O_NOFOLLOW`, never through a link) with a small record (`.NAME.partial.info`: the URL, the
/// server's validator, ETag else Last-Modified, and the total length); once whole it is fsynced and
/// renamed over `path`, the folder fsynced. A later try with a partial file and its record asks
/// `Range: bytes=N-` with `If-Range: validator`: a 206 from byte N of the same total appends; a 200
/// (a server that ignores ranges, or the file changed) starts over in the same file; a 416 or a
/// range that does not fit starts over at once. At most `maxBytes` (the budget left) in all,
/// what was kept included: more ends it ("larger than the budget left") and removes the partial
/// file. A partial file without a validator or a length cannot be resumed and is removed; one
/// partial file per folder is kept (another episode's is removed by the next download there).
public enum EpisodeDownload {
    /// Downloads `url` to `path` (its folder made if missing); the file's size, or why not.
    /// `progress` is told the bytes on disk and the whole length (nil: unknown) at most once a
    /// second or per 5 % of the length, on this thread.
    public static func run(_ url: String, to path: String, maxBytes: Int64, settings: FeedFetchSettings,
                           shouldStop: @escaping () -> Bool = { false },
                           progress: @escaping (Int64, Int64?) -> Void = { _, _ in }) -> Result<Int64, FeedFetchError> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let folder = parts.dropLast().joined(separator: "/")
        guard !folder.isEmpty, let name = parts.last, !name.isEmpty else { return .failure(.failed("not an absolute path: \(path)")) }
        // The folder and those above it (the downloads folder, then the podcast's).
        var made = ""
        for part in folder.split(separator: "/") {
            made += "/" + part
            if !isDirectory(made), mkdir(cPath(made), 0o755) != 0, errno != EEXIST {
                return .failure(.failed("cannot make \(made): \(String(cString: strerror(errno)))"))
            }
        }
        let partial = folder + "/." + name + ".partial"
        let info = partial + ".info"
        // Leftovers: temporary files of older versions, another episode's partial file (downloads
        // run one at a time on one thread of the one player: the state file's lock).
        for entry in (try? directoryEntries(folder)) ?? [] where entry.hasPrefix(".") {
            let ours = entry == "." + name + ".partial" || entry == "." + name + ".partial.info"
            if !ours, entry.hasSuffix(".tmp") || entry.hasSuffix(".partial") || entry.hasSuffix(".partial.info") {
                unlink(cPath(folder + "/" + entry))
            }
        }
        var resume = PartialRecord.read(info, url: url).flatMap { record -> (PartialRecord, Int64)? in
            let kept = fileSize(partial)
            return kept > 0 && kept < record.total && record.total <= maxBytes ? (record, kept) : nil
        }
        if resume == nil {
            unlink(cPath(info))
            unlink(cPath(partial))
        }
        while true {
            let outcome = attempt(url, partial: partial, info: info, resume: resume, maxBytes: maxBytes,
                                  settings: settings, shouldStop: shouldStop, progress: progress)
            switch outcome {
            case .restart where resume != nil:
                // A 416 or a range that does not fit: once more from the top.
                unlink(cPath(info))
                unlink(cPath(partial))
                resume = nil
                continue
            case .restart:
                return .failure(.failed("the server answered a range it was not asked"))
            case .failed(let failure, let keep):
                if !keep {
                    unlink(cPath(info))
                    unlink(cPath(partial))
                }
                return .failure(failure)
            case .whole(let size):
                if rename(cPath(partial), cPath(path)) != 0 {
                    let words = String(cString: strerror(errno))
                    unlink(cPath(partial))
                    unlink(cPath(info))
                    return .failure(.failed("rename \(partial): \(words)"))
                }
                unlink(cPath(info))
                let dirfd = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                if dirfd >= 0 {
                    fsync(dirfd)
                    close(dirfd)
                }
                return .success(size)
            }
        }
    }

    enum Attempt {
        case whole(Int64)
        /// Why not, and whether the partial file may be resumed by a later try.
        case failed(FeedFetchError, keep: Bool)
        case restart
    }

    /// One request into `partial`: from the top, or from `resume`'s byte with its validator.
    static func attempt(_ url: String, partial: String, info: String, resume: (PartialRecord, Int64)?, maxBytes: Int64,
                        settings: FeedFetchSettings, shouldStop: @escaping () -> Bool,
                        progress: @escaping (Int64, Int64?) -> Void) -> Attempt {
        let flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (resume == nil ? O_TRUNC : 0)
        let fd = open(cPath(partial), flags, 0o644)
        guard fd >= 0 else {
            return .failed(.failed("cannot create the episode's file: \(String(cString: strerror(errno)))"), keep: false)
        }
        defer { close(fd) }
        let kept = resume?.1 ?? 0
        if kept > 0, lseek(fd, off_t(kept), SEEK_SET) != off_t(kept) || ftruncate(fd, off_t(kept)) != 0 {
            return .failed(.failed("cannot seek in the episode's file"), keep: false)
        }
        let sink = FileSink(fd: fd, maxBytes: maxBytes, deadline: monotonicNow() + settings.totalSeconds, shouldStop: shouldStop)
        sink.url = url
        sink.info = info
        sink.resume = resume
        sink.written = kept
        sink.progress = progress
        // A try that fails before its first byte (no network) keeps what an earlier one kept.
        sink.recorded = resume != nil
        let result = FeedHTTP.run(url, settings: settings, sink: sink, rangeFrom: kept, ifRange: resume?.0.validator)
        if sink.badRange || (resume != nil && result.status == 416) { return .restart }
        if let failure = sink.failure(result) {
            let keep = sink.recorded && !sink.tooLarge && !sink.overLength && sink.writeError == nil && sink.written > 0
            if keep { fsync(fd) }
            return .failed(failure, keep: keep)
        }
        if let total = sink.total, sink.written != total {
            return .failed(.failed("the server sent \(sink.written) bytes of \(total)"), keep: false)
        }
        if fsync(fd) != 0 { return .failed(.failed("fsync \(partial): \(String(cString: strerror(errno)))"), keep: false) }
        return .whole(sink.written)
    }
}

/// What a resumed download must find again: the URL asked, the server's validator and the total
/// length, in `.NAME.partial.info` (three lines, at most 2 KiB; anything else is no record).
struct PartialRecord: Equatable {
    var url: String
    var validator: String
    var total: Int64

    static func read(_ path: String, url: String) -> PartialRecord? {
        guard let bytes = try? readFile(path, limit: 2048) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, String(lines[0]) == url, let total = Int64(lines[2]), total > 0,
              let validator = PartialRecord.validator(String(lines[1])) else { return nil }
        return PartialRecord(url: url, validator: validator, total: total)
    }

    /// A validator as sent back: printable ASCII, 1 to 255 bytes; else none (not resumable).
    static func validator(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 255, trimmed.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        return trimmed
    }

    /// Written before the body's first byte, so a partial file on disk always has its record.
    func save(_ path: String) -> Bool {
        let text = url + "\n" + validator + "\n" + String(total) + "\n"
        let fd = open(cPath(path), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) } == bytes.count
    }
}

/// The size of the file at `path` (not followed through a link), 0 when there is none.
func fileSize(_ path: String) -> Int64 {
    var info = stat()
    guard lstat(cPath(path), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return 0 }
    return Int64(info.st_size)
}

private extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\r" { s = s.dropLast() }
        return String(s)
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
    /// The URL, the record's path and what is resumed (set by `EpisodeDownload.attempt`).
    var url = ""
    var info = ""
    var resume: (PartialRecord, Int64)?
    /// The last response's status line and headers so far (a redirect's hop starts afresh).
    var status = 0
    var headers: [String: String] = [:]
    /// Whether the first body byte was seen (and the response judged).
    var decided = false
    /// The whole file's length as the server said it; nil when it did not.
    var total: Int64?
    /// The partial file has its record (it may be resumed).
    var recorded = false
    /// A 206 that is not the range asked for, or a range without a try to resume.
    var badRange = false
    /// More bytes than the length the server said.
    var overLength = false
    /// Told how far the file is (`EpisodeDownload.run`'s `progress`), and when it was last told.
    var progress: (Int64, Int64?) -> Void = { _, _ in }
    var toldAt = -Double.infinity
    var toldBytes: Int64 = -1

    init(fd: Int32, maxBytes: Int64, deadline: Double, shouldStop: @escaping () -> Bool) {
        self.fd = fd
        self.maxBytes = maxBytes
        self.deadline = deadline
        self.shouldStop = shouldStop
    }

    func header(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = [:]
            let words = line.split(separator: " ")
            status = words.count > 1 ? Int(words[1]) ?? 0 : 0
            return
        }
        guard let colon = line.firstIndex(of: ":"), headers.count < 64 else { return }
        headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...])
    }

    /// Judges the response at its first body byte: a 206 of the range asked appends, anything
    /// else starts the file over; the record is written before the first byte is.
    func decide() -> Bool {
        decided = true
        let length = headers["content-length"].flatMap { Int64($0.trimmingSpaces) }
        if status == 206 {
            guard let (record, kept) = resume, let range = headers["content-range"].flatMap(Self.contentRange),
                  range.first == kept, range.total == record.total else {
                badRange = true
                return false
            }
            total = record.total
            recorded = true
            return true
        }
        if written > 0 {
            // The server ignores ranges, or the file changed (If-Range): the whole file, afresh.
            guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                writeError = String(cString: strerror(errno))
                return false
            }
            written = 0
        }
        unlink(info)
        recorded = false
        total = length
        let validator = (headers["etag"] ?? headers["last-modified"]).flatMap(PartialRecord.validator)
        if let total, let validator, total > 0 {
            recorded = PartialRecord(url: url, validator: validator, total: total).save(info)
        }
        if let total, total > maxBytes {
            tooLarge = true
            return false
        }
        return true
    }

    /// `bytes N-M/T` as its first byte and total; nil when it does not read so.
    static func contentRange(_ text: String) -> (first: Int64, total: Int64)? {
        let words = text.trimmingSpaces.split(separator: " ")
        guard words.count == 2, words[0].lowercased() == "bytes" else { return nil }
        let parts = words[1].split(separator: "/")
        guard parts.count == 2, let total = Int64(parts[1]), let dash = parts[0].firstIndex(of: "-"),
              let first = Int64(parts[0][..<dash]) else { return nil }
        return (first, total)
    }

    /// Writes `bytes` whole; false (the transfer ends) past the bound or on a write error.
    func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !decided, !decide() { return false }
        if let total, written + Int64(bytes.count) > total {
            overLength = true
            return false
        }
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
        tell()
        return true
    }

    /// Reports the bytes so far at most once a second or per 5 % of the length (and at the
    /// first byte, so a resumed download says at once where it starts).
    func tell() {
        let now = monotonicNow()
        let step = total.map { max(1, $0 / 20) } ?? Int64.max
        guard toldBytes < 0 || now - toldAt >= 1 || written - toldBytes >= step else { return }
        toldAt = now
        toldBytes = written
        progress(written, total)
    }

    func stops() -> Bool {
        if shouldStop() { stopped = true }
        if monotonicNow() > deadline { timedOut = true }
        return stopped || timedOut
    }

    /// Why the transfer brought no whole file, or nil when it did.
    func failure(_ result: jb_http_result) -> FeedFetchError? {
        if tooLarge { return .failed("larger than the budget left (" + FeedFailure.size(maxBytes) + ")") }
        if overLength { return .failed("the server sent more than the length it said") }
        if let writeError { return .failed("cannot write the episode: \(writeError)") }
        if stopped { return .stopped }
        if timedOut { return .failed("not whole after the download's time limit") }
        if let words = FeedHTTP.failure(result) { return .failed(words) }
        return written > 0 ? nil : .failed("the server sent no audio")
    }
}

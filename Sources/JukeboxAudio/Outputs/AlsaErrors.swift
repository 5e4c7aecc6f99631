// SPDX-License-Identifier: MIT
import CALSA
import Glibc
import JukeboxSystem

// The one place where ALSA return codes become `OutputError`s.
enum AlsaErrors {
    static func text(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    /// Maps a failed `snd_pcm_open`.
    static func openError(_ code: Int32, device: String) -> OutputError {
        switch -code {
        case EBUSY, EAGAIN:
            return OutputError(kind: .busy, message: "\(device): device is busy", holder: BusyHolder.find())
        case ENODEV, ENOENT, EIO, EBADFD, ENXIO:
            return OutputError(kind: .lost, message: "\(device): \(text(code))")
        case EINVAL:
            return OutputError(kind: .unsupported, message: "\(device): \(text(code))")
        default:
            return OutputError(kind: .other, message: "\(device): \(text(code))")
        }
    }

    /// Maps a write, pause or prepare failure that `snd_pcm_recover` could not handle.
    static func streamError(_ code: Int32, device: String, doing what: String) -> OutputError {
        switch -code {
        case ENODEV, ENOENT, EIO, EBADFD, ENXIO, EPIPE, ESTRPIPE:
            return OutputError(kind: .lost, message: "\(device): \(what): \(text(code))")
        case ENOSYS:
            return OutputError(kind: .unsupported, message: "\(device): \(what): \(text(code))")
        default:
            return OutputError(kind: .other, message: "\(device): \(what): \(text(code))")
        }
    }
}

/// Finds who holds a busy playback device, via /proc/asound/card*/pcm*p/sub*/status (`owner_pid`)
/// and /proc/PID/comm. Best effort: nil when nothing readable names a process.
enum BusyHolder {
    static func find() -> String? {
        for status in paths(matching: "/proc/asound/card*/pcm*p/sub*/status") {
            guard let text = readFileText(status) else { continue }
            for line in text.split(separator: "\n") where line.hasPrefix("owner_pid") {
                guard let pid = Int32(line.split(separator: ":").last.map { String($0).trimmingASCIIWhitespace() } ?? ""),
                      pid > 0, pid != getpid() else { continue }
                let name = readFileText("/proc/\(pid)/comm").map { $0.trimmingASCIIWhitespace() }
                return name.map { "\($0) (pid \(pid))" } ?? "pid \(pid)"
            }
        }
        return nil
    }

    /// The process whose pid a device's lock file holds (the test device writes its holder's pid there).
    static func fromLockFile(_ path: String) -> String? {
        guard let text = readFileText(path), let pid = Int32(text.trimmingASCIIWhitespace()), pid > 0 else { return nil }
        let name = readFileText("/proc/\(pid)/comm").map { $0.trimmingASCIIWhitespace() }
        return name.map { "\($0) (pid \(pid))" } ?? "pid \(pid)"
    }

    private static func paths(matching pattern: String) -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        guard glob(pattern, 0, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// The appliance image's problems file (`/run/jukebox-setup/problems`, written by
/// `jukebox-setup` at every boot before the player starts), read by the loop at start and at a
/// reload. Read on the loop on purpose: it is a tmpfs file of a few lines and only its first
/// `SetupProblems.maxFileBytes` are read, with no wait on a device (a regular file only, opened
/// without following a link: `openRegularFile`). What the lines say is the core's
/// (`SetupProblems.lines`, `Event.setupProblems`).
public enum SetupProblemsFile {
    /// The file's lines (inert, bounded), and why it could not be read (nil when it was, or is
    /// not there: no file is no problem). An unreadable file is itself one line, so that it is said.
    public static func read(_ path: String) -> (lines: [String], error: String?) {
        let fd: Int32
        do {
            fd = try openRegularFile(path, noFollow: true)
        } catch {
            if error.errno == ENOENT { return ([], nil) }
            return ([SetupProblems.unreadable(error.description)], error.description)
        }
        defer { close(fd) }
        // One byte more than is kept tells whether the file goes on.
        var bytes = [UInt8](repeating: 0, count: SetupProblems.maxFileBytes + 1)
        var got = 0
        while got < bytes.count {
            let n = retryingEINTR { bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, $0.count - got) } }
            if n < 0 {
                let reason = SystemError(call: "read", subject: path, errno: errno).description
                return ([SetupProblems.unreadable(reason)], reason)
            }
            if n == 0 { break }
            got += n
        }
        return (SetupProblems.lines(Array(bytes[0..<got]), cut: false), nil)
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The folder the control socket falls back to when there is no runtime directory:
/// `$TMPDIR/jukebox-UID` (`/tmp/jukebox-UID`). Anyone can create that name in a shared /tmp
/// first and plant a socket there, so both ends use it only when it is this user's own: a real
/// folder (not a link), owned by the user, mode 0700.
public enum SocketFolder {
    /// The `call` of the error `check` throws.
    public static let refusing = "refusing the socket folder"

    /// The fallback folder's path for this user.
    public static func fallback() -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/jukebox-\(getuid())"
    }

    /// What is wrong with `folder` as this user's private folder, or nil when nothing is: it must
    /// be a folder itself (no link), owned by the user and closed to everyone else (mode 0700).
    public static func problem(_ folder: String) -> String? {
        var st = stat()
        guard lstat(cPath(folder), &st) == 0 else { return errnoText(errno) }
        if (st.st_mode & S_IFMT) != S_IFDIR { return (st.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a folder" }
        if st.st_uid != getuid() { return "owned by uid \(st.st_uid), not \(getuid())" }
        let mode = st.st_mode & 0o7777
        if mode != 0o700 { return "mode " + String(mode, radix: 8) + ", not 700" }
        return nil
    }

    /// Throws when the socket at `path` lies in the fallback folder and that folder is not this
    /// user's private one; a socket anywhere else (a runtime directory, `--socket`) is as given.
    /// With `create` a missing fallback folder is made first (mode 0700).
    public static func check(socket path: String, create: Bool) throws(SystemError) {
        let folder = Paths.directory(path)
        guard folder == fallback() else { return }
        if create && mkdir(cPath(folder), 0o700) != 0 && errno != EEXIST {
            throw SystemError(call: "mkdir", subject: folder, errno: errno)
        }
        if let problem = problem(folder) {
            throw SystemError(call: refusing, subject: folder, errno: EACCES,
                              reason: "\(problem), so another user may have made it (remove it, or choose a socket with --socket)")
        }
    }
}

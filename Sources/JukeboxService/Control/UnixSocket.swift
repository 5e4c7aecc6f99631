// SPDX-License-Identifier: MIT
import Glibc
import JukeboxSystem

/// Unix stream sockets by path, shared by the control socket and the MPD face's Unix listeners:
/// making way for a listener, the address, and a client's connection.
enum UnixSocket {
    /// Makes way for a socket at `path`: nothing there, or a stale socket (no one answers), which
    /// is removed. A live socket is an error (two players never steal each other's socket), and so
    /// is anything that is not a socket (a regular file, a folder, a link): it is not ours to delete.
    static func clearStale(_ path: String) throws(SystemError) {
        var info = stat()
        guard lstat(cPath(path), &info) == 0 else { return }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFSOCK else {
            let what = kind == S_IFREG ? "a regular file" : kind == S_IFDIR ? "a folder" : kind == S_IFLNK ? "a symbolic link" : "not a socket"
            throw SystemError(call: "refusing the socket path", subject: path, errno: EEXIST,
                              reason: "it is \(what), not a stale socket; not deleting it (remove it, or choose another socket path)")
        }
        if let probe = try? connect(path: path) {
            close(probe)
            throw SystemError(call: "bind (another jukebox is listening)", subject: path, errno: EADDRINUSE)
        }
        unlink(cPath(path))
    }

    static func address(_ path: String) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return addr
    }

    /// Connects to a listening socket (client side, blocking); the fd is the caller's to close.
    static func connect(path: String) throws(SystemError) -> Int32 {
        let fd = Int32(try sys("socket", path) { Int(socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) })
        var addr = address(path)
        do {
            try sys("connect", path) {
                Int(withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } })
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }
}

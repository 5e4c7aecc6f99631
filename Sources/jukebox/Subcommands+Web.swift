// SPDX-License-Identifier: MIT
import CWeb
import Glibc
import JukeboxAudio
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxWeb

extension Subcommands {
    /// `jukebox web …`: the web face, its own process (docs/WEB.md). Serves systemd's socket
    /// (LISTEN_FDS=1 for this pid: fd 3) or binds `--listen`; prints `web: listening on
    /// http://HOST:PORT/`; exits 0 on SIGTERM/SIGINT, or after `--idle-exit` seconds without a
    /// request and with no event stream open.
    static func web(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config", "--socket", "--listen", "--assets", "--state", "--idle-exit"],
                              flags: [], command: "web")
        if a.wantsHelp { return help(Help.web) }
        guard a.positional.isEmpty else { throw UsageError(message: "web takes no arguments (see jukebox web --help)") }
        var config: Config?
        if let path = a.options["--config"] {
            do { config = try Config.load(path: path).config } catch {
                writeAll(2, "jukebox: error: \(error)\n")
                return 1
            }
        }
        let socket = a.options["--socket"].map(absolutePath)
            ?? config?.socketPath.flatMap { $0.isEmpty ? nil : $0 } ?? ControlSocket.defaultPath()
        guard let state = a.options["--state"].map(absolutePath) ?? config?.statePath.map(Paths.directory) else {
            throw UsageError(message: "web needs --state DIR (where the PIN's hash is kept) or a --config with a state file")
        }
        let idleExit = try a.int("--idle-exit", in: 0...86_400) ?? 0
        let assets = a.options["--assets"].map(absolutePath) ?? defaultAssets()

        // The signals are taken by sigtimedwait below, in no thread's handler; a closed peer is an
        // error on its write, not a SIGPIPE.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        let fd: Int32, host: String
        if let fds = getenv("LISTEN_FDS").map({ String(cString: $0) }), let pid = getenv("LISTEN_PID").map({ String(cString: $0) }),
           fds == "1", pid == String(getpid()) {
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDNAMES")
            fd = 3
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var text = [CChar](repeating: 0, count: 64)
            host = jb_web_bound_host(fd, &text, text.count) == 0 ? text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "0.0.0.0"
        } else {
            let (h, port) = try listenAddress(a.options["--listen"] ?? "127.0.0.1:8080")
            var error = [CChar](repeating: 0, count: 256)
            fd = jb_web_listen(h, UInt32(port), &error, error.count)
            guard fd >= 0 else {
                writeAll(2, "jukebox: web: " + error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "\n")
                return 1
            }
            host = h
        }
        let port = jb_web_bound_port(fd)
        var webOptions = WebServer.Options(socketPath: socket, assets: assets, stateFolder: state)
        webOptions.configPath = a.options["--config"].map(absolutePath)
        // Covers embedded in tags are read here, by TagLib in this process: a malformed file costs
        // the web face, never the player (docs/WEB.md, "Covers").
        webOptions.embeddedPicture = { path, limit in TagReader.picture(path: path, limit: limit)?.bytes }
        webOptions.playable = { Decoder.playableProblem(path: $0) }
        let server = WebServer(options: webOptions)
        if let error = server.start(listening: fd) {
            writeAll(2, "jukebox: web: \(error)\n")
            return 1
        }
        writeAll(1, "web: listening on http://\(host.contains(":") ? "[\(host)]" : host):\(port)/\n")
        while true {
            var wait = timespec(tv_sec: 1, tv_nsec: 0)
            let got = sigtimedwait(&signals, nil, &wait)
            if got == SIGTERM || got == SIGINT { break }
            if idleExit > 0, let idle = server.idleSeconds(), idle >= Double(idleExit) {
                writeAll(1, "web: idle for \(idleExit) s, exiting\n")
                break
            }
        }
        server.stop()
        return 0
    }

    /// `HOST:PORT` or `[IPv6]:PORT`, numeric.
    static func listenAddress(_ text: String) throws(UsageError) -> (String, Int) {
        let usage = UsageError(message: "--listen HOST:PORT (a numeric address, [::1]:8080 for IPv6; port 0: any free port)")
        guard let colon = text.lastIndex(of: ":") else { throw usage }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { throw usage }
        return (host, port)
    }

    /// The package's folder, or in a build tree Sources/JukeboxWeb/Assets above the executable.
    static func defaultAssets() -> String {
        var folder = Paths.directory(readLink("/proc/self/exe") ?? "")
        while folder.count > 1 {
            let candidate = folder + "/Sources/JukeboxWeb/Assets"
            if isDirectory(candidate) { return candidate }
            folder = Paths.directory(folder)
        }
        return "/usr/share/jukebox/web"
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Help {
    static let web = """
    Usage: jukebox web [--config FILE] [--socket PATH] [--listen HOST:PORT] [--assets DIR]
                       [--state DIR] [--idle-exit SECONDS]

    The web face (docs/WEB.md): serves the web app and its API, and speaks to the running player
    only through its control socket. Under systemd socket activation it serves the socket it is
    handed; else it listens on --listen (default 127.0.0.1:8080; port 0: any free port). Prints
    `web: listening on http://HOST:PORT/` once it serves. Only this machine and local networks
    may connect. Playback and the queue's order are open; adding, loading, the sleep timer, cards
    and saving need the PIN set at first use.

    Options:
      --config FILE       the player's config: its control socket and its state file's folder
      --socket PATH       the control socket (default: the config's, else the player's default)
      --listen HOST:PORT  where to listen without socket activation (default 127.0.0.1:8080)
      --assets DIR        the web app's files (default /usr/share/jukebox/web; in a build tree
                          Sources/JukeboxWeb/Assets)
      --state DIR         where the PIN's hash (web-pin, mode 0600) is kept (default: the folder
                          of the config's state file)
      --idle-exit SECONDS exit after this long with no request and no page open (default 0: never)
    """
}

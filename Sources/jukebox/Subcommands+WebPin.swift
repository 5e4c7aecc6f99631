// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem
import JukeboxWeb

extension Subcommands {
    /// `jukebox web-pin [--config FILE] [--state DIR]`: sets (or resets) the web face's PIN on the
    /// box itself. The web page never sets the first PIN: whoever runs this has a shell on the box
    /// (or root), which is the proof of access the first visitor on the network does not have
    /// (docs/WEB.md "Security"). Reads the PIN from standard input (twice, without echo, on a
    /// terminal; one line otherwise), checks it with the web face's own rule, stores its hash.
    static func webPin(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config", "--state"], flags: [], command: "web-pin")
        if a.wantsHelp { return help(Help.webPin) }
        guard a.positional.isEmpty else { throw UsageError(message: "web-pin takes no arguments; it reads the PIN from standard input") }
        var statePath: String?
        if let path = a.options["--config"] {
            do { statePath = try Config.load(path: path).config.statePath } catch {
                writeAll(2, "jukebox: error: \(error)\n")
                return 1
            }
        }
        guard let folder = a.options["--state"].map(absolutePath) ?? statePath.map(Paths.directory) else {
            throw UsageError(message: "web-pin needs --state DIR (the web face's --state) or a --config with a state file")
        }
        let terminal = isatty(0) == 1
        guard let pin = readSecret(prompt: "New web PIN: ", terminal: terminal) else {
            writeAll(2, "jukebox: web-pin: no PIN given\n")
            return 1
        }
        if let problem = pinProblem(pin) {
            writeAll(2, "jukebox: web-pin: \(problem)\n")
            return 1
        }
        if terminal {
            guard readSecret(prompt: "The same again: ", terminal: true) == pin else {
                writeAll(2, "jukebox: web-pin: the two differ; nothing changed\n")
                return 1
            }
        }
        let store = PinStore(folder: folder)
        do throws(SystemError) { try store.set(pin) } catch {
            writeAll(2, "jukebox: web-pin: cannot store the PIN: \(error)\n")
            return 1
        }
        // Run as root (sudo): the file goes to the folder's owner, the user the web face runs as.
        if geteuid() == 0 {
            var st = stat()
            if stat(folder, &st) == 0 { _ = lchown(store.path, st.st_uid, st.st_gid) }
        }
        writeAll(1, "web-pin: the PIN is set (\(store.path)); sign in on the page with it\n")
        return 0
    }

    /// One line from standard input (at most 1 KiB), without its newline; echo off on a terminal.
    private static func readSecret(prompt: String, terminal: Bool) -> String? {
        var saved = termios()
        if terminal {
            writeAll(2, prompt)
            tcgetattr(0, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &quiet)
        }
        defer {
            if terminal {
                tcsetattr(0, TCSAFLUSH, &saved)
                writeAll(2, "\n")
            }
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 1024 {
            let n = read(0, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            bytes.append(byte)
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

extension Help {
    static let webPin = """
    Usage: jukebox web-pin [--config FILE] [--state DIR]

    Sets the web face's PIN, or a new one in place of the old, on the box itself: the page never
    lets its first visitor choose it. Reads the PIN (4 to 64 characters, no control characters)
    from standard input: on a terminal twice, without echo; else one line. Stores only its
    yescrypt hash, in web-pin (mode 0600) in the web face's state folder, owned by that folder's
    owner when run as root. On the box: sudo jukebox web-pin --config /etc/jukebox/config.json

    Options:
      --config FILE       the player's config: the PIN goes beside its state file
      --state DIR         the web face's --state folder instead
    """
}

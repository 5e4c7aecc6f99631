// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

extension Subcommands {
    /// `jukebox source begin|end NAME`: run by another program's hooks (docs/SOURCES.md).
    static func source(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--socket", "--sender", "--watch", "--timeout"], flags: [], command: "source")
        if a.wantsHelp { return help(Help.source) }
        guard a.positional.count == 2, let verb = a.positional.first, verb == "begin" || verb == "end" else {
            throw UsageError(message: "usage: jukebox source begin|end NAME (see: jukebox source --help)")
        }
        let name = a.positional[1]
        guard OtherSource.isValidName(name) else {
            throw UsageError(message: "a source's name is 1 to 32 of a-z, 0-9 and - (airplay, bluetooth)")
        }
        let path = a.options["--socket"] ?? ControlSocket.defaultPath()
        let timeout = Double(try a.int("--timeout", in: 1...3600) ?? 10)
        if verb == "end" {
            switch SourceHook.end(path: path, name: name, timeout: timeout) {
            case .success(let reply?) where reply.hasPrefix("ok"): return 0
            case .success(let reply):
                writeAll(2, "jukebox: " + DisplayText.inert(reply ?? "no reply within \(Int(timeout)) s") + "\n")
                return 1
            case .failure(let error):
                // No player: nothing to give back.
                writeAll(2, "jukebox: no jukebox answers at \(path) (\(error))\n")
                return 0
            }
        }
        let pid = try a.int("--watch", in: 2...Int(Int32.max)).map { pid_t($0) } ?? getppid()
        let watched: Int32
        switch SourceHook.watch(pid) {
        case .success(let fd): watched = fd
        case .failure(let error):
            writeAll(2, "jukebox: cannot watch the source's program: \(error)\n")
            return 1
        }
        let outcome = SourceHook.begin(path: path, name: name, sender: a.options["--sender"] ?? "", watched: watched, timeout: timeout)
        switch outcome {
        case .granted: break
        case .refused(let reply): writeAll(2, "jukebox: " + DisplayText.inert(reply) + "\n")
        case .noPlayer(let why): writeAll(2, "jukebox: no jukebox answers at \(path) (\(why)); the source plays on its own\n")
        case .slow: writeAll(2, "jukebox: the player did not release the device within \(Int(timeout)) s; the source plays anyway\n")
        }
        return outcome.status
    }
}

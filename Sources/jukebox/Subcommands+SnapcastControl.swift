// SPDX-License-Identifier: MIT
import Glibc
import JukeboxService
import JukeboxSystem

extension Subcommands {
    /// `jukebox snapcast-control [--socket PATH]`: snapserver's stream plugin (`SnapcastControl`).
    /// snapserver adds arguments of its own (`--stream=ID`, `--snapcast-port=N`, in later versions
    /// `--snapcast-host=H` and `controlscriptparams`): every `--name=value` is accepted and ignored,
    /// so a newer snapserver does not stop the bridge.
    static func snapcastControl(_ args: [String]) throws(UsageError) -> Int32 {
        var socket: String?
        var rest = args[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "-h", "--help": return help(Help.snapcastControl)
            case "--socket":
                guard let value = rest.popFirst(), !value.isEmpty else { throw UsageError(message: "--socket needs a path") }
                socket = absolutePath(value)
            case _ where arg.hasPrefix("--socket="):
                socket = absolutePath(String(arg.dropFirst("--socket=".count)))
            case _ where arg.hasPrefix("--") && arg.contains("="):
                continue  // snapserver's own
            default:
                throw UsageError(message: "snapcast-control: unexpected argument '\(arg)' (see: jukebox snapcast-control --help)")
            }
        }
        let fixed = socket ?? getenv("JUKEBOX_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        let bridge = SnapcastControl(socketPath: {
            if let fixed { return fixed }
            // Not ControlSocket.defaultPath() first: under snapserver's unit, RUNTIME_DIRECTORY is
            // snapserver's own folder, and this runs as snapserver's user.
            if fileExists("/run/jukebox/control") { return "/run/jukebox/control" }
            return ControlSocket.defaultPath()
        })
        return bridge.run()
    }
}

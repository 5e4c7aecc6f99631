// SPDX-License-Identifier: MIT
import JukeboxService
import Glibc
import JukeboxSystem

// Thin on purpose: pick the subcommand, map usage errors to exit code 2.
// A closed log pipe or a vanished socket client must give EPIPE, never kill the player.
signal(SIGPIPE, SIG_IGN)
keepSteadyBuffersMapped()
// The loader has just mapped and relocated ~50 shared objects (libcurl's and microhttpd's TLS
// stacks, libstdc++, TagLib): ~11 MiB of their pages are resident and most are never touched
// again. Given back before a long-running subcommand starts, they do not add up with what its
// start-up touches next: `jukebox play`'s VmHWM 19.9-21.1 -> 15.6-16.6 MiB (docs/TESTING.md,
// "Memory"). First thing: decoding the arguments alone faults in ~1.5 MiB more. It costs ~1.5 ms
// of CPU (pages faulted in again), so short commands (ctl, probe) skip it.
// Read from the C arguments: the subcommand's name is all that is needed here.
func isLongRunning() -> Bool {
    let argv = CommandLine.unsafeArgv
    if let name = argv[0], strstr(name, "snapcast-control") != nil { return true }
    guard CommandLine.argc > 1, let first = argv[1] else { return false }
    let names: [String] = ["play", "run", "demo", "web", "mpd-tcp"]
    return names.contains { strcmp(first, $0) == 0 }
}
if isLongRunning() { ColdPages.release() }
// snapserver's controlscript must be a file: a link to this binary by that name is the command.
// The arguments are decoded losslessly (`FileSystemPath`): `CommandLine.arguments` repairs bytes
// that are not UTF-8 into U+FFFD, and `jukebox play $'\xe9t\xe9.wav'` then named no file.
let rawArguments = (0..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { pathString(cString: $0) } }
let calledAs = rawArguments.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? ""
let args = calledAs == "snapcast-control" ? ["snapcast-control"] + rawArguments.dropFirst() : Array(rawArguments.dropFirst())
let code: Int32
do throws(UsageError) {
    switch args.first {
    case "play": code = try Subcommands.play(Array(args.dropFirst()))
    case "run": code = try Subcommands.run(Array(args.dropFirst()))
    case "demo": code = try Subcommands.demo(Array(args.dropFirst()))
    case "ctl": code = try Subcommands.ctl(Array(args.dropFirst()))
    case "yield": code = try Subcommands.yield(Array(args.dropFirst()))
    case "source": code = try Subcommands.source(Array(args.dropFirst()))
    case "probe": code = try Probe.run(Array(args.dropFirst()))
    case "check-config": code = try Subcommands.checkConfig(Array(args.dropFirst()))
    case "mpd-tcp": code = try Subcommands.mpdTCP(Array(args.dropFirst()))
    case "mqtt-forget": code = try Subcommands.mqttForget(Array(args.dropFirst()))
    case "web": code = try Subcommands.web(Array(args.dropFirst()))
    case "web-pin": code = try Subcommands.webPin(Array(args.dropFirst()))
    case "snapcast-control": code = try Subcommands.snapcastControl(Array(args.dropFirst()))
    case "--version", "-V", "version":
        writeAll(1, "jukebox \(jukeboxVersion)\n")
        code = 0
    case "--help", "-h", "help":
        writeAll(1, Help.main + "\n")
        code = 0
    case nil:
        writeAll(2, Help.main + "\n")
        code = 2
    case let other?:
        throw UsageError(message: "unknown command '\(other)' (see: jukebox --help)")
    }
} catch {
    writeAll(2, "jukebox: \(error.message)\n")
    code = 2
}
// Not exit(code): threads nobody waits for may still be inside a library whose exit handlers
// would free what they use (LeaveProcess.swift).
leaveProcess(code)

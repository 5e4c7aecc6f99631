// SPDX-License-Identifier: MIT
import CLinux
import Glibc
import JukeboxCore
import JukeboxSystem

/// `jukebox source begin|end`: the glue another program's hooks run (shairport-sync's
/// `run_this_before_play_begins` / `run_this_after_play_ends`, with `wait_for_completion`).
///
/// `begin` asks the player for the device (`source begin NAME SENDER`) and returns once it is free,
/// so the program opens a device no one holds. The source is held by that connection, as a
/// `yield` is: a small process forked off (the holder) keeps it open until the player says the
/// source ended (`source end`), the player goes, or the program it speaks for ends. That program
/// is watched through a pidfd (by default the hook's parent: shairport-sync runs its hooks with
/// fork and execv, no shell between), so a program that crashes, or is killed, ends the source at
/// once: the kernel closes the holder's connection with it, and the player resumes. No lease, no
/// timer: nothing to tune, and a source that plays for hours is never cut off.
public enum SourceHook {
    /// What `begin` came to, and the exit status the hook gives.
    public enum Outcome: Equatable, Sendable {
        /// The device is free; the holder (its pid) keeps the source until it ends. Status 0.
        case granted(holder: pid_t)
        /// The player refused the source (`forbidden`): it keeps the device. Status 1.
        case refused(String)
        /// No player answers: the program plays on its own. Status 0.
        case noPlayer(String)
        /// The player did not release the device within the time given; the holder still keeps
        /// the source (the player ends it with the program). Status 0.
        case slow(holder: pid_t)

        /// The hook's exit status.
        public var status: Int32 {
            switch self {
            case .granted, .noPlayer, .slow: return 0
            case .refused: return 1
            }
        }
    }

    /// A pidfd for `pid` (it polls readable once that process ends), or the reason there is none.
    public static func watch(_ pid: pid_t) -> Result<Int32, SystemError> {
        // pid 1 is what a hook's parent becomes when the program that ran it is gone already.
        guard pid > 1 else { return .failure(SystemError(call: "pidfd_open", subject: "pid \(pid)", errno: ESRCH, reason: "no program to watch")) }
        let fd = clinux_pidfd_open(pid)
        return fd >= 0 ? .success(fd) : .failure(SystemError(call: "pidfd_open", subject: "pid \(pid)", errno: errno))
    }

    /// Begins source `name` (valid: `OtherSource.isValidName`) for the process behind `watched`.
    public static func begin(path: String, name: String, sender: String, watched: Int32, timeout: Double) -> Outcome {
        // One line: the sender is text from anywhere; the player makes it inert, a newline here
        // must not make it a second command.
        let who = String(String.UnicodeScalarView(sender.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }).prefix(256))
        let client: ControlClient, reply: String?
        do { (client, reply) = try ControlClient.connect(path: path, request: "source begin \(name) \(who)", timeout: timeout) } catch {
            return .noPlayer("\(error)")
        }
        if let reply, reply.hasPrefix("error") { return .refused(reply) }
        if reply == nil && client.isClosed { return .noPlayer("the player closed the connection") }
        let pid = fork()
        if pid == 0 { hold(client, name: name, watched: watched) }
        guard pid > 0 else { return .refused("error: cannot start the holder (\(errnoText(errno)))") }
        return reply == "ok released" ? .granted(holder: pid) : .slow(holder: pid)
    }

    /// The holder: a session of its own (the hook's exit does not touch it), no terminal, and
    /// none of the descriptors the program that ran the hook left open (its sockets, its sound
    /// device: a holder must not keep them alive); ends when the player says the source ended,
    /// the player goes, or the watched program ends.
    private static func hold(_ client: ControlClient, name: String, watched: Int32) -> Never {
        _ = setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 { for fd: Int32 in 0...2 { _ = dup2(null, fd) } }
        closeAll(but: [0, 1, 2, client.descriptor, watched])
        client.wait(until: { $0 == "ok source \(name) ended" }, orReadable: watched)
        _exit(0)
    }

    /// Closes every open descriptor but `kept` (listed from /proc/self/fd: any number may be open).
    private static func closeAll(but kept: Set<Int32>) {
        guard let dir = opendir("/proc/self/fd") else { return }
        var open: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name) { open.append(fd) }
        }
        let own = dirfd(dir)
        closedir(dir)
        for fd in open where !kept.contains(fd) && fd != own { close(fd) }
    }

    /// `source end NAME`: the reply line (nil when none came), or why no player answers.
    public static func end(path: String, name: String, timeout: Double) -> Result<String?, SystemError> {
        do { return .success(try ControlClient.connect(path: path, request: "source end \(name)", timeout: timeout).reply) } catch {
            return .failure(error)
        }
    }
}

// SPDX-License-Identifier: MIT
import Foundation

/// Test children (the player binary) must die with the test process: a test runner killed by a
/// timeout, a crash or ^C must not leave players holding sockets, ports and test devices.
/// Foundation's `Process` cannot run code between fork and exec, so the child is started through
/// util-linux's `setpriv --pdeathsig KILL`, which calls `prctl(PR_SET_PDEATHSIG, SIGKILL)` in the
/// child and then execs the program (the setting survives the exec). Linux sends the signal when
/// the *thread* that started the child ends, so start long-lived children from a thread that
/// outlives them (the test's own); a thread that ends before setpriv's prctl ran leaves the child
/// to the rest of the process (then it dies with the process, not with that thread).
public enum ChildDeath {
    /// util-linux's setpriv (Debian's `util-linux` package, always installed).
    public static let setpriv = "/usr/bin/setpriv"

    /// The executable and arguments that run `executable arguments` so it dies with this process;
    /// `options` are more setpriv options (`--reuid=…`). Without setpriv: the command as it is.
    public static func command(_ executable: String, _ arguments: [String], options: [String] = []) -> (executable: String, arguments: [String]) {
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return (executable, arguments) }
        return (setpriv, ["--pdeathsig", "KILL"] + options + ["--", executable] + arguments)
    }
}

// SPDX-License-Identifier: MIT
import Foundation

/// Whether process `pid` runs: it exists and has not ended. `kill(pid, 0)` is not enough: an
/// ended child that nobody collected yet (a zombie) still answers it, and on a machine whose
/// PID 1 does not collect orphans (a container's init) such a zombie stays for good.
public func processRuns(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // "PID (COMM) STATE …": the command may hold spaces and parentheses; the state follows the last ")".
    guard let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
    return state != nil && state != "Z" && state != "X"
}

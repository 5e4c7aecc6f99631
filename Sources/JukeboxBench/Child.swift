// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxFixtures
import JukeboxService
import JukeboxSystem

/// One run of the `jukebox` binary, started with `posix_spawn` so the benchmark knows the exact
/// CLOCK_MONOTONIC instant before the process existed and gets its own `rusage` from `wait4`
/// (Foundation's `Process` gives neither). Output goes to files, so a full pipe can never stall it.
final class Child {
    /// The process id.
    let pid: pid_t
    /// CLOCK_MONOTONIC seconds read just before `posix_spawn`.
    let spawnedAt: Double
    /// Where stdout and stderr go.
    let outPath: String, errPath: String
    /// Set once reaped: exit status and the child's own CPU seconds (user + system).
    private(set) var status: Int32?
    private(set) var cpuSeconds: Double?

    /// Starts `binary args` with `environment` added to this process's environment, stdin from /dev/null.
    init(binary: String, args: [String], environment: [String: String], outputBase: String) throws {
        outPath = outputBase + ".out"
        errPath = outputBase + ".err"
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([binary] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let before = monotonicNow()
        let rc = posix_spawn(&child, binary, &actions, nil, argv, envp)
        guard rc == 0 else { throw BenchError("posix_spawn \(binary): \(String(cString: strerror(rc)))") }
        pid = child
        spawnedAt = before
    }

    /// Reaps the child if it has exited; true once it has.
    @discardableResult
    func poll() -> Bool { reap(options: WNOHANG) }

    /// Waits for the exit, killing the child (SIGKILL) after `timeout` seconds; returns the exit status.
    @discardableResult
    func wait(timeout: Double) throws -> Int32 {
        if waitFor(timeout, { poll() }) { return status! }
        kill(pid, SIGKILL)
        _ = reap(options: 0)
        throw BenchError("jukebox \(pid) did not exit within \(timeout) s; stderr: \(stderr.suffix(600))")
    }

    /// Blocks until the child exits (for a child that exits by itself at once); returns the exit status.
    func waitForExit() -> Int32 {
        _ = reap(options: 0)
        return status ?? -1
    }

    /// Sends `signal` (SIGTERM to stop the player cleanly).
    func send(_ signal: Int32) { if status == nil { kill(pid, signal) } }

    private func reap(options: Int32) -> Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        var usage = rusage()
        let got = wait4(pid, &raw, options, &usage)
        guard got == pid else { return false }
        // WIFEXITED / WEXITSTATUS are macros Swift cannot see.
        status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        return true
    }

    /// What the child wrote to stderr so far.
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    /// Resident memory now (VmRSS, VmHWM and RssAnon, in KiB); nil once gone. RssAnon is the
    /// process's own memory; the rest of VmRSS is mapped files, mostly shared libraries.
    func memory() -> ProcessMemory? { ProcessMemory.of(pid) }

    /// Proportional set size now (KiB), from /proc/PID/smaps_rollup: each shared page counted as
    /// its share among the processes that map it; nil once gone.
    func pss() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if words.count >= 2, words[0] == "Pss:" { return Int(words[1]) }
        }
        return nil
    }

    /// CPU seconds (user + system) so far, from /proc/PID/stat; nil once gone.
    func cpuNow() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            _ = reap(options: 0)
        }
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
    }
}

private func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }

/// A benchmark step that could not be carried out (the message says which and why).
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

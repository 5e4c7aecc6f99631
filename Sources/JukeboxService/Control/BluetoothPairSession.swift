// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `bluetooth pair ADDRESS pin PIN` (and any pair on a box whose config chooses the adapter):
/// one interactive `bluetoothctl`, its input a socket the player writes lines to and its output
/// a pipe read line by line, driven by `BluetoothPairDialogue`. Runs on the tag reader's worker,
/// never on the loop, noting progress; each phase is bounded by the dialogue, the whole by
/// `timeout -s KILL` (`BluetoothControl.longest`). At the end bluetoothctl is always ended: a
/// TERM to `timeout`'s process group (bluetoothctl included, as the discovery is ended), its
/// input closed; BlueZ then drops its agent and cancels a pairing it was still running.
public enum BluetoothPairSession {
    /// The reply line. `timeout`: the wrapper's path (a test puts a stand-in there).
    /// `limits`: each phase's bound (a test shortens them).
    public static func run(program: String, address: String, pin: String?, adapter: String?,
                           limits: BluetoothPairDialogue.Limits = .standard, timeout: String = "timeout") -> String {
        let argv = [timeout, "-s", "KILL", String(BluetoothControl.longest), program]
        let child: TalkingChild
        switch startProgramTalking(argv) {
        case .success(let c): child = c
        case .failure(let error): return "error: cannot run bluetoothctl: " + error.message
        }
        defer {
            // The group first (bluetoothctl leaves on TERM), then its input: EOF is a `quit` too.
            if kill(-child.pid, SIGTERM) != 0 { kill(child.pid, SIGTERM) }
            close(child.input)
            close(child.output)
        }
        var dialogue = BluetoothPairDialogue(address: address, pin: pin, adapter: adapter, limits: limits)
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var phase = dialogue.phase
        var phaseStarted = monotonicNow()
        while true {
            JobProgress.note()
            if dialogue.phase != phase {
                phase = dialogue.phase
                phaseStarted = monotonicNow()
            }
            if monotonicNow() - phaseStarted > Double(dialogue.limit) { return dialogue.timedOut() }
            var p = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 500) >= 0 || errno == EINTR else { return dialogue.ended() }
            guard p.revents != 0 else { continue }
            let n = read(child.output, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return dialogue.ended() }
            pending += chunk[0..<n]
            // Whole lines to the dialogue; what is left unended may be an agent's prompt.
            if let end = pending.lastIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: pending[...end], as: UTF8.self)
                pending.removeSubrange(...end)
                for line in BluetoothControl.plainLines(text) {
                    if let reply = apply(dialogue.take(line, now: monotonicNow()), child) { return reply }
                }
            }
            if pending.count > BluetoothControl.maxOutput { pending.removeAll() }
            if !pending.isEmpty, let text = BluetoothControl.plainLines(String(decoding: pending, as: UTF8.self)).last {
                if let reply = apply(dialogue.prompt(text), child) { return reply }
            }
        }
    }

    /// Writes what the dialogue answers; the reply when it is over.
    private static func apply(_ step: BluetoothPairDialogue.Step, _ child: TalkingChild) -> String? {
        switch step {
        case .finish(let reply): return reply
        case .send(let lines):
            for line in lines {
                let bytes = Array((line + "\n").utf8)
                // A socket, so a bluetoothctl gone makes EPIPE, not a SIGPIPE for the player.
                guard send(child.input, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
                    return "error: bluetooth pair: bluetoothctl stopped reading (" + errnoText(errno) + ")"
                }
            }
            return nil
        }
    }

    /// A child with its input on a socket and its output (and errors) on a pipe.
    struct TalkingChild {
        var pid: pid_t
        /// The player's end of the child's stdin (a stream socket; write with MSG_NOSIGNAL).
        var input: Int32
        /// The reading end of the child's stdout and stderr.
        var output: Int32
    }

    /// Starts `argv` (no shell) talking: its stdin a socket, its stdout and stderr one pipe.
    static func startProgramTalking(_ argv: [String]) -> Result<TalkingChild, ProgramStartError> {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(ProgramStartError(message: "socketpair: " + errnoText(errno)))
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            pair.forEach { close($0) }
            return .failure(ProgramStartError(message: "pipe: " + errnoText(errno)))
        }
        // Neither end leaks into another child (posix_spawn's dup2 gives this one its own).
        ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        let started = startProgram(argv, fileActions: &actions)
        close(pair[1])
        close(ends[1])
        guard let pid = started.pid else {
            close(pair[0])
            close(ends[0])
            return .failure(ProgramStartError(message: started.error ?? "unknown error"))
        }
        return .success(TalkingChild(pid: pid, input: pair[0], output: ends[0]))
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `bluetooth pair|trust|forget ADDRESS` carried out: BlueZ's `bluetoothctl` run once,
/// non-interactive (`bluetoothctl pair ADDRESS`, `trust`, `remove`), off the loop (on the tag
/// reader's worker, noting progress so it is not given up), at most `limit` seconds
/// (coreutils' `timeout` kills it then). The reply is bluetoothctl's last line, made inert: `ok`
/// when it exited 0, `error:` otherwise. The loop reaps every child it sees end, so the exit
/// status comes back as the last line the small `sh` around it prints, not from waitpid.
public enum BluetoothControl {
    /// Seconds bluetoothctl may take (pairing a speaker takes a few).
    public static let limit = 25
    /// The most of bluetoothctl's output read.
    static let maxOutput = 16 << 10
    /// The line the wrapper prints with the exit status.
    static let exitMarker = "jukebox-exit "

    /// The argument vector: `sh` runs `timeout` running bluetoothctl, then prints its status.
    public static func argv(program: String, _ action: BluetoothAction, address: String) -> [String] {
        let verb = action == .forget ? "remove" : action.rawValue
        let script = "timeout -s KILL \(limit) \"$0\" \"$1\" \"$2\"; echo \"\(exitMarker)$?\""
        return ["/bin/sh", "-c", script, program, verb, address]
    }

    /// Runs it and returns the reply line. Blocks for up to `limit` seconds and a little more:
    /// never on the loop.
    public static func run(program: String, _ action: BluetoothAction, address: String) -> String {
        let child: ReadingChild
        switch startProgramReading(argv(program: program, action, address: address), errors: true) {
        case .success(let c): child = c
        case .failure(let error): return "error: cannot run bluetoothctl: " + error.message
        }
        defer { close(child.fd) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = monotonicNow() + Double(limit) + 5
        while monotonicNow() < deadline {
            JobProgress.note()
            var p = pollfd(fd: child.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 1000) >= 0 || errno == EINTR else { break }
            guard p.revents != 0 else { continue }
            let n = read(child.fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return reply(String(decoding: output, as: UTF8.self), action: action) }
            output += chunk[0..<min(n, max(0, maxOutput - output.count))]
        }
        // The wrapper outlived every bound: stop it (its timeout ends bluetoothctl).
        kill(child.pid, SIGKILL)
        return "error: bluetoothctl did not finish within \(limit) s"
    }

    /// The reply for bluetoothctl's whole output (with the wrapper's status line last).
    public static func reply(_ output: String, action: BluetoothAction) -> String {
        var lines = plainLines(output)
        var status: Int?
        if let last = lines.last, last.hasPrefix(exitMarker) {
            status = Int(last.dropFirst(exitMarker.count))
            lines.removeLast()
        }
        let said = lines.last.map { DisplayText.inert($0, maxBytes: 200) }
        switch status {
        case 0?: return "ok bluetooth \(action.rawValue): " + (said ?? "done")
        case 137?: return "error: bluetoothctl did not finish within \(limit) s"
        case 127?: return "error: bluetoothctl could not be run" + (said.map { ": " + $0 } ?? "")
        default: return "error: bluetooth \(action.rawValue) failed" + (said.map { ": " + $0 } ?? "")
        }
    }

    /// The output's non-empty lines without terminal colours (`ESC [ … letter`), carriage
    /// returns or bluetoothctl's prompt.
    static func plainLines(_ text: String) -> [String] {
        var plain = ""
        var escape = false
        var bracket = false
        for scalar in text.unicodeScalars {
            if escape {
                if scalar == "[" && !bracket { bracket = true; continue }
                if bracket, !(("@"..."~").contains(scalar)) { continue }
                escape = false
                bracket = false
                continue
            }
            if scalar == "\u{1B}" { escape = true; continue }
            plain.unicodeScalars.append(scalar == "\r" ? "\n" : scalar)
        }
        return plain.split(separator: "\n").map { line in
            var s = String(line)
            // The prompt left at the front of a line (`[bluetooth]# Pairing successful`).
            if s.hasPrefix("["), let end = s.firstIndex(of: "]"), s[s.index(after: end)...].hasPrefix("# ") {
                s = String(s[s.index(end, offsetBy: 3)...])
            }
            let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            return String(s.drop(while: blank).reversed().drop(while: blank).reversed())
        }.filter { !$0.isEmpty }
    }
}

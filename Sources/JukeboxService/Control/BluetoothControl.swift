// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `bluetooth pair|trust|forget|disconnect ADDRESS` carried out with BlueZ's `bluetoothctl`,
/// each program run non-interactive, off the loop (on the tag reader's worker, noting progress so
/// it is not given up), each step bounded by coreutils' `timeout`. `trust`, `forget` and
/// `disconnect` go through BlueZ's D-Bus objects on each adapter (`onAdapters`), or, where busctl
/// or the kernel's adapter list is missing, are one step (`bluetoothctl trust|remove|disconnect
/// ADDRESS`, BlueZ's default adapter). `pair` is up to three, because bluetoothctl pairs
/// only a device BlueZ knows (`Device … not available` otherwise) and registers no agent when
/// run with a command (its `--agent` is ignored then; BlueZ pairs as NoInputNoOutput, "Just
/// Works", which is what a speaker does): `info ADDRESS` (known? paired already?), when unknown
/// a discovery (`bluetoothctl --timeout 15 scan on`, stopped as soon as it names the address),
/// then `pair ADDRESS`. The reply is bluetoothctl's last line, made inert: `ok` when it exited
/// 0, `error:` otherwise, with plain words for the usual failures. The loop reaps every child
/// it sees end, so an exit status comes back as the last line of a small `sh` around it.
public enum BluetoothControl {
    /// Seconds `pair`, `trust` or `remove` may take (pairing a speaker takes a few).
    public static let limit = 25
    /// Seconds `info` may take (it answers at once from BlueZ's objects).
    public static let infoLimit = 8
    /// Seconds of discovery for a device BlueZ does not know (a speaker in pairing mode is
    /// usually seen within 5–10 s).
    public static let scanLimit = 15
    /// The longest a `bluetooth` command can take, every step with its slack: what `jukebox ctl`
    /// waits for its reply by default (the web app waits 60 s).
    public static let longest = infoLimit + scanLimit + limit + 10

    /// Where `trust`, `forget` and `disconnect` find BlueZ's D-Bus objects: systemd's `busctl`
    /// and the kernel's list of adapters. A test gives its own (a stand-in, or none: the
    /// bluetoothctl steps), so that a machine with adapters of its own is never touched by it.
    public struct Bus: Equatable, Sendable {
        /// busctl's path; nil: those steps are bluetoothctl's.
        public var busctl: String?
        /// The folder whose `hciN` entries are the adapters.
        public var sysfs: String
        public init(busctl: String?, sysfs: String = "/sys/class/bluetooth") {
            self.busctl = busctl
            self.sysfs = sysfs
        }
        /// The box's own: busctl found on PATH, the kernel's adapters.
        public static func system() -> Bus { Bus(busctl: findProgram("busctl")) }
        /// No D-Bus steps: every one is bluetoothctl's.
        public static let none = Bus(busctl: nil)
    }
    /// The most of bluetoothctl's output read.
    static let maxOutput = 16 << 10
    /// The line the wrapper prints with the exit status.
    static let exitMarker = "jukebox-exit "

    /// The argument vector of one step: `sh` runs `timeout` running bluetoothctl with `words`,
    /// then prints its status.
    public static func argv(program: String, _ words: [String], limit: Int = limit) -> [String] {
        let quoted = words.indices.map { "\"$\($0 + 1)\"" }.joined(separator: " ")
        let script = "timeout -s KILL \(limit) \"$0\" \(quoted); echo \"\(exitMarker)$?\""
        return ["/bin/sh", "-c", script, program] + words
    }

    /// The argument vector of the discovery: `timeout` passes a TERM on to bluetoothctl, which
    /// then leaves, and BlueZ stops a discovery when the client that started it leaves.
    /// `timeout`: the wrapper's path (a test puts a stand-in there).
    public static func scanArgv(program: String, seconds: Int = scanLimit, timeout: String = "timeout") -> [String] {
        [timeout, "-s", "KILL", String(seconds + 5), program, "--timeout", String(seconds), "scan", "on"]
    }

    /// Runs it and returns the reply line. Blocks for up to `longest` seconds: never on the loop.
    /// A pair with a PIN, or on a box whose config chose the adapter, is one interactive
    /// bluetoothctl with an agent (`BluetoothPairSession`); a plain pair keeps the one-shot steps.
    /// `bus`: the loop's (`ControlSettings.bluetoothBus`), never looked up here, so that a test's stays its own.
    public static func run(program: String, _ action: BluetoothAction, address: String, pin: String? = nil, adapter: String? = nil,
                           bus: Bus) -> String {
        if action == .pair, pin != nil || adapter != nil {
            return BluetoothPairSession.run(program: program, address: address, pin: pin, adapter: adapter)
        }
        if action == .pair { return pair(program: program, address: address) }
        if let busctl = bus.busctl, case let adapters = localAdapters(sysfs: bus.sysfs), !adapters.isEmpty {
            return onAdapters(action, address: address, busctl: busctl, adapters: adapters)
        }
        let word: String
        switch action {
        case .forget: word = "remove"
        default: word = action.rawValue
        }
        return reply(step(program, [word, address], limit: limit), action: action)
    }

    /// The box's Bluetooth adapters (`hci0`, `hci1`, …) as the kernel lists them, in order.
    public static func localAdapters(sysfs: String = "/sys/class/bluetooth") -> [String] {
        let names = (try? directoryEntries(sysfs)) ?? []
        return names.filter { $0.hasPrefix("hci") && (4...8).contains($0.utf8.count) && $0.utf8.dropFirst(3).allSatisfy { (0x30...0x39).contains($0) } }.sorted()
    }

    /// `trust`, `forget` and `disconnect` through BlueZ's D-Bus objects (`busctl`) on the adapters
    /// that know the device. A one-shot bluetoothctl talks to BlueZ's default adapter only: on a
    /// box with two (a phone known to the second, `bt-phone` in the VM; a speaker paired on the
    /// adapter the config chose, `bluetooth.adapter`) it answers `Device … not available`.
    /// `disconnect` stops at the first adapter that knows the device; `trust` and `forget` go to
    /// every one that does (a speaker paired on two adapters is trusted, or forgotten, on both),
    /// so the choice of adapter needs no lookup of addresses here. Each call is bounded by
    /// `timeout`; an adapter that does not know the device is passed over, and when none does, the
    /// reply says so with busctl's last words.
    public static func onAdapters(_ action: BluetoothAction, address: String, busctl: String, adapters: [String]) -> String {
        let device = "dev_" + address.split(separator: ":").joined(separator: "_")
        var done: [String] = []
        var last: String?
        for adapter in adapters {
            let path = "/org/bluez/\(adapter)/\(device)"
            let words: [String]
            switch action {
            case .trust: words = ["--system", "set-property", "org.bluez", path, "org.bluez.Device1", "Trusted", "b", "true"]
            case .forget: words = ["--system", "call", "org.bluez", "/org/bluez/\(adapter)", "org.bluez.Adapter1", "RemoveDevice", "o", path]
            default: words = ["--system", "call", "org.bluez", path, "org.bluez.Device1", "Disconnect"]
            }
            let (lines, status) = split(step(busctl, words, limit: limit))
            if status == 137 { return "error: busctl did not finish within \(limit) s" }
            if status == 0 {
                done.append(adapter)
                if action == .disconnect { break }
            } else {
                last = lines.last.map { DisplayText.inert($0, maxBytes: 200) }
            }
        }
        let said: String
        switch action {
        case .trust: said = "trusted on "
        case .forget: said = "forgotten on "
        default: said = "disconnected on "
        }
        if !done.isEmpty { return "ok bluetooth \(action.rawValue): " + said + done.joined(separator: ", ") }
        let known = "\(address) is known to none of " + adapters.joined(separator: ", ")
        return "error: bluetooth \(action.rawValue) failed: " + known + (last.map { " (busctl: " + $0 + ")" } ?? "")
    }

    /// `info`, a discovery when BlueZ does not know the device, then `pair`.
    static func pair(program: String, address: String) -> String {
        let info = step(program, ["info", address], limit: infoLimit)
        let (lines, status) = split(info)
        if status == 0, lines.contains(where: { $0 == "Paired: yes" }) { return "ok bluetooth pair: already paired" }
        var found = ""
        if status != 0 {
            // 1 is bluetoothctl's `Device … not available`; anything else (not run, killed) is said.
            guard status == 1 else { return reply(info, action: .pair, limit: infoLimit) }
            let started = monotonicNow()
            switch scan(program: program, address: address) {
            case .found:
                found = " (found after " + tenths(monotonicNow() - started) + " s of scanning)"
            case .notFound(let said):
                return "error: bluetooth pair: \(address) was not found in \(scanLimit) s of scanning; is it on, near and in pairing mode?"
                    + (said.map { " (bluetoothctl: " + DisplayText.inert($0, maxBytes: 200) + ")" } ?? "")
            case .cannotRun(let reason):
                return "error: cannot run bluetoothctl: " + reason
            }
        }
        return pairReply(step(program, ["pair", address], limit: limit)) + found
    }

    /// The reply for `pair`'s output: already paired is fine; a refusal and no answer in plain words.
    public static func pairReply(_ output: String) -> String {
        let (lines, status) = split(output)
        let said = lines.last.map { DisplayText.inert($0, maxBytes: 200) }
        if status != 0, lines.contains(where: { $0.contains("org.bluez.Error.AlreadyExists") }) {
            return "ok bluetooth pair: already paired"
        }
        if status == 1, let said, ["AuthenticationFailed", "AuthenticationRejected", "AuthenticationCanceled"].contains(where: { said.contains($0) }) {
            return "error: bluetooth pair refused by the device (one that wants a PIN: bluetooth pair ADDRESS pin DIGITS): " + said
        }
        if status == 1, let said, said.contains("ConnectionAttemptFailed") || said.contains("Page Timeout") {
            return "error: bluetooth pair: the device did not answer; is it on, near and in pairing mode? " + said
        }
        // bluetoothctl can exit 0 without a pairing (BlueZ gone mid-pair, seen under btvirt: its
        // last words a device's properties): only its own "Pairing successful" is a success.
        if status == 0, !lines.contains(where: { $0.hasPrefix("Pairing successful") }) {
            return "error: bluetooth pair: bluetoothctl ended without pairing" + (said.map { " (its last words: " + $0 + ")" } ?? "")
        }
        return reply(output, action: .pair)
    }

    /// What a discovery came to.
    public enum Scan: Equatable, Sendable {
        /// bluetoothctl named the address.
        case found
        /// Not named within `scanLimit` s; `said`: bluetoothctl's last complaint.
        case notFound(said: String?)
        /// bluetoothctl could not be started: why.
        case cannotRun(String)
    }

    /// Discovery until bluetoothctl names `address` (`[NEW] Device ADDRESS …`) or `scanLimit`
    /// seconds passed; then bluetoothctl is stopped. `said`: its last complaint (`Failed to start
    /// discovery: …`, `No default controller available`).
    public static func scan(program: String, address: String, timeout: String = "timeout") -> Scan {
        let child: ReadingChild
        switch startProgramReading(scanArgv(program: program, timeout: timeout), errors: true) {
        case .success(let c): child = c
        case .failure(let error): return .cannotRun(error.message)
        }
        defer { close(child.fd) }
        var pending: [UInt8] = []
        var said: String?
        var found = false
        let wanted = "Device " + address
        _ = readOutput(child, seconds: Double(scanLimit) + 7) { bytes in
            pending += bytes
            // Whole lines only; a line longer than the bound is judged as it is.
            guard let end = pending.lastIndex(of: UInt8(ascii: "\n")) ?? (pending.count > maxOutput ? pending.count - 1 : nil) else { return true }
            let text = String(decoding: pending[...end], as: UTF8.self)
            pending.removeSubrange(...end)
            for line in plainLines(text) {
                if line.contains(wanted) { found = true; return false }
                if line.hasPrefix("Failed") || line.hasPrefix("No ") { said = line }
            }
            return true
        }
        // Found, run out or past its bound: the discovery ends. The TERM goes to timeout's process
        // group (it makes one before it forks), bluetoothctl included: timeout alone passes it on
        // only once it has noted its child's pid, and on a busy machine bluetoothctl can name the
        // device before that; timeout then leaves without a word and the discovery scanned on.
        if kill(-child.pid, SIGTERM) != 0 { kill(child.pid, SIGTERM) }
        return found ? .found : .notFound(said: said)
    }

    /// Runs one step's wrapper and returns its whole output (the status line last), or a status
    /// line of its own when it could not be run or outlived every bound.
    static func step(_ program: String, _ words: [String], limit: Int) -> String {
        let child: ReadingChild
        switch startProgramReading(argv(program: program, words, limit: limit), errors: true) {
        case .success(let c): child = c
        case .failure(let error): return error.message + "\n" + exitMarker + "127\n"
        }
        defer { close(child.fd) }
        var output: [UInt8] = []
        let ended = readOutput(child, seconds: Double(limit) + 5) { bytes in
            output += bytes.prefix(max(0, maxOutput - output.count))
            return true
        }
        if ended { return String(decoding: output, as: UTF8.self) }
        // The wrapper outlived every bound: stop it (its timeout ends bluetoothctl).
        kill(child.pid, SIGKILL)
        return exitMarker + "137\n"
    }

    /// Reads `child`'s output for at most `seconds`, noting progress, handing each chunk to
    /// `take` until it returns false. True when the output ended (the child closed it).
    static func readOutput(_ child: ReadingChild, seconds: Double, _ take: ([UInt8]) -> Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = monotonicNow() + seconds
        while monotonicNow() < deadline {
            JobProgress.note()
            var p = pollfd(fd: child.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 1000) >= 0 || errno == EINTR else { return false }
            guard p.revents != 0 else { continue }
            let n = read(child.fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return true }
            guard take(Array(chunk[0..<n])) else { return false }
        }
        return false
    }

    /// The output's lines and the wrapper's status (nil when its line is missing), without
    /// bluetoothctl's reports of BlueZ's objects (`[NEW]`, `[CHG]`, `[DEL]`, which it prints
    /// for every object as it leaves): the last line is then what it said of the command.
    static func split(_ output: String) -> ([String], Int?) {
        var lines = plainLines(output)
        var status: Int?
        if let last = lines.last, last.hasPrefix(exitMarker) {
            status = Int(last.dropFirst(exitMarker.count))
            lines.removeLast()
        }
        let reports = ["[NEW] ", "[CHG] ", "[DEL] "]
        return (lines.filter { line in !reports.contains { line.hasPrefix($0) } }, status)
    }

    /// The reply for bluetoothctl's whole output (with the wrapper's status line last).
    /// `limit`: the step's bound, said when it was reached.
    public static func reply(_ output: String, action: BluetoothAction, limit: Int = limit) -> String {
        let (lines, status) = split(output)
        let said = lines.last.map { DisplayText.inert($0, maxBytes: 200) }
        switch status {
        case 0?: return "ok bluetooth \(action.rawValue): " + (said ?? "done")
        case 137?: return "error: bluetoothctl did not finish within \(limit) s"
        case 127?: return "error: bluetoothctl could not be run" + (said.map { ": " + $0 } ?? "")
        default: return "error: bluetooth \(action.rawValue) failed" + (said.map { ": " + $0 } ?? "")
        }
    }

    static func tenths(_ seconds: Double) -> String {
        let t = Int((seconds * 10).rounded())
        return "\(t / 10).\(t % 10)"
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
            // The prompt left at the front of a line (`[bluetooth]# Pairing successful`; from
            // bluez 5.7x `[bluetoothctl]> `, and the device's name in it once one is chosen).
            while s.hasPrefix("["), let end = s.firstIndex(of: "]"), s[s.index(after: end)...].hasPrefix("# ") || s[s.index(after: end)...].hasPrefix("> ") {
                s = String(s[s.index(end, offsetBy: 3)...])
            }
            let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            return String(s.drop(while: blank).reversed().drop(while: blank).reversed())
        }.filter { !$0.isEmpty }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// What carries out MPD commands for a session: the MPD face (`MPDFace`: its command table), or a test double.
public protocol MPDBackend: AnyObject {
    /// Carries out one command (never `idle`, `noidle`, `password`, `ping`, `close`, `commands`,
    /// `notcommands` or the command-list words: the session answers those). `reply` gets the
    /// reply's lines (without the final `OK`) or the error, at once or later on the loop (after
    /// a save, after the tag reader); the session sends nothing else to this client meanwhile.
    func run(_ request: MPDRequest, reply: @escaping (Result<[String], MPDError>) -> Void)
    /// Carries out a command whose reply may end in raw bytes (`albumart`, `readpicture`; the
    /// library's commands too), with `binaryLimit` the client's largest chunk; false when it is
    /// not such a command (then `run(_:reply:)` gets it). The same rules as `run(_:reply:)`.
    func run(_ request: MPDRequest, binaryLimit: Int, reply: @escaping (Result<MPDReply, MPDError>) -> Void) -> Bool
}

extension MPDBackend {
    /// No command with a binary reply.
    public func run(_ request: MPDRequest, binaryLimit: Int, reply: @escaping (Result<MPDReply, MPDError>) -> Void) -> Bool {
        false
    }
}

/// A reply's lines (without the final `OK`) and, for `albumart`/`readpicture`, the chunk of raw
/// bytes that follows them: the session writes `binary: COUNT`, the bytes as they are (never
/// made inert: they are an image), and a newline, as MPD does.
public struct MPDReply: Equatable, Sendable {
    /// The text lines.
    public var lines: [String]
    /// The raw bytes after the lines, if any.
    public var binary: [UInt8]?

    /// Creates a reply.
    public init(lines: [String], binary: [UInt8]? = nil) {
        self.lines = lines
        self.binary = binary
    }
}

/// One MPD client's side of the protocol: the greeting, command lists, `idle`/`noidle`, the
/// password and the order of replies. It turns lines into replies and never touches a socket
/// (`MPDListener` moves the bytes), so every rule here is tested without one.
public final class MPDSession {
    /// The subsystems `idle` reports (MPD's names).
    public enum Subsystem: String, CaseIterable, Sendable {
        case database, update, stored_playlist, playlist, player, mixer, output, options, partition,
             sticker, subscription, message, neighbor, mount
    }

    /// The protocol version in the greeting: what jukebox implements, and so what clients may
    /// rely on (see docs/REMOTE.md: 0.19's `list … group`, 0.21's filter expressions and `albumart`
    /// are here; 0.22's `readpicture` answers but finds no picture, so 0.22 is not claimed).
    public static let protocolVersion = "0.21.0"
    /// The commands allowed before `password` when one is configured.
    public static let withoutPassword: Set<String> = ["password", "close", "ping", "commands", "notcommands"]
    /// The commands the session answers itself.
    static let ownCommands: Set<String> = ["binarylimit", "idle", "noidle", "password", "ping", "close", "commands", "notcommands"]
    /// The largest binary chunk until the client says `binarylimit` (MPD's default).
    public static let defaultBinaryLimit = 8192
    /// The largest `binarylimit` accepted: a chunk is held in memory while it is sent.
    public static let maxBinaryLimit = 1 << 20
    /// Most bytes of one command list; a longer one closes the connection (as MPD does).
    public static let maxListBytes = 256 << 10
    /// Most lines held while a reply is awaited; more close the connection.
    public static let maxHeldLines = 1024

    /// Bytes to send, appended to by the session; the listener takes them.
    public var output: [UInt8] = []
    /// Set once the client said `close`, sent something but `noidle` during `idle`, or overflowed
    /// a bound: the listener closes it after sending `output`.
    public private(set) var closing = false
    /// Whether the client waits in `idle` (it is then never timed out).
    public var isIdle: Bool { idleMask != nil }

    private weak var backend: MPDBackend?
    private let password: String?
    private var authorized: Bool
    /// The commands the backend knows (for `commands`, `notcommands` and "unknown command").
    private let known: [String]
    /// Changes not yet reported by an `idle`.
    private var events: Set<Subsystem> = []
    /// While in `idle`: the subsystems asked for.
    private var idleMask: Set<Subsystem>?
    /// A command list being collected: whether `list_OK` follows each, its lines, their bytes.
    private var collecting: (ok: Bool, lines: [Result<MPDRequest, MPDError>], bytes: Int)?
    /// Commands being carried out, one at a time.
    private var batch: (items: [Result<MPDRequest, MPDError>], list: Bool, ok: Bool, index: Int)?
    private var waiting = false
    /// Lines that came while a reply was awaited, in order.
    private var held: [[UInt8]?] = []
    /// The client's largest binary chunk (`binarylimit`).
    private var binaryLimit = MPDSession.defaultBinaryLimit

    /// A session that greets at once. `known` lists the commands `backend` carries out.
    public init(backend: MPDBackend, known: [String], password: String?) {
        self.backend = backend
        self.known = known
        self.password = password
        self.authorized = password == nil
        write("OK MPD \(Self.protocolVersion)")
    }

    /// Handles one line (without its newline); nil stands for a line that was too long.
    public func receive(_ line: [UInt8]?) {
        guard !closing else { return }
        if batch != nil || waiting {
            held.append(line)
            if held.count > Self.maxHeldLines { closing = true }
            return
        }
        handle(line)
    }

    /// Something changed: reported to an `idle` now, or to the next one.
    public func notify(_ changed: Set<Subsystem>) {
        events.formUnion(changed)
        guard let mask = idleMask else { return }
        let due = mask.isEmpty ? events : events.intersection(mask)
        guard !due.isEmpty else { return }
        reportIdle(due)
    }

    private func handle(_ bytes: [UInt8]?) {
        guard let bytes else {
            // MPD closes such a client; the ACK says why first.
            write(MPDError(.arg, "line too long").ack(index: 0, command: ""))
            closing = true
            return
        }
        let parsed = MPDRequest.parse(bytes)
        if let mask = idleMask {
            // Only `noidle` may come during `idle`; MPD closes a client that sends more.
            guard case .success(let r) = parsed, r.name == "noidle" else { closing = true; return }
            reportIdle(events.intersection(mask.isEmpty ? Set(Subsystem.allCases) : mask))
            return
        }
        if collecting != nil {
            if case .success(let r) = parsed, r.name == "command_list_end", let list = collecting {
                collecting = nil
                start(list.lines, list: true, ok: list.ok)
                return
            }
            collecting!.bytes += bytes.count + 1
            collecting!.lines.append(parsed)
            if collecting!.bytes > Self.maxListBytes { closing = true }
            return
        }
        switch parsed {
        case .success(let r) where r.name == "command_list_begin" || r.name == "command_list_ok_begin":
            guard r.args.isEmpty else { return start([parsed], list: false, ok: false) }
            collecting = (r.name == "command_list_ok_begin", [], 0)
        case .success(let r) where r.name == "noidle":
            // The race python-mpd2 runs into: `idle` already returned; MPD ignores it, so do we.
            return
        case .success(let r) where r.name == "idle":
            guard authorized else { return start([parsed], list: false, ok: false) }
            switch Self.subsystems(r.args) {
            case .failure(let e): write(e.ack(index: 0, command: "idle"))  // an ACK ends a reply: no OK (MPD's way)
            case .success(let mask):
                idleMask = mask
                notify([])
            }
        default:
            start([parsed], list: false, ok: false)
        }
    }

    private static func subsystems(_ names: [String]) -> Result<Set<Subsystem>, MPDError> {
        var set: Set<Subsystem> = []
        for name in names {
            guard let s = Subsystem(rawValue: name) else { return .failure(MPDError(.arg, "Unrecognized idle event: \(name)")) }
            set.insert(s)
        }
        return .success(set)
    }

    private func reportIdle(_ due: Set<Subsystem>) {
        for s in Subsystem.allCases where due.contains(s) { write("changed: \(s.rawValue)") }
        events.subtract(due)
        idleMask = nil
        write("OK")
    }

    private func start(_ items: [Result<MPDRequest, MPDError>], list: Bool, ok: Bool) {
        batch = (items, list, ok, 0)
        advance()
    }

    // Runs the batch's commands in order until one must wait, fails, or all are done; then the
    // lines held meanwhile, in order.
    private func advance() {
        while !waiting, !closing, let current = batch {
            guard current.index < current.items.count else {
                write("OK")
                batch = nil
                handleHeld()
                continue
            }
            let index = current.index
            switch current.items[index] {
            case .failure(let e):
                fail(e, index: index, command: "")
            case .success(let r):
                if let e = ownCommand(r, inList: current.list) {
                    e.map { fail($0, index: index, command: $0.code == .unknown ? "" : r.name) } ?? succeed([])
                    continue
                }
                guard let backend else {
                    fail(MPDError(.system, "the player is stopping"), index: index, command: r.name)
                    continue
                }
                var immediate: Result<MPDReply, MPDError>?
                var returned = false
                waiting = true
                let deliver: (Result<MPDReply, MPDError>) -> Void = { [weak self] result in
                    if returned { self?.finish(result, command: r.name) } else { immediate = result }
                }
                if !backend.run(r, binaryLimit: binaryLimit, reply: deliver) {
                    backend.run(r) { deliver($0.map { MPDReply(lines: $0) }) }
                }
                returned = true
                if let immediate { waiting = false; apply(immediate, command: r.name) }
            }
        }
    }

    private func finish(_ result: Result<MPDReply, MPDError>, command: String) {
        waiting = false
        apply(result, command: command)
        advance()
    }

    private func apply(_ result: Result<MPDReply, MPDError>, command: String) {
        guard let current = batch else { return }
        switch result {
        case .success(let reply): succeed(reply.lines, binary: reply.binary)
        case .failure(let e): fail(e, index: current.index, command: command)
        }
    }

    private func succeed(_ lines: [String], binary: [UInt8]? = nil) {
        guard let current = batch else { return }
        for line in lines { write(line) }
        if let binary {
            write("binary: \(binary.count)")
            output += binary
            output.append(UInt8(ascii: "\n"))
        }
        if current.ok { write("list_OK") }
        batch?.index += 1
    }

    // An error ends the batch: the rest of a command list is not run, and no `OK` follows.
    private func fail(_ e: MPDError, index: Int, command: String) {
        write(e.ack(index: index, command: command))
        batch = nil
        handleHeld()
    }

    // The lines that came while a reply was awaited, in order, until one must wait in turn. An
    // `idle` among them does not stop this: what follows it is its `noidle` (or closes the
    // connection, as MPD does), and a `noidle` left held would leave the client waiting forever.
    private func handleHeld() {
        while batch == nil, !waiting, !closing, !held.isEmpty { handle(held.removeFirst()) }
    }

    // The commands the session answers: nil when `r` is not one of them (nor refused for want of
    // the password); .some(nil) when it succeeded; .some(error) when it failed.
    private func ownCommand(_ r: MPDRequest, inList: Bool) -> MPDError?? {
        if !authorized && !Self.withoutPassword.contains(r.name) {
            return .some(MPDError(.permission, "you don't have permission for \"\(r.name)\""))
        }
        switch r.name {
        case "ping": return .some(nil)
        case "binarylimit":
            // MPD's floor is 64 bytes; the ceiling is jukebox's, to bound a chunk in memory.
            guard r.args.count == 1, let n = Int(r.args[0]) else { return .some(MPDError(.arg, "wrong number of arguments for \"binarylimit\"")) }
            guard n >= 64 else { return .some(MPDError(.arg, "Value too small")) }
            binaryLimit = min(n, Self.maxBinaryLimit)
            return .some(nil)
        case "close":
            closing = true
            return .some(nil)
        case "password":
            guard r.args.count == 1 else { return .some(MPDError(.arg, "wrong number of arguments for \"password\"")) }
            guard let password, r.args[0] == password else { return .some(MPDError(.password, "incorrect password")) }
            authorized = true
            return .some(nil)
        case "commands", "notcommands":
            let all = (known + Self.ownCommands).sorted()
            let allowed = all.filter { authorized || Self.withoutPassword.contains($0) }
            let shown = r.name == "commands" ? allowed : all.filter { !allowed.contains($0) }
            for name in shown { write("command: \(name)") }
            return .some(nil)
        case let name where !inList && name.hasPrefix("command_list_"):
            // Outside a list only a stray end gets here (or a begin with arguments): MPD knows
            // neither as a command.
            return .some(MPDError(.unknown, "unknown command \"\(r.name)\""))
        case "idle", "noidle", "command_list_begin", "command_list_ok_begin", "command_list_end":
            return .some(MPDError(.notList, "\"\(r.name)\" is not allowed here"))
        default:
            if !known.contains(r.name) { return .some(MPDError(.unknown, "unknown command \"\(r.name)\"")) }
            return nil
        }
    }

    private func write(_ line: String) {
        output += Array((DisplayText.lineSafe(line) + "\n").utf8)
    }
}

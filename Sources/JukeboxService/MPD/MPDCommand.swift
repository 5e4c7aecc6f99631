// SPDX-License-Identifier: MIT
import JukeboxCore

/// What a command's handler answers with: the reply's lines (without the final `OK`) or the error.
typealias MPDLinesReply = (Result<[String], MPDError>) -> Void
/// What a command whose reply may end in raw bytes answers with.
typealias MPDBinaryReply = (Result<MPDReply, MPDError>) -> Void

/// One entry of the MPD command table, as MPD's own `command` struct: the name, how many
/// arguments it takes (checked once, before the handler runs, with MPD's message) and the
/// handler. The table is split by subsystem: `MPDPlayerCommands.swift`, `MPDQueueCommands.swift`,
/// `MPDPlaylistCommands.swift`, `MPDLibraryCommands.swift`, `MPDServerCommands.swift`. The session
/// answers its own commands (`idle`, `password`, `ping`, `close`, `commands`, the command lists).
struct MPDCommand: Sendable {
    /// How the command is carried out, with the loop it acts on.
    enum Handler: Sendable {
        /// A reply of lines.
        case lines(@Sendable (MPDFace, MPDLoop, MPDRequest, @escaping MPDLinesReply) -> Void)
        /// A reply that may end in bytes, cut to the client's `binarylimit`.
        case binary(@Sendable (MPDFace, MPDLoop, MPDRequest, _ binaryLimit: Int, @escaping MPDBinaryReply) -> Void)
    }

    let name: String
    /// The argument counts accepted; other counts are refused before the handler runs.
    let args: ClosedRange<Int>
    let handler: Handler

    init(_ name: String, _ args: ClosedRange<Int>, _ run: @escaping @Sendable (MPDFace, MPDLoop, MPDRequest, @escaping MPDLinesReply) -> Void) {
        self.name = name
        self.args = args
        handler = .lines(run)
    }

    init(_ name: String, _ args: ClosedRange<Int>,
         binary run: @escaping @Sendable (MPDFace, MPDLoop, MPDRequest, Int, @escaping MPDBinaryReply) -> Void) {
        self.name = name
        self.args = args
        handler = .binary(run)
    }

    /// Any number of arguments: the handler checks them itself (filters, `tagtypes`' subcommands).
    static let anyCount = 0...Int.max
}

extension MPDFace {
    /// Every command the face carries out, by name.
    static let table: [String: MPDCommand] = Dictionary(
        uniqueKeysWithValues: (playerCommands + queueCommands + playlistCommands + libraryCommands + serverCommands).map { ($0.name, $0) })

    /// The names the sessions know (what `commands` lists beside the session's own).
    static let commandNames = table.keys.sorted()

    /// Carries out `request` by the table: the argument count first, then the handler.
    func run(_ request: MPDRequest, binaryLimit: Int, reply: @escaping MPDBinaryReply) -> Bool {
        guard let loop else {
            reply(.failure(MPDError(.system, "the player is stopping")))
            return true
        }
        guard let command = Self.table[request.name] else {
            reply(.failure(MPDError(.unknown, "unknown command \"\(request.name)\"")))
            return true
        }
        guard command.args.contains(request.args.count) else {
            reply(.failure(MPDError(.arg, "wrong number of arguments for \"\(request.name)\"")))
            return true
        }
        switch command.handler {
        case .lines(let run): run(self, loop, request) { reply($0.map { MPDReply(lines: $0) }) }
        case .binary(let run): run(self, loop, request, binaryLimit, reply)
        }
        return true
    }

    /// The same, for a reply of lines only (the session asks `run(_:binaryLimit:reply:)` first,
    /// which takes every command).
    func run(_ request: MPDRequest, reply: @escaping MPDLinesReply) {
        _ = run(request, binaryLimit: MPDSession.defaultBinaryLimit) { result in
            reply(result.map { $0.lines })
        }
    }
}

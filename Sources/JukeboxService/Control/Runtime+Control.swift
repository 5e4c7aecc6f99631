// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

// The control socket's side of the loop: lines in, events to the core, replies out. What a line
// means is the core's grammar (`ControlCommand`); this only routes.
extension Runtime {
    func serviceControl(_ fds: [pollfd]) {
        guard let control else { return }
        for fd in fds.dropFirst() where fd.revents != 0 {
            guard let client = control.clients.values.first(where: { $0.fd == fd.fd }) else { continue }
            if fd.revents & Int16(POLLOUT) != 0 { control.flush(client) }
            if client.ended {
                if fd.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 { client.closed = true }
                continue
            }
            let hangUp = fd.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0
            if hangUp && client.peerEnded { client.hungUp = true }
            if fd.revents & Int16(POLLIN) != 0 || (hangUp && !client.peerEnded) {
                if control.read(client) {
                    client.peerEnded = true
                    client.hungUp = hangUp
                }
            }
        }
        // A few lines of each client per pass, in turn: a client pipelining thousands of
        // commands cannot make another's `status` wait for all of them.
        for client in control.clients.values.sorted(by: { $0.id < $1.id }) where !client.closed && !client.pending.isEmpty {
            for line in control.take(client) { handle(line, from: client, control) }
        }
        for client in control.clients.values where client.peerEnded && client.pending.isEmpty && !client.ended && !client.closed {
            // Replies it is still owed (waiting for a save or the tag reader) are sent first to a
            // peer that only ended its side (shutdown SHUT_WR); one that hung up both ways
            // (POLLHUP: it exited) cannot read them, and its slot is freed now.
            if replySlots[client.id]?.isEmpty == false && !client.hungUp { client.ended = true } else { client.closed = true }
        }
        for client in control.stalledClients() { client.closed = true }
        for client in control.clients.values where client.closed {
            control.drop(client)
            replySlots[client.id] = nil
            eventClients.remove(client.id)
            jsonEventClients.remove(client.id)
            // A helper that went away cannot end its interruption: end it for it.
            for id in heldByClient.removeValue(forKey: client.id) ?? [] { dispatch(.interruptEnded(id: id)) }
        }
        // Newcomers last: the slots of clients that hung up on this pass are free for them.
        if fds[0].revents != 0 {
            for id in control.acceptAll(evictable: { !holdsSomething($0.id) }) { replySlots[id] = nil }
        }
    }

    /// When the next client that stopped mid-line counts as stalled (on the socket's clock,
    /// monotonic), nil when none did: the loop wakes for that and for nothing else about clients.
    func nextIdleClientDeadline() -> Double? { control?.nextStallDeadline() }

    /// Whether a client streams `events`, holds a yield, waits for an interruption's grant or is
    /// owed a reply: such a client is silent on purpose and never gives its slot to a newcomer.
    private func holdsSomething(_ id: Int) -> Bool {
        eventClients.contains(id) || heldByClient[id]?.isEmpty == false || waitingForGrant.values.contains { $0.contains(id) }
            || replySlots[id]?.isEmpty == false
    }

    // A reply line for the client, after the replies it is still owed (replies keep the order of
    // the lines, although a later line may be handled before an earlier one is answered).
    private func send(_ client: ControlSocket.Client, _ line: String) {
        if replySlots[client.id]?.isEmpty == false {
            replySlots[client.id]?.append(ReplySlot(lines: [line]))
        } else {
            control?.reply(client, line)
        }
    }

    // A place in the client's reply order for an answer that comes later; `fill` it then.
    private func reserveReply(_ client: ControlSocket.Client) -> ReplySlot {
        let slot = ReplySlot()
        replySlots[client.id, default: []].append(slot)
        return slot
    }

    private func fill(_ slot: ReplySlot, _ lines: [String], clientID id: Int) {
        slot.lines = lines
        guard let control, let client = control.clients[id] else { replySlots[id] = nil; return }
        while let first = replySlots[id]?.first, let ready = first.lines {
            replySlots[id]?.removeFirst()
            for line in ready { control.reply(client, line) }
        }
        if replySlots[id]?.isEmpty == true {
            replySlots[id] = nil
            if client.ended { client.closed = true }
        }
    }

    // Sends `lines` to the client once the saves handed over since `since` are on disk: an `ok`
    // to a change means it survives a power cut. The loop does not wait; the client's reply does.
    /// The reply to a change whose save failed: no `ok`, as that promises the change is on
    /// disk. The change stands in the player (`done` says what it was), and the core saves it
    /// again until a save succeeds (`State.saveRetry`).
    static func notSaved(_ done: String, _ error: String) -> String {
        "error: \(done), but not saved: \(error); the player keeps it and tries to save it again"
    }

    private func replyAfterSaves(since: UInt64, _ client: ControlSocket.Client, _ lines: @escaping (_ error: String?) -> [String]) {
        let slot = reserveReply(client), id = client.id
        afterSaves(since: since) { [weak self] error in self?.fill(slot, lines(error), clientID: id) }
    }

    private func handle(_ line: String?, from client: ControlSocket.Client, _ control: ControlSocket) {
        guard let line else {
            send(client, "error: line longer than \(ControlCommand.maxLineLength) bytes")
            return
        }
        if eventClients.remove(client.id) != nil {
            jsonEventClients.remove(client.id)
            // Any line ends an `events` stream (and is not a command).
            send(client, "ok events ended")
            return
        }
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
        switch ControlCommand.parse(line, seed: nextSeed()) {
        case .failure(let error):
            send(client, "error: \(error.message)")
        case .success(.help):
            send(client, "ok " + ControlCommand.helpText.split(separator: "\n").joined(separator: " · "))
        case .success(.status):
            feedHeard()
            send(client, "ok " + StatusView(state).line)
        case .success(.intent(let event)):
            feedHeard()
            let before = saveNumber
            dispatch(event)
            // The status line carries the core's message when the intent could not be done.
            let line = "ok " + StatusView(state).line
            replyAfterSaves(since: before, client) { error in [error.map { Self.notSaved("the change is made", $0) } ?? line] }
        case .success(.events(let json)):
            eventClients.insert(client.id)
            if json { jsonEventClients.insert(client.id) }
            send(client, "ok streaming events; send any line to stop")
        case .success(.interruptBegin(let reason)):
            beginInterruption(id: "manual", reason: reason, client: client)
        case .success(.interruptEnd):
            endInterruption(id: "manual", client: client, control)
        case .success(.yieldBegin(let reason)):
            let id = "yield-\(client.id)"
            heldByClient[client.id, default: []].append(id)
            beginInterruption(id: id, reason: reason, client: client)
        case .success(.yieldEnd):
            let id = "yield-\(client.id)"
            if let at = heldByClient[client.id]?.lastIndex(of: id) { heldByClient[client.id]?.remove(at: at) }
            endInterruption(id: id, client: client, control)
        case .success(let command):
            // Its reply may come from a worker: it keeps its place among the client's replies.
            let slot = reserveReply(client), id = client.id
            if answerLater(command, { [weak self] lines in self?.fill(slot, lines, clientID: id) }) { return }
            replySlots[id]?.removeLast()
            if replySlots[id]?.isEmpty == true { replySlots[id] = nil }
            for reply in answer(command) ?? ["error: not available here"] { send(client, reply) }
        }
    }

    private func beginInterruption(id: String, reason: String, client: ControlSocket.Client) {
        waitingForGrant[id, default: []].append(client.id)
        feedHeard()
        dispatch(.interruptBegan(id: id, reason: reason))
    }

    private func endInterruption(id: String, client: ControlSocket.Client, _ control: ControlSocket) {
        let before = state.interruptions.count
        dispatch(.interruptEnded(id: id))
        if state.interruptions.count < before {
            send(client, "ok " + StatusView(state).line)
        } else {
            send(client, "error: no interruption to end")
        }
    }

    /// The reply lines for commands that only read or load (shared by the socket and the console);
    /// nil for the ones that need the client (interruptions, events).
    func answer(_ command: ControlCommand) -> [String]? {
        switch command {
        case .statusJSON:
            feedHeard()
            return ["ok " + statusJSON()]
        case .queue(let page):
            let perPage = 20
            let pages = max(1, (state.queue.count + perPage - 1) / perPage)
            guard page <= pages else { return ["error: there " + (pages == 1 ? "is 1 page" : "are \(pages) pages")] }
            let current = state.currentTrack?.id
            let lines = state.queue.enumerated().dropFirst((page - 1) * perPage).prefix(perPage).map { i, t in
                (t.id == current ? "> " : "  ") + "\(i + 1). \(t.info.title)" + (t.info.artist.map { " – \($0)" } ?? "")
                    + "  " + TimeFormat.clock(t.info.duration)
            }
            return lines.map { "  " + $0 } + ["ok queue page \(page)/\(pages), \(state.queue.count) tracks"]
        case .queueJSON:
            return ["ok " + QueueJSON.text(state)]
        case .add, .load:
            return ["error: this player cannot load files"]
        case .cardAssign:
            return ["error: no cards map is configured (config \"rfid\")"]
        case .save:
            if let reason = state.stateUnreadable { return ["error: not saving: the state file cannot be read (\(reason))"] }
            return ["error: no state file is configured"]
        case .log(let count):
            return log.recent.suffix(count).map { "  " + $0 } + ["ok \(min(count, log.recent.count)) lines"]
        case .version:
            return ["ok " + version]
        case .diag:
            feedHeard()
            return diagLines().map { "  " + $0 } + ["ok"]
        case .help:
            return ["ok " + ControlCommand.helpText.split(separator: "\n").joined(separator: " · ")]
        default:
            return nil
        }
    }

    /// Starts the commands whose answer waits for a worker (`add`/`load`: the tag reader, then the
    /// save; `save`: the writer), without blocking the loop; `reply` gets the lines later, on the
    /// loop. False for every other command, and when the player cannot do it (then `answer` says why).
    func answerLater(_ command: ControlCommand, _ reply: @escaping ([String]) -> Void) -> Bool {
        switch command {
        case .add(let path), .load(let path):
            let replace = command == .load(path: path)
            return readSource([path]) { [weak self] tracks, messages, marked in
                guard let self else { return }
                guard !tracks.isEmpty else { return reply(["error: " + (messages.first ?? "nothing to play in \(path)")]) }
                let before = saveNumber
                // A `load` names its source: its bookmark applies (an `add` has none).
                dispatch(replace ? .loadSource(QueueSource(paths: [path], marked: marked), tracks: tracks) : .add(tracks))
                let done = "\(tracks.count) track\(tracks.count == 1 ? "" : "s") " + (replace ? "loaded" : "added")
                afterSaves(since: before) { error in
                    reply(messages.map { "  " + $0 } + [error.map { Self.notSaved(done, $0) } ?? "ok " + done])
                }
            }
        case .cardAssign(let id, let value):
            return assignCard(id: id, value: value, reply)
        case .save:
            guard writer != nil, state.stateUnreadable == nil else { return false }
            feedHeard()
            let before = saveNumber
            dispatch(.saveRequested)
            afterSaves(since: before) { [weak self] error in
                reply([error.map { "error: \($0)" } ?? "ok saved to \(self?.statePath ?? "")"])
            }
            return true
        default:
            return false
        }
    }

    func statusJSON() -> String { PlayerStatusJSON(state).text }

    func diagLines() -> [String] {
        var lines = [version, "uptime \(TimeFormat.clock(clock() - startedAt))"]
        if let status = readFileText("/proc/self/status") {
            let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ") }
            lines.append("memory \(rss ?? "?") resident")
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        lines.append("cpu \(Int(cpu * 1000)) ms since start")
        lines.append("player " + StatusView(state).line)
        lines += diagnostics?() ?? []
        lines.append("state file \(statePath ?? "none")" + (lastSave.map { s in
            ", last save \(Int(clock() - s.at)) s ago: " + (s.error ?? "ok")
        } ?? ", not saved yet") + (state.stateUnreadable.map { ", not saving: it cannot be read (\($0))" } ?? ""))
        lines.append("control clients \(control?.clients.count ?? 0)")
        if let mpd { lines.append("mpd on \(mpd.listener.listening.joined(separator: ", ")), \(mpd.listener.clients.count) clients") }
        return lines
    }

    /// Sends an event to every client streaming `events` and to the console when it streams:
    /// `event 04:47:43.250 button next down → playing` (wall-clock time of day, then what happened
    /// and the phase after it).
    func streamEvent(_ event: Event) {
        if case .cardRead(let id, _) = event {
            stream(event.summary, fields: [("card", id)])
        } else {
            stream(event.summary)
        }
    }

    /// Streams `what` as an event line (`streamEvent`'s format): also the button gestures,
    /// `event 04:47:43.250 gesture next long → playing`, which no event names by itself. `events
    /// --json` clients get `event {"time":…,"what":…,"phase":…}` with `fields` added (the card id,
    /// the button and its gesture), so a program never parses the words of `what`.
    func stream(_ what: String, fields: [(String, String)] = []) {
        let time = wallClockText(wallClockNow(), dateAndTime: false), phase = state.phase.name
        let line = "event \(time) \(what) → \(phase)"
        var json: String {
            let q = JSONText.quoted
            let pairs = [("time", time), ("what", what), ("phase", phase)] + fields
            return "event {" + pairs.map { q($0.0) + ":" + q($0.1) }.joined(separator: ",") + "}"
        }
        if let control, !eventClients.isEmpty {
            let jsonLine = jsonEventClients.isEmpty ? "" : json
            for id in eventClients {
                if let client = control.clients[id] { control.reply(client, jsonEventClients.contains(id) ? jsonLine : line) }
            }
        }
        if consoleStreaming { console?.print(consoleStreamingJSON ? json : line) }
    }

    /// Carries out `Command.grant(id)`: the first client waiting for that interruption learns the
    /// device is free.
    func grants(_ id: String) {
        guard var queue = waitingForGrant[id], !queue.isEmpty else { return }
        let clientID = queue.removeFirst()
        waitingForGrant[id] = queue.isEmpty ? nil : queue
        if clientID == Self.consoleID { grantConsole(); return }
        if let control, let client = control.clients[clientID] {
            control.reply(client, "ok released")
        }
    }
}

/// A reply owed to a socket client, in its place among the client's replies; `lines` is nil until
/// it is ready (a save or the tag reader is still at work).
final class ReplySlot {
    var lines: [String]?
    init(lines: [String]? = nil) { self.lines = lines }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc
import JukeboxSystem

/// The control socket's face, a room of its own: the socket and its clients (`ControlSocket`),
/// what is owed to each (`ControlClientBook`), lines in, events to the core, replies out. What a
/// line means is the core's grammar (`ControlCommand`); this only routes. It reaches the loop
/// only through `ControlLoop`; the loop polls its fds (`pollFDs`, `service`), streams events
/// through it (`stream`) and wakes for its idle clients (`nextDeadline`).
final class ControlFace {
    /// The loop (weakly: the loop owns the face).
    weak var loop: ControlLoop?
    let socket: ControlSocket
    /// Replies owed, event streams, held interruptions and grant waiters, per client.
    private(set) var book = ControlClientBook()

    init(socket: ControlSocket) {
        self.socket = socket
    }

    /// The number of clients connected, for `diag`.
    var clientCount: Int { socket.clients.count }

    /// Whether any client streams `events`.
    var streams: Bool { book.anyStreams }

    /// The socket's fds to poll: the listening one first, then each client's.
    func pollFDs() -> [pollfd] { socket.pollFDs() }

    /// When the next client that stopped mid-line counts as stalled (on the socket's clock,
    /// monotonic), nil when none did: the loop wakes for that and for nothing else about clients.
    var nextDeadline: Double? { socket.nextStallDeadline() }

    /// After a poll of `pollFDs()`: reads, handles a few lines of each client, drops the ones
    /// that went, and accepts newcomers.
    func service(_ fds: [pollfd]) {
        for fd in fds.dropFirst() where fd.revents != 0 {
            guard let client = socket.clients.values.first(where: { $0.fd == fd.fd }) else { continue }
            if fd.revents & Int16(POLLOUT) != 0 { socket.flush(client) }
            if client.ended {
                if fd.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 { client.closed = true }
                continue
            }
            let hangUp = fd.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0
            if hangUp && client.peerEnded { client.hungUp = true }
            if fd.revents & Int16(POLLIN) != 0 || (hangUp && !client.peerEnded) {
                if socket.read(client) {
                    client.peerEnded = true
                    client.hungUp = hangUp
                }
            }
        }
        // A few lines of each client per pass, in turn: a client pipelining thousands of
        // commands cannot make another's `status` wait for all of them.
        for client in socket.clients.values.sorted(by: { $0.id < $1.id }) where !client.closed && !client.pending.isEmpty {
            for line in socket.take(client) { handle(line, from: client) }
        }
        for client in socket.clients.values where client.peerEnded && client.pending.isEmpty && !client.ended && !client.closed {
            // Replies it is still owed (waiting for a save or the tag reader) are sent first to a
            // peer that only ended its side (shutdown SHUT_WR); one that hung up both ways
            // (POLLHUP: it exited) cannot read them, and its slot is freed now.
            if book.owes(client.id) && !client.hungUp { client.ended = true } else { client.closed = true }
        }
        for client in socket.stalledClients() { client.closed = true }
        for client in socket.clients.values where client.closed {
            socket.drop(client)
            // A helper that went away cannot end its interruption: end it for it.
            for id in book.drop(client.id) { loop?.dispatch(.interruptEnded(id: id)) }
        }
        // Newcomers last: the slots of clients that hung up on this pass are free for them.
        if fds[0].revents != 0 {
            for id in socket.acceptAll(evictable: { [book] in !book.holdsSomething($0.id) }) { book.forgetReplies(id) }
        }
    }

    /// An event line for every client streaming `events`.
    func stream(_ line: EventLine) {
        guard book.anyStreams else { return }
        let text = line.text, json = book.streams.values.contains(true) ? line.json : ""
        for (id, wantsJSON) in book.streams {
            if let client = socket.clients[id] { socket.reply(client, wantsJSON ? json : text) }
        }
    }

    // A reply line for the client, after the replies it is still owed (replies keep the order of
    // the lines, although a later line may be handled before an earlier one is answered).
    private func send(_ client: ControlSocket.Client, _ line: String) {
        for due in book.say(line, to: client.id) { socket.reply(client, due) }
    }

    private func fill(_ slot: ControlClientBook.Slot, _ lines: [String]) {
        guard let client = socket.clients[slot.client] else { return book.forgetReplies(slot.client) }
        let (due, settled) = book.fill(slot, lines)
        for line in due { socket.reply(client, line) }
        if settled && client.ended { client.closed = true }
    }

    // Sends `lines` to the client once the saves handed over since `since` are on disk: an `ok`
    // to a change means it survives a power cut. The loop does not wait; the client's reply does.
    private func replyAfterSaves(since: UInt64, _ client: ControlSocket.Client, _ lines: @escaping (_ error: String?) -> [String]) {
        let slot = book.reserve(for: client.id)
        loop?.afterSaves(since: since) { [weak self] error in self?.fill(slot, lines(error)) }
    }

    private func handle(_ line: String?, from client: ControlSocket.Client) {
        guard let loop else { return }
        guard let line else {
            send(client, "error: line longer than \(ControlCommand.maxLineLength) bytes")
            return
        }
        if book.stopStreaming(client.id) {
            // Any line ends an `events` stream (and is not a command).
            send(client, "ok events ended")
            return
        }
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
        switch ControlCommand.parse(line, seed: loop.nextSeed()) {
        case .failure(let error):
            send(client, "error: \(error.message)")
        case .success(.help):
            send(client, "ok " + ControlCommand.helpText.split(separator: "\n").joined(separator: " · "))
        case .success(.status):
            loop.feedHeard()
            send(client, "ok " + StatusView(loop.state).line)
        case .success(.intent(let event)):
            loop.feedHeard()
            let before = loop.saveNumber
            loop.dispatch(event)
            // The status line carries the core's message when the intent could not be done.
            let line = "ok " + StatusView(loop.state).line
            replyAfterSaves(since: before, client) { error in [error.map { ControlReply.notSaved("the change is made", $0) } ?? line] }
        case .success(.events(let json)):
            book.startStreaming(client.id, json: json)
            send(client, "ok streaming events; send any line to stop")
        case .success(.interruptBegin(let reason)):
            beginInterruption(id: "manual", reason: reason, client: client)
        case .success(.interruptEnd):
            endInterruption(id: "manual", client: client)
        case .success(.yieldBegin(let reason)):
            let id = "yield-\(client.id)"
            book.hold(id, by: client.id)
            beginInterruption(id: id, reason: reason, client: client)
        case .success(.yieldEnd):
            let id = "yield-\(client.id)"
            book.unhold(id, by: client.id)
            endInterruption(id: id, client: client)
        case .success(.sourceBegin(let name, let sender)):
            beginSource(name: name, sender: sender, client: client)
        case .success(.sourceEnd(let name)):
            endSource(name: name, client: client)
        case .success(let command):
            // Its reply may come from a worker: it keeps its place among the client's replies.
            let slot = book.reserve(for: client.id)
            if loop.answerLater(command, { [weak self] lines in self?.fill(slot, lines) }) { return }
            book.cancel(slot)
            for reply in loop.answer(command) ?? ["error: not available here"] { send(client, reply) }
        }
    }

    private func beginInterruption(id: String, reason: String, client: ControlSocket.Client) {
        book.waitForGrant(id, client: client.id)
        loop?.beginInterruption(id: id, reason: reason) { [weak self] in self?.granted(id) }
    }

    /// `source begin`: the client holds the source (it ends when the client goes) and hears
    /// `ok released` once the device is free, or an error when the core refused the source.
    private func beginSource(name: String, sender: String, client: ControlSocket.Client) {
        guard let loop else { return }
        let id = OtherSource.interruptionID(name)
        book.waitForGrant(id, client: client.id)
        if loop.beginSource(name: name, sender: sender, granted: { [weak self] in self?.granted(id) }) {
            book.hold(id, by: client.id)
        } else {
            book.stopWaiting(id, client: client.id)
            send(client, "error: " + (loop.state.message ?? "the source was refused"))
        }
    }

    /// `source end`: the source's latest interruption ends, whoever holds it; the client that
    /// held it is told (`ok source NAME ended`), so a helper waiting on its connection exits.
    private func endSource(name: String, client: ControlSocket.Client) {
        let id = OtherSource.interruptionID(name)
        if let holder = book.unholdLatest(id), holder != client.id, let other = socket.clients[holder] {
            send(other, "ok source \(name) ended")
        }
        endInterruption(id: id, client: client)
    }

    /// The grant of `id` came: the client that waited longest for it learns the device is free.
    private func granted(_ id: String) {
        guard let clientID = book.granted(id), let client = socket.clients[clientID] else { return }
        socket.reply(client, "ok released")
    }

    private func endInterruption(id: String, client: ControlSocket.Client) {
        guard let loop else { return }
        let before = loop.state.interruptions.count
        loop.dispatch(.interruptEnded(id: id))
        if loop.state.interruptions.count < before {
            send(client, "ok " + StatusView(loop.state).line)
        } else {
            send(client, "error: no interruption to end")
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
#if canImport(Glibc)
import Glibc
#endif

// The control socket's side of the loop: lines in, events to the core, replies out. What a line
// means is the core's grammar (`ControlCommand`); this only routes.
extension Runtime {
    func serviceControl(_ fds: [pollfd]) {
        guard let control else { return }
        if fds[0].revents != 0 { control.acceptAll() }
        for fd in fds.dropFirst() where fd.revents != 0 {
            guard let client = control.clients.values.first(where: { $0.fd == fd.fd }) else { continue }
            if fd.revents & Int16(POLLOUT) != 0 { control.flush(client) }
            if fd.revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                let (lines, gone) = control.read(client)
                for line in lines { handle(line, from: client, control) }
                if gone { client.closed = true }
            }
        }
        for client in control.clients.values where client.closed {
            control.drop(client)
            // A helper that went away cannot end its interruption: end it for it.
            for id in heldByClient.removeValue(forKey: client.id) ?? [] { dispatch(.interruptEnded(id: id)) }
        }
    }

    private func handle(_ line: String?, from client: ControlSocket.Client, _ control: ControlSocket) {
        guard let line else {
            control.reply(client, "error: line longer than \(ControlCommand.maxLineLength) bytes")
            return
        }
        if line.allSatisfy({ $0 == " " || $0 == "\t" }) { return }
        switch ControlCommand.parse(line, seed: nextSeed()) {
        case .failure(let error):
            control.reply(client, "error: \(error.message)")
        case .success(.help):
            control.reply(client, "ok " + ControlCommand.helpText.split(separator: "\n").joined(separator: " · "))
        case .success(.status):
            feedHeard()
            control.reply(client, "ok " + StatusView(state).line)
        case .success(.intent(let event)):
            feedHeard()
            dispatch(event)
            // The status line carries the core's message when the intent could not be done.
            control.reply(client, "ok " + StatusView(state).line)
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
            control.reply(client, "ok " + StatusView(state).line)
        } else {
            control.reply(client, "error: no interruption to end")
        }
    }

    /// Carries out `Command.grant(id)`: the first client waiting for that interruption learns the
    /// device is free.
    func grants(_ id: String) {
        guard var queue = waitingForGrant[id], !queue.isEmpty else { return }
        let clientID = queue.removeFirst()
        waitingForGrant[id] = queue.isEmpty ? nil : queue
        if let control, let client = control.clients[clientID] {
            control.reply(client, "ok released")
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

// The serial console's side of the loop: the same command language as the control socket, for a
// technician on a UART with no network. A broken cable or a wrong baud rate only costs the
// console itself: output is bounded and never blocks, a vanished tty is reopened later.
extension Runtime {
    /// The console's id in `waitingForGrant` (socket clients have positive ids).
    static let consoleID = -1

    func serviceConsole(_ console: SerialConsole) {
        for input in console.readInput() {
            switch input {
            case .line(let line): consoleLine(line, console)
            case .interrupt: break  // the console printed ^C and a new prompt itself
            case .anyKey:
                consoleStreaming = false
                console.print("events ended")
                console.prompt()
            }
        }
        if let failed = console.failed {
            log.warning("console: \(failed)" + (console.canReopen ? "; reopening later" : "; a pty is not reopened"))
        }
    }

    func maintainConsole() {
        guard let console, console.failed != nil, console.canReopen else { return }
        if (try? console.reopen()) != nil {
            log.info("console: \(console.path ?? "") reopened")
            console.prompt()
        }
    }

    private func consoleLine(_ line: String, _ console: SerialConsole) {
        switch ControlCommand.parse(line, seed: nextSeed()) {
        case .failure(let error):
            console.print("error: \(error.message)")
        case .success(.status):
            feedHeard()
            console.print(StatusView(state).line)
        case .success(.intent(let event)):
            feedHeard()
            dispatch(event)
            console.print(StatusView(state).line)
        case .success(.events(let json)):
            consoleStreaming = true
            consoleStreamingJSON = json
            console.streaming = true
            console.print("streaming events; press any key to stop")
            return  // no prompt while streaming
        case .success(.interruptBegin(let reason)):
            waitingForGrant["manual", default: []].append(Self.consoleID)
            feedHeard()
            dispatch(.interruptBegan(id: "manual", reason: reason))
            return  // the prompt comes with the grant
        case .success(.interruptEnd):
            let before = state.interruptions.count
            dispatch(.interruptEnded(id: "manual"))
            console.print(state.interruptions.count < before ? StatusView(state).line : "error: no interruption to end")
        case .success(.yieldBegin), .success(.yieldEnd):
            console.print("error: yield belongs to `jukebox yield`; use interrupt begin / interrupt end here")
        case .success(let command):
            // Read from a worker (tags, a save): printed with a new prompt once it is there.
            if answerLater(command, { lines in
                Self.print(lines, on: console)
                console.prompt()
            }) { return }
            Self.print(answer(command) ?? ["error: not available here"], on: console)
        }
        console.prompt()
    }

    // The console shows the text itself: no protocol prefixes.
    private static func print(_ replies: [String], on console: SerialConsole) {
        for reply in replies {
            if reply.hasPrefix("  ") { console.print(String(reply.dropFirst(2))) } else if reply.hasPrefix("ok ") {
                console.print(String(reply.dropFirst(3)))
            } else if reply != "ok" {
                console.print(reply)
            }
        }
    }

    /// A grant for the console: the device is free.
    func grantConsole() {
        guard let console else { return }
        console.print("released")
        console.prompt()
    }
}

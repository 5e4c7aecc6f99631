// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc

/// The serial console's face, a room of its own: the same command language as the control
/// socket, for a technician on a UART with no network. A broken cable or a wrong baud rate only
/// costs the console itself: output is bounded and never blocks, a vanished tty is reopened
/// later. It reaches the loop only through `ControlLoop`; the loop polls its fd (`pollFD`,
/// `service`), streams events through it (`stream`) and has it reopen a lost tty (`maintain`).
final class ConsoleFace {
    /// The loop (weakly: the loop owns the face).
    weak var loop: ControlLoop?
    let console: SerialConsole
    /// Whether the console streams `events`, and as `events --json`.
    private var streaming = false
    private var streamingJSON = false

    init(console: SerialConsole) {
        self.console = console
    }

    /// Whether the console streams `events`.
    var streams: Bool { streaming }

    /// The console's fd to poll (-1, which poll ignores, while it is closed).
    func pollFD() -> pollfd {
        pollfd(fd: console.fd, events: Int16(POLLIN) | (console.wantsWrite ? Int16(POLLOUT) : 0), revents: 0)
    }

    /// A lost tty that a look once a second may reopen.
    var needsMaintenance: Bool { console.failed != nil && console.canReopen }

    /// After a poll of `pollFD()`: writes what is queued, reads and answers what was typed.
    func service(_ revents: Int16) {
        guard revents != 0 else { return }
        if revents & Int16(POLLOUT) != 0 { console.flush() }
        guard revents & ~Int16(POLLOUT) != 0 else { return }
        for input in console.readInput() {
            switch input {
            case .line(let line): handle(line)
            case .interrupt: break  // the console printed ^C and a new prompt itself
            case .anyKey:
                streaming = false
                console.print("events ended")
                console.prompt()
            }
        }
        if let failed = console.failed {
            loop?.log.warning("console: \(failed)" + (console.canReopen ? "; reopening later" : "; a pty is not reopened"))
        }
    }

    /// Reopens a lost tty (at most once a second, from the loop's maintenance).
    func maintain() {
        guard needsMaintenance else { return }
        if (try? console.reopen()) != nil {
            loop?.log.info("console: \(console.path ?? "") reopened")
            console.prompt()
        }
    }

    /// An event line, while the console streams `events`.
    func stream(_ line: EventLine) {
        if streaming { console.print(streamingJSON ? line.json : line.text) }
    }

    private func handle(_ line: String) {
        guard let loop else { return }
        switch ControlCommand.parse(line, seed: loop.nextSeed()) {
        case .failure(let error):
            console.print("error: \(error.message)")
        case .success(.status):
            loop.feedHeard()
            console.print(StatusView(loop.state).line)
        case .success(.intent(let event)):
            loop.feedHeard()
            loop.dispatch(event)
            console.print(StatusView(loop.state).line)
        case .success(.events(let json)):
            streaming = true
            streamingJSON = json
            console.streaming = true
            console.print("streaming events; press any key to stop")
            return  // no prompt while streaming
        case .success(.interruptBegin(let reason)):
            loop.beginInterruption(id: "manual", reason: reason) { [weak self] in self?.granted() }
            return  // the prompt comes with the grant
        case .success(.interruptEnd):
            let before = loop.state.interruptions.count
            loop.dispatch(.interruptEnded(id: "manual"))
            console.print(loop.state.interruptions.count < before ? StatusView(loop.state).line : "error: no interruption to end")
        case .success(.sourceBegin), .success(.sourceEnd):
            console.print("error: source belongs to `jukebox source` (run by shairport-sync and the like); use interrupt begin / interrupt end here")
        case .success(.yieldBegin), .success(.yieldEnd):
            console.print("error: yield belongs to `jukebox yield`; use interrupt begin / interrupt end here")
        case .success(let command):
            // Read from a worker (tags, a save): printed with a new prompt once it is there.
            if loop.answerLater(command, { [console] lines in
                Self.print(lines, on: console)
                console.prompt()
            }) { return }
            Self.print(loop.answer(command) ?? ["error: not available here"], on: console)
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
    private func granted() {
        console.print("released")
        console.prompt()
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import Glibc

/// The control language: the same bytes arrive as socket lines and as keystrokes on the serial
/// console; every line is parsed, rendered back, and carried out on a small player.
enum CommandHarness {
    static let seed: UInt64 = 0x5EED

    static func run(_ data: [UInt8]) -> Bool {
        var player = Player()
        var accepted = false
        for line in socketLines(data) { accepted = check(line, &player) || accepted }
        // The parser on its own takes any string, newlines and NULs included.
        accepted = check(String(decoding: data.prefix(ControlCommand.maxLineLength * 2), as: UTF8.self), &player) || accepted
        for line in consoleLines(data, &player) { accepted = check(line, &player) || accepted }
        return accepted
    }

    /// The control socket's framing (`ControlSocket.read`): LF ends a line, a CR before it is
    /// dropped, a line over the limit is refused whole, bytes are decoded leniently.
    static func socketLines(_ data: [UInt8]) -> [String] {
        var lines: [String] = []
        for raw in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
            var bytes = raw
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            guard bytes.count <= ControlCommand.maxLineLength else { continue }
            let line = String(decoding: bytes, as: UTF8.self)
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }  // the runtime ignores these
            lines.append(line)
        }
        return lines
    }

    /// The bytes typed on a serial console: through `SerialConsole` and its line editor over a
    /// socket pair, in chunks as a UART delivers them; returns the lines it submitted.
    static func consoleLines(_ data: [UInt8], _ player: inout Player) -> [String] {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { fatalError("socketpair: \(errno)") }
        let peer = fds[1]
        _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)
        defer { close(peer) }
        let console = SerialConsole(fd: fds[0])
        defer { console.close() }
        var lines: [String] = []
        var sink = [UInt8](repeating: 0, count: 4096)
        // Chunk sizes come from the input so the fuzzer also explores sequences split across reads.
        let chunk = 1 + Int(data.first ?? 0) % 64
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunk, data.count)
            let written = data[offset..<end].withUnsafeBytes { write(peer, $0.baseAddress!, $0.count) }
            require(written > 0, "socket pair write failed: \(errno)")
            offset += written
            for input in console.readInput() {
                switch input {
                case .line(let line):
                    checkConsoleLine(line)
                    lines.append(line)
                    // As the runtime answers: `events` streams without a prompt, the rest print and prompt.
                    if case .success(.events) = ControlCommand.parse(line, seed: seed) {
                        console.print("streaming events; press any key to stop")
                        console.streaming = true
                    } else {
                        console.print("reply to \(line)")
                        console.prompt()
                    }
                case .interrupt:
                    break
                case .anyKey:
                    require(!console.streaming, "streaming still on after a key")
                    console.prompt()
                }
            }
            require(console.pendingOutput <= SerialConsole.maxOutput, "console output \(console.pendingOutput) over its bound")
            while read(peer, &sink, sink.count) > 0 {}
        }
        return lines
    }

    /// What `ConsoleInput.line` promises: bounded, printable, not blank.
    static func checkConsoleLine(_ line: String) {
        require(line.utf8.count <= ControlCommand.maxLineLength, "console line of \(line.utf8.count) bytes")
        require(!line.allSatisfy { $0 == " " }, "blank console line submitted")
        for u in line.unicodeScalars {
            require(u.value >= 0x20 && u.value != 0x7F && !(0x80...0x9F).contains(u.value),
                    "control character U+\(String(u.value, radix: 16)) in console line \(line.debugDescription)")
        }
    }

    /// Parses a line, checks the reply and the round trip, carries it out; true when accepted.
    static func check(_ line: String, _ player: inout Player) -> Bool {
        switch ControlCommand.parse(line, seed: seed) {
        case .failure(let error):
            require(!error.message.isEmpty, "empty error for \(line.debugDescription)")
            require(error.message.utf8.count <= 200, "error of \(error.message.utf8.count) bytes for a line")
            return false
        case .success(let command):
            if let text = render(command) {
                let again = ControlCommand.parse(text, seed: seed)
                require(again == .success(command),
                        "parse(render(c)) != c: \(line.debugDescription) → \(command) → \(text.debugDescription) → \(again)")
            }
            player.apply(command)
            return true
        }
    }

    /// The canonical text of a command; nil where no text parses back exactly (a time the
    /// `m:ss` syntax cannot write, such as 1e-7 s).
    static func render(_ command: ControlCommand) -> String? {
        switch command {
        case .intent(let event):
            switch event {
            case .play: return "play"
            case .pause: return "pause"
            case .togglePlayPause: return "toggle"
            case .stop: return "stop"
            case .next: return "next"
            case .previous: return "prev"
            case .nextFile: return "next --file"
            case .previousFile: return "prev --file"
            case .clear: return "clear"
            case .playPodcast(let name): return "podcast " + name
            case .playEntry(let at): return "play \(at + 1)"
            case .remove(let at): return "delete \(at + 1)"
            case .move(let from, let to): return "move \(from + 1) \(to + 1)"
            case .seek(let to): return plain(to).map { "seek " + $0 }
            case .seekBy(let by): return plain(abs(by)).map { "seek " + (by.sign == .minus ? "-" : "+") + $0 }
            case .setVolume(let n): return "vol \(n)"
            case .changeVolume(let n): return n < 0 ? "vol \(n)" : "vol +\(n)"
            case .setShuffle(let on, _): return on ? "shuffle on" : "shuffle off"
            case .setRepeat(let mode): return "repeat " + mode.rawValue
            case .sleepTimer(let request):
                guard let request else { return "sleep off" }
                guard case .after(let seconds) = request else { return request.words }
                // Minutes as written; nil where that number times 60 is not these seconds exactly.
                let minutes = seconds / 60
                return minutes * 60 == seconds ? "sleep \(minutes)" : nil
            case .setSpeed(let speed):
                // As shown (two decimals); nil where that is not this speed exactly.
                guard let speed else { return "speed default" }
                return Speed.parse(Speed.text(speed)) == speed ? "speed " + Speed.text(speed) : nil
            default: fatalError("the control language produced \(event)")
            }
        case .status: return "status"
        case .statusJSON: return "status --json"
        case .interruptBegin(let reason): return "interrupt begin " + reason
        case .interruptEnd: return "interrupt end"
        case .yieldBegin(let reason): return "yield begin " + reason
        case .yieldEnd: return "yield end"
        case .sourceBegin(let name, let sender): return "source begin \(name) " + sender
        case .sourceEnd(let name): return "source end " + name
        case .help: return "help"
        case .queue(let page): return "queue \(page)"
        case .queueJSON(let from): return "queue --json \(from)"
        case .lsJSON(let path, let from): return "ls --json --from \(from)" + (path.map { " " + $0 } ?? "")
        case .libraryUpdate(let path): return "update" + (path.map { " " + $0 } ?? "")
        case .bluetooth(let action, let address, let pin): return "bluetooth \(action.rawValue) " + address + (pin.map { " pin " + $0 } ?? "")
        case .searchJSON(let text): return "search --json " + text
        case .add(let path): return "add " + path
        case .load(let path): return "load " + path
        case .save: return "save"
        case .diag: return "diag"
        case .log(let count): return "log \(count)"
        case .events(let json): return json ? "events --json" : "events"
        case .version: return "version"
        case .cardAssign(let id, let value): return "card assign " + (id.map { $0 + " " } ?? "") + value
        case .reload: return "reload"
        case .systemJSON: return "system --json"
        case .restart: return "restart"
        case .cardAssignNext(let value): return value.map { "card assign --next " + $0 } ?? "card assign --cancel"
        case .cardDelete(let id): return "card delete " + id
        case .cardsJSON: return "cards --json"
        case .bookmarksJSON: return "bookmarks --json"
        case .podcastsJSON: return "podcasts --json"
        case .bookmarkReset(let path): return "bookmark reset " + (path ?? "--all")
        }
    }

    /// Seconds as digits and a point, the only form `TimeFormat.parse` reads.
    static func plain(_ seconds: Double) -> String? {
        let text = "\(seconds)"
        return text.allSatisfy({ $0.isNumber || $0 == "." }) ? text : nil
    }

    /// A small player: the core state with a queue, fed what the runtime would dispatch.
    struct Player {
        var state: State
        var steps = 0

        init() {
            // With a graphic panel, so the display's frames (clock, progress bar) are drawn too.
            var settings = Settings()
            settings.display = .oled128x64
            state = State(settings: settings)
            _ = reduce(&state, .add([
                TrackInfo(path: "/m/a.flac", duration: 90),
                TrackInfo(path: "/m/b.ogg"),
                TrackInfo(path: "/m/c.wav", duration: 0.5),
            ]))
        }

        mutating func apply(_ command: ControlCommand) {
            // Bounded, so one long input cannot grow the queue without end.
            guard steps < 64 else { return }
            steps += 1
            let event: Event
            switch command {
            case .intent(let e): event = e
            case .add(let path): event = .add([TrackInfo(path: path)])
            case .load(let path): event = .replaceQueue([TrackInfo(path: path, duration: Double(path.utf8.count))])
            case .interruptBegin(let reason): event = .interruptBegan(id: "manual", reason: reason)
            case .interruptEnd: event = .interruptEnded(id: "manual")
            case .yieldBegin(let reason): event = .interruptBegan(id: "yield-1", reason: reason)
            case .yieldEnd: event = .interruptEnded(id: "yield-1")
            case .sourceBegin(let name, let sender): event = .sourceBegan(name: name, sender: sender)
            case .sourceEnd(let name): event = .interruptEnded(id: OtherSource.interruptionID(name))
            case .save: event = .saveRequested
            default: return
            }
            _ = reduce(&state, event)
            // Time passes and the engine reports, so seeks and positions meet the clock.
            _ = reduce(&state, .tick(now: Double(steps)))
            checkCoreInvariants(state, after: "\(command)")
        }
    }
}

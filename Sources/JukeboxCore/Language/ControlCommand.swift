// SPDX-License-Identifier: MIT

/// A line of the control language (control socket, later the serial console), parsed.
/// The grammar lives in the core so every front end understands the same words.
public enum ControlCommand: Equatable, Sendable {
    /// A player intent, carried out as this event.
    case intent(Event)
    /// Report the status.
    case status
    /// Begin an interruption that lasts until `interruptEnd` (reason for the status).
    case interruptBegin(reason: String)
    /// End the most recent `interruptBegin`.
    case interruptEnd
    /// Begin an interruption held by this connection: it ends with `yieldEnd` or when the
    /// connection closes (so a crashed helper cannot keep the player silent).
    case yieldBegin(reason: String)
    /// End this connection's interruption.
    case yieldEnd
    /// `source begin NAME [SENDER]`: another program (`airplay`, `bluetooth`) starts to play
    /// through the box (`Event.sourceBegan`); held by this connection like `yieldBegin`, so a
    /// source whose helper dies never leaves the player waiting.
    case sourceBegin(name: String, sender: String)
    /// `source end NAME`: that program stopped playing (from any connection).
    case sourceEnd(name: String)
    /// List the commands.
    case help
    /// The status as one JSON object (for scripts).
    case statusJSON
    /// A page of the queue (1-based, 20 entries a page).
    case queue(page: Int)
    /// A page of the queue as one JSON object (`queue --json [FROM]`, for the web face): its entries
    /// from position `from` (1-based) with their tags and lengths, as many as fit one reply line,
    /// the current position, and where the next page starts.
    case queueJSON(from: Int)
    /// The folders and audio files directly inside `path` (nil: the music folders) as one JSON
    /// object (`ls --json [--from N] [PATH]`, for the web face's library), a page from entry `from`
    /// (1-based, folders first); the player refuses a path outside its music folders.
    case lsJSON(path: String?, from: Int)
    /// Audio files and folders of the music folders whose title, artist, album or name holds
    /// every word of `text` (`search --json TEXT`, for the web face): one JSON object, bounded
    /// in results and time (`LibrarySearch`).
    case searchJSON(text: String)
    /// Append a file, folder or playlist.
    case add(path: String)
    /// Replace the queue with a folder or playlist and play it.
    case load(path: String)
    /// Save the state now.
    case save
    /// Versions, uptime, memory and CPU, the sound device and its counters, the board, the state file.
    case diag
    /// The last `count` log lines.
    case log(count: Int)
    /// Stream events (buttons, device, phases) until the next line or key; with `json`, each as
    /// `event {…}` with the card id or the button gesture as fields of their own (for programs).
    case events(json: Bool)
    /// The program's version.
    case version
    /// Put card `id` (nil: the last unknown card read) on the cards map as `value` (an absolute
    /// path, or a command word of `Cards.commands`).
    case cardAssign(id: String?, value: String)
    /// Read the config file again, as SIGHUP does (for the web face's settings, which cannot
    /// signal the player from its sandbox).
    case reload
    /// The box for the web face's System page (`system --json`): versions, uptimes, memory,
    /// disks, temperatures, addresses, as one JSON object.
    case systemJSON
    /// Save and exit with status 75, for systemd (Restart=on-failure) to start the player again.
    case restart
    /// `card assign --next VALUE`: the next card swiped gets `value` (checked here) instead of
    /// playing; `card assign --cancel` (nil) drops a waiting assignment.
    case cardAssignNext(value: String?)
    /// `card delete ID`: take card `id` off the cards map.
    case cardDelete(id: String)
    /// `cards --json`: the cards map, its settings and a waiting assignment as one JSON object.
    case cardsJSON
    /// `bookmarks --json`: every bookmark as one JSON object.
    case bookmarksJSON
    /// `podcasts --json`: each configured podcast, its episodes counted, the next one, the last error.
    case podcastsJSON
    /// `bookmark reset PATH|--all`: drop the bookmarks of the sources whose first path is
    /// `path` (nil: all of them).
    case bookmarkReset(path: String?)
    /// `update [FOLDER]`: the MPD face's library index reads `folder` (nil: every music folder)
    /// again, as MPD's `update` does (the web face asks after an upload).
    case libraryUpdate(path: String?)
    /// `bluetooth pair|trust|forget|disconnect ADDRESS`: BlueZ pairs with, trusts, forgets or
    /// disconnects the device (run off the loop; the reply says how it went). `pin`: the PIN or
    /// passkey a pair answers when the device asks for one (`bluetooth pair ADDRESS pin 0000`).
    case bluetooth(BluetoothAction, address: String, pin: String? = nil)

    /// The commands, one per line, for `help`.
    public static let helpText = """
    status [--json] · play [N] · pause · toggle · stop · next · prev · seek [+|-]m:ss · vol [+|-]N
    shuffle on|off · repeat off|one|all · queue [page|--json [FROM]] · delete N · move FROM TO
    add PATH · load FOLDER|PLAYLIST · clear · save · ls --json [--from N] [FOLDER] · search --json TEXT
    sleep MINUTES|track|chapter|folder|off · speed [0.75-2|default]
    interrupt begin [reason] · interrupt end · yield begin [reason] · yield end
    source begin NAME [SENDER] · source end NAME
    diag · log [N] · events [--json] · version · help · card assign [ID] PATH|URL|COMMAND
    card assign --next PATH|URL|COMMAND · card assign --cancel · card delete ID · cards --json
    bookmarks --json · bookmark reset PATH|--all · podcast NAME · podcasts --json
    reload · system --json · restart · update [FOLDER] · bluetooth pair|trust|forget|disconnect ADDRESS
    bluetooth pair ADDRESS pin DIGITS
    """

    /// Longest line accepted, in bytes.
    public static let maxLineLength = 1024

    /// Parses one line (without its newline); the error says what was wrong, for the reply.
    /// `seed` feeds shuffle.
    public static func parse(_ line: String, seed: UInt64) -> Result<ControlCommand, ControlError> {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first?.lowercased() else { return .failure(ControlError("empty command")) }
        let rest = Array(words.dropFirst())
        func none(_ c: ControlCommand) -> Result<ControlCommand, ControlError> {
            rest.isEmpty ? .success(c) : .failure(ControlError("\(verb) takes no arguments"))
        }
        switch verb {
        case "status":
            if rest == ["--json"] { return .success(.statusJSON) }
            return none(.status)
        case "queue":
            if rest.first == "--json" {
                // `queue --json [FROM]`: the page from position FROM (1-based, 1 when left out).
                guard rest.count <= 2, let from = rest.count == 1 ? 1 : position(rest[1]) else {
                    return .failure(ControlError("usage: queue --json [FROM] (a queue position from 1)"))
                }
                return .success(.queueJSON(from: from))
            }
            guard rest.count <= 1, let page = rest.isEmpty ? 1 : Int(rest[0]), page >= 1 else {
                return .failure(ControlError("usage: queue [page]"))
            }
            return .success(.queue(page: page))
        case "add", "load":
            // The rest of the line is the path, spaces and all.
            let afterVerb = line.drop { $0 == " " || $0 == "\t" }.dropFirst(verb.count)
            let path = Substring(afterVerb).trimmingSpaces()
            guard !path.isEmpty else { return .failure(ControlError("usage: \(verb) PATH")) }
            return .success(verb == "add" ? .add(path: path) : .load(path: path))
        case "ls":
            // `ls --json [--from N] [PATH]`: `--from N` only right after `--json`; the rest of the
            // line is the path, spaces, a leading `--` and all (`--from 1 --from x` names `--from x`).
            let usage = ControlError("usage: ls --json [--from N] [FOLDER]")
            guard rest.first == "--json" else { return .failure(usage) }
            func skipSpaces(_ s: Substring) -> Substring { s.drop { $0 == " " || $0 == "\t" } }
            var tail = skipSpaces(skipSpaces(Substring(line)).dropFirst(verb.count)).dropFirst("--json".count)
            var from = 1
            if rest.count >= 2, rest[1] == "--from" {
                guard rest.count >= 3, let n = position(rest[2]) else { return .failure(usage) }
                from = n
                tail = skipSpaces(skipSpaces(tail).dropFirst("--from".count)).drop { $0 != " " && $0 != "\t" }
            }
            let path = tail.trimmingSpaces()
            return .success(.lsJSON(path: path.isEmpty ? nil : path, from: from))
        case "search":
            // `search --json TEXT`: the rest of the line after `--json` is the text.
            guard rest.first == "--json", rest.count > 1 else { return .failure(ControlError("usage: search --json TEXT")) }
            let afterVerb = line.drop { $0 == " " || $0 == "\t" }.dropFirst(verb.count).drop { $0 == " " || $0 == "\t" }
            return .success(.searchJSON(text: Substring(afterVerb.dropFirst("--json".count)).trimmingSpaces()))
        case "card": return parseCard(line)
        case "cards":
            guard rest == ["--json"] else { return .failure(ControlError("usage: cards --json")) }
            return .success(.cardsJSON)
        case "podcasts":
            guard rest == ["--json"] else { return .failure(ControlError("usage: podcasts --json")) }
            return .success(.podcastsJSON)
        case "bookmarks":
            guard rest == ["--json"] else { return .failure(ControlError("usage: bookmarks --json")) }
            return .success(.bookmarksJSON)
        case "bookmark":
            // `bookmark reset PATH`: the rest of the line after `reset` is the path, spaces and all.
            let usage = ControlError("usage: bookmark reset PATH|--all")
            guard rest.first?.lowercased() == "reset" else { return .failure(usage) }
            let afterVerb = line.drop { $0 == " " || $0 == "\t" }.dropFirst(verb.count).drop { $0 == " " || $0 == "\t" }
            let path = Substring(afterVerb.dropFirst("reset".count)).trimmingSpaces()
            if path == "--all" { return .success(.bookmarkReset(path: nil)) }
            guard !path.isEmpty else { return .failure(usage) }
            return .success(.bookmarkReset(path: path))
        case "clear": return none(.intent(.clear))
        case "podcast":
            // The name as the config writes it (words joined by one space).
            let name = rest.joined(separator: " ")
            guard !name.isEmpty else { return .failure(ControlError("usage: podcast NAME")) }
            return .success(.intent(.playPodcast(name: name)))
        case "save": return none(.save)
        case "diag": return none(.diag)
        case "events":
            if rest == ["--json"] { return .success(.events(json: true)) }
            return none(.events(json: false))
        case "version": return none(.version)
        case "reload": return none(.reload)
        case "update":
            // `update [FOLDER]`: the rest of the line is the folder, spaces and all.
            let afterVerb = line.drop { $0 == " " || $0 == "\t" }.dropFirst(verb.count)
            let path = Substring(afterVerb).trimmingSpaces()
            return .success(.libraryUpdate(path: path.isEmpty ? nil : path))
        case "restart": return none(.restart)
        case "system":
            guard rest == ["--json"] else { return .failure(ControlError("usage: system --json")) }
            return .success(.systemJSON)
        case "log":
            guard rest.count <= 1, let n = rest.isEmpty ? 20 : Int(rest[0]), (1...1000).contains(n) else {
                return .failure(ControlError("usage: log [N] (1-1000)"))
            }
            return .success(.log(count: n))
        case "help", "?": return none(.help)
        case "play":
            // `play N`: the queue entry N (1-based, as `queue` numbers them).
            if rest.isEmpty { return .success(.intent(.play)) }
            guard rest.count == 1, let n = position(rest[0]) else { return .failure(ControlError("usage: play [N] (a queue position from 1)")) }
            return .success(.intent(.playEntry(at: n - 1)))
        case "delete":
            guard rest.count == 1, let n = position(rest[0]) else { return .failure(ControlError("usage: delete N (a queue position from 1)")) }
            return .success(.intent(.remove(at: n - 1)))
        case "move":
            guard rest.count == 2, let from = position(rest[0]), let to = position(rest[1]) else {
                return .failure(ControlError("usage: move FROM TO (queue positions from 1)"))
            }
            return .success(.intent(.move(from: from - 1, to: to - 1)))
        case "pause": return none(.intent(.pause))
        case "toggle": return none(.intent(.togglePlayPause))
        case "stop": return none(.intent(.stop))
        case "next", "prev", "previous":
            // `--file`: by track whatever its chapters (plain next/prev move by chapter in a file with chapters).
            let forward = verb == "next"
            if rest == ["--file"] { return .success(.intent(forward ? .nextFile : .previousFile)) }
            guard rest.isEmpty else { return .failure(ControlError("usage: \(verb) [--file]")) }
            return .success(.intent(forward ? .next : .previous))
        case "seek":
            guard rest.count == 1, let t = TimeFormat.parse(rest[0]) else {
                return .failure(ControlError("usage: seek [+|-]m:ss"))
            }
            return .success(.intent(t.relative ? .seekBy(t.seconds) : .seek(to: t.seconds)))
        case "vol", "volume":
            guard rest.count == 1, let n = Int(rest[0].hasPrefix("+") ? String(rest[0].dropFirst()) : rest[0]),
                  (-100...100).contains(n) else {  // not abs(n): abs(Int.min) traps
                return .failure(ControlError("usage: vol [+|-]N (0-100)"))
            }
            let relative = rest[0].hasPrefix("+") || rest[0].hasPrefix("-")
            return .success(.intent(relative ? .changeVolume(by: n) : .setVolume(n)))
        case "shuffle":
            switch rest.first?.lowercased() {
            case "on"? where rest.count == 1: return .success(.intent(.setShuffle(true, seed: seed)))
            case "off"? where rest.count == 1: return .success(.intent(.setShuffle(false, seed: seed)))
            default: return .failure(ControlError("usage: shuffle on|off"))
            }
        case "sleep":
            return parseSleep(rest).map { .intent(.sleepTimer($0)) }
        case "speed":
            // `speed` alone: the status line, which names the speed when it is not 1.
            if rest.isEmpty { return .success(.status) }
            if rest.count == 1, rest[0].lowercased() == "default" { return .success(.intent(.setSpeed(nil))) }
            guard rest.count == 1, let speed = Speed.parse(rest[0].lowercased()) else { return .failure(ControlError(speedUsage)) }
            return .success(.intent(.setSpeed(speed)))
        case "repeat":
            guard rest.count == 1, let mode = RepeatMode(rawValue: rest[0].lowercased()) else {
                return .failure(ControlError("usage: repeat off|one|all"))
            }
            return .success(.intent(.setRepeat(mode)))
        case "interrupt", "yield":
            let reason = rest.dropFirst().joined(separator: " ")
            switch (verb, rest.first?.lowercased()) {
            case ("interrupt", "begin"?): return .success(.interruptBegin(reason: reason.isEmpty ? "interrupt" : reason))
            case ("interrupt", "end"?) where rest.count == 1: return .success(.interruptEnd)
            case ("yield", "begin"?): return .success(.yieldBegin(reason: reason.isEmpty ? "yield" : reason))
            case ("yield", "end"?) where rest.count == 1: return .success(.yieldEnd)
            default: return .failure(ControlError("usage: \(verb) begin [reason] | \(verb) end"))
            }
        case "bluetooth":
            let usage = ControlError("usage: bluetooth pair|trust|forget|disconnect ADDRESS (such as AA:BB:CC:DD:EE:FF) | bluetooth pair ADDRESS pin DIGITS")
            guard rest.count == 2 || rest.count == 4, let action = BluetoothAction(rawValue: rest[0].lowercased()),
                  let address = BluetoothAddress.normalised(rest[1]) else { return .failure(usage) }
            guard rest.count == 4 else { return .success(.bluetooth(action, address: address)) }
            guard action == .pair, rest[2].lowercased() == "pin" else { return .failure(usage) }
            guard let pin = BluetoothPIN.checked(rest[3]) else {
                return .failure(ControlError("bluetooth pair: a PIN is 1 to \(BluetoothPIN.maxDigits) digits 0-9 (such as 0000; a passkey: 6 at most)"))
            }
            return .success(.bluetooth(.pair, address: address, pin: pin))
        case "source":
            let usage = ControlError("usage: source begin NAME [SENDER] | source end NAME (NAME: airplay, bluetooth; a-z, 0-9, -)")
            guard rest.count >= 2, OtherSource.isValidName(rest[1].lowercased()) else { return .failure(usage) }
            let name = rest[1].lowercased()
            switch rest[0].lowercased() {
            case "begin": return .success(.sourceBegin(name: name, sender: rest.dropFirst(2).joined(separator: " ")))
            case "end" where rest.count == 2: return .success(.sourceEnd(name: name))
            default: return .failure(usage)
            }
        default:
            return .failure(ControlError("unknown command \"\(verb.prefix(40))\" (try: help)"))
        }
    }
}

extension ControlCommand {
    /// A queue position as typed: digits only, 1 or more (a bound no queue reaches keeps `- 1` safe).
    static func position(_ word: String) -> Int? {
        guard !word.isEmpty, word.utf8.count <= 9, word.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(word), n >= 1 else { return nil }
        return n
    }

    /// `card assign [ID] PATH|URL|COMMAND`: a first word of letters and digits that is not a
    /// command is the id; the rest of the line (spaces and all) is the value. `card assign --next
    /// VALUE` (the value checked now, so a page hears what is wrong before anyone swipes),
    /// `card assign --cancel`, `card delete ID`.
    static func parseCard(_ line: String) -> Result<ControlCommand, ControlError> {
        let usage = ControlError("usage: card assign [ID|--next] PATH|URL|COMMAND | card assign --cancel | card delete ID")
        var rest = Substring(line).trimmingSpaces()[...]
        func word() -> Substring {
            let head = rest.prefix { $0 != " " && $0 != "\t" }
            rest = Substring(rest.dropFirst(head.count).trimmingSpaces())
            return head
        }
        guard word().lowercased() == "card" else { return .failure(usage) }
        switch word().lowercased() {
        case "assign": break
        case "delete":
            let id = word()
            guard rest.isEmpty, let normal = Cards.normalisedID(String(id)), id.unicodeScalars.allSatisfy(isIDScalar) else {
                return .failure(ControlError("usage: card delete ID (1-\(Cards.maxIDLength) letters and digits)"))
            }
            return .success(.cardDelete(id: normal))
        default: return .failure(usage)
        }
        guard !rest.isEmpty else { return .failure(usage) }
        let first = rest.prefix { $0 != " " && $0 != "\t" }
        let after = rest.dropFirst(first.count).trimmingSpaces()
        switch first.lowercased() {
        case "--cancel":
            return after.isEmpty ? .success(.cardAssignNext(value: nil)) : .failure(usage)
        case "--next":
            guard !after.isEmpty else { return .failure(usage) }
            if case .failure(let e) = Cards.parseAction(after) { return .failure(ControlError(e.message)) }
            return .success(.cardAssignNext(value: after))
        default: break
        }
        if !after.isEmpty, Cards.commands[first.lowercased()] == nil, first.unicodeScalars.allSatisfy(isIDScalar) {
            return .success(.cardAssign(id: String(first), value: after))
        }
        return .success(.cardAssign(id: nil, value: String(rest)))
    }

    private static func isIDScalar(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c) || ("A"..."Z").contains(c) || ("a"..."z").contains(c)
    }
}

/// Why a control line was refused, phrased for the person who typed it.
public struct ControlError: Error, Equatable, Sendable {
    /// The message.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
}

extension ControlCommand {
    /// What `speed` with words it does not know answers.
    public static let speedUsage = "usage: speed 0.75-2 (e.g. speed 1.25) | speed default | speed"

    /// What `sleep` with words it does not know answers.
    public static let sleepUsage = "usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off"

    /// `sleep`'s words: minutes (fractions allowed), an end, or `off` (nil).
    static func parseSleep(_ rest: [String]) -> Result<SleepRequest?, ControlError> {
        guard rest.count == 1 else { return .failure(ControlError(sleepUsage)) }
        let word = rest[0].lowercased()
        if word == "off" { return .success(nil) }
        if let end = SleepEnd(rawValue: word) { return .success(.end(end)) }
        guard let minutes = Double(word), minutes >= 1, minutes <= 1440 else { return .failure(ControlError(sleepUsage)) }
        return .success(.after(minutes * 60))
    }
}

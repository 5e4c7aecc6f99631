// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// The subcommands: each parses its arguments into a setup and hands it to `Player`.
enum Subcommands {
    static let logLevels = ["error", "warning", "info", "debug"]

    static func play(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--device", "--audio", "--state", "--volume", "--repeat", "--log-level", "--socket"],
                              flags: ["--shuffle"], command: "play")
        if a.wantsHelp { return help(Help.play) }
        guard !a.positional.isEmpty else { throw UsageError(message: "play needs at least one file, folder or playlist") }
        var setup = try common(a)
        setup.statePath = a.options["--state"].map(absolutePath)
        setup.settings.exitWhenQueueEnds = true
        let volume = try a.int("--volume", in: 0...100)
        let repeatMode = try a.choice("--repeat", ["off", "one", "all"]).flatMap(RepeatMode.init(rawValue:))
        let shuffle = a.flags.contains("--shuffle")
        let statePath = setup.statePath
        return Player.run(setup) { log in
            guard let tracks = Player.load(a.positional, log: log) else { return nil }
            var options: [Event] = []
            if let volume { options.append(.setVolume(volume)) }
            if let repeatMode { options.append(.setRepeat(repeatMode)) }
            if shuffle { options.append(.setShuffle(true, seed: UInt64(truncatingIfNeeded: time(nil)))) }
            guard let statePath else { return options + [.replaceQueue(tracks)] }
            let loaded = StateStore(path: statePath).load()
            for m in loaded.messages { log.warning(m) }
            // The saved queue is the same paths in the same order: resume its place (the options
            // given still apply); any other queue starts from its beginning.
            if let saved = loaded.snapshot, saved.tracks.map(\.path) == tracks.map(\.path) {
                log.info("resuming the saved place in \(statePath)")
                return StartUp.events(for: loaded) + [.play] + options
            }
            let unreadable: [Event] = loaded.unreadable.map { [.stateFileUnreadable($0)] } ?? []
            return unreadable + options + [.replaceQueue(tracks)]
        }
    }

    static func run(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config", "--log-level"], flags: [], command: "run")
        if a.wantsHelp { return help(Help.run) }
        guard a.positional.isEmpty else { throw UsageError(message: "run takes no paths; put them in the config's \"music\" list") }
        guard let configPath = a.options["--config"] else { throw UsageError(message: "run needs --config FILE") }
        let loaded: (config: Config, warnings: [String])
        do { loaded = try Config.load(path: configPath) } catch {
            writeAll(2, "jukebox: error: \(error)\n")
            return 1
        }
        let config = loaded.config
        var setup = PlayerSetup()
        setup.device = config.device
        setup.audio = config.audio
        setup.snapcast = config.snapcast
        setup.statePath = config.statePath
        setup.setupProblemsPath = config.setupProblemsPath
        setup.settings = config.settings
        setup.logLevel = try a.choice("--log-level", logLevels).flatMap(LogLevel.init(name:)) ?? config.logLevel
        setup.interactive = false
        setup.mixer = config.mixer.map { (config.mixerCard, $0) }
        setup.radioBufferSeconds = config.radioBufferSeconds
        setup.radioCAFile = config.radioCAFile
        setup.hardware = config.hardware
        setup.console = config.console.map { ($0, config.consoleBaud) }
        setup.socketPath = config.socketPath.map { $0.isEmpty ? nil : $0 } ?? ControlSocket.defaultPath()
        setup.mpd = config.mpd
        setup.rfid = config.rfid
        setup.battery = config.battery
        setup.batteryPin = config.batteryPin
        setup.headphones = config.headphones
        setup.bluetooth = config.bluetooth
        setup.bluetoothPhone = config.bluetoothPhone
        setup.bluetoothAdapter = config.bluetoothAdapter
        setup.airplayMetadata = config.airplayMetadata
        setup.usb = config.usbRoots.map { ($0, config.usbMountsOnly) }
        setup.mqtt = config.mqtt
        setup.configPath = configPath
        setup.musicFolders = config.music.filter(isDirectory)
        // The speaker's rules the player runs with: the start's, then each reload's while the
        // speaker stays the one the watcher was made for.
        let running = RunningRules(bluetooth: config.settings.bluetooth)
        setup.reload = { log in
            // Policy (volume limits, timings, buttons' gestures, the panel layout) applies at once;
            // what needs reopening the device or the board says so and waits for a restart.
            let fresh: (config: Config, warnings: [String])
            do { fresh = try Config.load(path: configPath) } catch {
                log.error("SIGHUP: \(error); keeping the running configuration")
                return nil
            }
            for w in fresh.warnings { log.warning(w) }
            let c = fresh.config
            let waiting = config.waitingForRestart(c)
            if !waiting.isEmpty {
                log.warning("SIGHUP: \(waiting.joined(separator: ", ")) changed; that takes effect at the next restart")
            }
            var settings = c.settings
            settings.display = config.hardware.layout
            // The speaker's watcher and device are made at start: its rules apply at once only
            // while it is the same speaker on the same device.
            if c.bluetooth != config.bluetooth { settings.bluetooth = running.bluetooth } else { running.bluetooth = settings.bluetooth }
            return ConfigReload(settings: settings, waiting: waiting)
        }
        return Player.run(setup) { log in
            for w in loaded.warnings { log.warning(w) }
            // Resume first: nothing slow (no folder scan, no tag reading) before the first sample.
            var modes: [Event] = []
            if let statePath = config.statePath {
                let result = StateStore(path: statePath).load()
                for m in result.messages { log.warning(m) }
                if let snapshot = result.snapshot, !snapshot.tracks.isEmpty {
                    // Where, to the tenth of a second: what a technician (and the HIL's power-cut
                    // check) compares with where the player was when the power went.
                    let place = snapshot.current.map { "track \($0 + 1) at \((snapshot.position * 10).rounded() / 10) s, \(snapshot.phase.rawValue)" } ?? snapshot.phase.rawValue
                    log.info("resuming \(snapshot.tracks.count) tracks from \(statePath): \(place)")
                    return StartUp.events(for: result)
                }
                // An emptied queue still keeps its volume, shuffle and repeat for the music below;
                // a file that cannot be read stays as it is while that music plays unsaved.
                modes = StartUp.events(for: result)
            }
            guard !config.music.isEmpty else {
                log.info("nothing queued: add \"music\" paths to the config")
                return modes
            }
            // Nothing there yet (a partition, a share or a stick mounted late, an empty folder
            // filled later): the core waits for music to arrive in the folders.
            guard let tracks = Player.load(config.music, log: log) else { return modes + [.musicAwaited(config.music)] }
            return modes + (config.settings.resumePlaying ? [.replaceQueue(tracks)] : [.add(tracks)])
        }
    }

    static func demo(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--device", "--audio", "--dir", "--log-level", "--socket", "--panel"], flags: [], command: "demo")
        if a.wantsHelp { return help(Help.demo) }
        guard a.positional.isEmpty else { throw UsageError(message: "demo takes no paths (try: jukebox play PATH)") }
        var setup = try common(a)
        setup.settings.exitWhenQueueEnds = true
        switch try a.choice("--panel", ["16x2", "20x4", "oled"]) {
        case "16x2"?: setup.terminalPanel = .lcd16x2
        case "20x4"?: setup.terminalPanel = .lcd20x4
        case "oled"?: setup.terminalPanel = .oled128x64
        default: break
        }
        setup.settings.display = setup.terminalPanel
        // No fixed name in /tmp another user could have planted: a new private folder, removed
        // at the end, unless the user names one.
        let named = a.options["--dir"].map(absolutePath)
        let folder: String
        do { folder = try named ?? DemoTracks.makePrivateFolder() } catch {
            writeAll(2, "jukebox: error: cannot make the demo tunes: \(error)\n")
            return 1
        }
        defer { if named == nil { DemoTracks.remove(from: folder) } }
        return Player.run(setup) { log in
            let paths: [String]
            do { paths = try DemoTracks.make(in: folder) } catch {
                log.error("cannot make the demo tunes: \(error)")
                return nil
            }
            writeAll(1, "jukebox demo: \(paths.count) tunes in \(folder)\n")
            guard let tracks = Player.load(paths, log: log) else { return nil }
            return [.replaceQueue(tracks)]
        }
    }

    private static func common(_ a: Arguments) throws(UsageError) -> PlayerSetup {
        var setup = PlayerSetup()
        if let device = a.options["--device"] {
            guard !device.isEmpty else { throw UsageError(message: "--device needs a PCM name") }
            setup.device = device
        }
        if let audio = try a.choice("--audio", ["alsa", "null"]) { setup.audio = Config.AudioKind(rawValue: audio)! }
        if let level = try a.choice("--log-level", logLevels) { setup.logLevel = LogLevel(name: level)! }
        if let socket = a.options["--socket"] { setup.socketPath = socket.isEmpty ? nil : absolutePath(socket) }
        return setup
    }

    static func ctl(_ args: [String]) throws(UsageError) -> Int32 {
        // ctl's own options come first; from the first word on, everything is the command
        // (so `jukebox ctl status --json` passes --json to the player).
        var own: [String] = []
        var rest = args[...]
        while let first = rest.first, first.hasPrefix("-") {
            own.append(first)
            rest = rest.dropFirst()
            if first == "--socket" || first == "--timeout", let value = rest.first {
                own.append(value)
                rest = rest.dropFirst()
            }
        }
        let a = try Arguments(own + (rest.isEmpty ? [] : ["--"]) + rest, options: ["--socket", "--timeout"], flags: [], command: "ctl")
        if a.wantsHelp { return help(Help.ctl) }
        guard !a.positional.isEmpty else { throw UsageError(message: "ctl needs a command (try: jukebox ctl help)") }
        let path = a.options["--socket"] ?? ControlSocket.defaultPath()
        let timeout = try a.int("--timeout", in: 1...3600).map(Double.init) ?? ControlClient.defaultTimeout(a.positional)
        let client: ControlClient, answer: String?
        do { (client, answer) = try ControlClient.connect(path: path, request: a.positional.joined(separator: " "), timeout: timeout) } catch {
            writeAll(2, "jukebox: " + unreachable(path, error) + "\n")
            return 1
        }
        guard let reply = answer else {
            // Closed is not slow: a player that hangs up (a reply it would not send, a crash) is
            // said so at once, not as a timeout that never waited.
            writeAll(2, client.isClosed
                ? "jukebox: \(path) closed the connection before the reply was complete\n"
                : "jukebox: no reply from \(path) within \(Int(timeout)) s\n")
            return 1
        }
        // Whatever answers there, nothing it sends reaches the terminal raw.
        var lines = reply.split(separator: "\n", omittingEmptySubsequences: false).map(DisplayText.inert)
        let last = lines.removeLast()
        for line in lines { writeAll(1, String(line.dropFirst(2)) + "\n") }
        if last.hasPrefix("ok") {
            let text = String(last.dropFirst(last.hasPrefix("ok ") ? 3 : 2))
            if !text.isEmpty { writeAll(1, text + "\n") }
            if a.positional == ["events"] {
                // Stream until the player closes or a line (Enter) comes on stdin; the player
                // answers that line with `ok events ended`, perhaps after a last event or two.
                let show = { (line: String) in writeAll(1, DisplayText.inert(line) + "\n") }
                if client.stream(until: 0, show) == .inputLine, client.send("") {
                    while let line = client.readLine(timeout: timeout), !line.hasPrefix("ok") { show(line) }
                    writeAll(1, "events ended\n")
                }
            }
            return 0
        }
        writeAll(2, "jukebox: \(last)\n")
        return 1
    }

    static func yield(_ args: [String]) throws(UsageError) -> Int32 {
        let split = args.firstIndex(of: "--")
        let own = Array(args[..<(split ?? args.endIndex)])
        let a = try Arguments(own, options: ["--socket", "--reason", "--timeout"], flags: [], command: "yield")
        if a.wantsHelp { return help(Help.yield) }
        let program = split.map { Array(args[($0 + 1)...]) } ?? a.positional
        guard !program.isEmpty else { throw UsageError(message: "yield needs a command: jukebox yield -- CMD ARGS...") }
        let path = a.options["--socket"] ?? ControlSocket.defaultPath()
        let timeout = Double(try a.int("--timeout", in: 1...3600) ?? 10)
        let reason = a.options["--reason"] ?? Paths.fileName(program[0])
        var client: ControlClient?
        var reply: String?
        do { (client, reply) = try ControlClient.connect(path: path, request: "yield begin \(reason)", timeout: timeout) } catch {
            writeAll(2, "jukebox: " + unreachable(path, error) + "; running the command anyway\n")
        }
        if client != nil {
            if reply != "ok released" {
                writeAll(2, "jukebox: the player did not release the device (\(reply ?? "no reply")); running the command anyway\n")
            }
        }
        let status = runProgram(program)
        // Ending is explicit for a clean reply; closing the connection would end it too.
        _ = client?.request("yield end", timeout: timeout)
        return status
    }

    /// Why there is no player to talk to at `path`.
    private static func unreachable(_ path: String, _ error: SystemError) -> String {
        error.call == SocketFolder.refusing ? "\(error)" : "no jukebox answers at \(path) (\(error))"
    }

    /// Prints a command's help; exit code 0.
    static func help(_ text: String) -> Int32 {
        writeAll(1, text + "\n")
        return 0
    }
}

/// What a reload keeps as it runs when the file's value waits for the next start.
private final class RunningRules {
    var bluetooth: BluetoothSettings?
    init(bluetooth: BluetoothSettings?) { self.bluetooth = bluetooth }
}

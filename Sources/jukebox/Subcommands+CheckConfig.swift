// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxService
import JukeboxSystem

extension Subcommands {
    /// `jukebox check-config [FILE]`: reads FILE (default `Config.installedPath`) with the reader
    /// and checks `jukebox run` uses (`Config.load`, all of run's checks of the config) and says
    /// what it sets, so a builder checks an edited config before restarting the service and the
    /// image's boot-time setup checks the boot partition's `jukebox.json`. Opens no sound device,
    /// socket or board device and starts nothing. Exit 0 and a summary on stdout (warnings on
    /// stderr) when `run` would accept the config; exit 1 and one line `jukebox: FILE: reason` on
    /// stderr when it would not. Everything echoed from the file or its name is made inert.
    static func checkConfig(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: [], flags: [], command: "check-config")
        if a.wantsHelp { return help(Help.checkConfig) }
        guard a.positional.count <= 1 else { throw UsageError(message: "check-config takes one config file (default: \(Config.installedPath))") }
        let path = a.positional.first ?? Config.installedPath
        guard !path.isEmpty else { throw UsageError(message: "check-config needs a file name, not \"\"") }
        let loaded: (config: Config, warnings: [String])
        do { loaded = try Config.load(path: path) } catch {
            // `run` says "jukebox: error: " + the same problem; the file named once, first.
            let text = error.description
            writeAll(2, DisplayText.inert("jukebox: " + (text.hasPrefix(path + ": ") ? text : path + ": " + text)) + "\n")
            return 1
        }
        for w in loaded.warnings { writeAll(2, DisplayText.inert("jukebox: warning: " + w) + "\n") }
        for line in ConfigSummary.lines(loaded.config, path: path) { writeAll(1, DisplayText.inert(line) + "\n") }
        return 0
    }
}

/// What a config sets, in a few lines for people (`check-config`): from the parsed `Config`
/// only, nothing looked up or opened. The caller makes the lines inert.
enum ConfigSummary {
    /// At most this many `music` entries are listed; the rest are counted.
    static let musicShown = 5
    /// A value echoed from the file is cut to this many bytes.
    static let valueBytes = 200

    static func lines(_ c: Config, path: String) -> [String] {
        let head: [String] = ["\(shown(path)): good"]
        let body: [String] = [
            "  sound:  " + sound(c),
            "  music:  " + music(c.music),
            "  state:  " + (c.statePath.map(shown) ?? "none kept (\"state\": \"\")"),
            "  faces:  " + faces(c),
            "  board:  " + board(c.hardware),
            "  log:    \(c.logLevel)",
        ]
        return head + body
    }

    private static func shown(_ value: String) -> String { DisplayText.inert(value, maxBytes: valueBytes) }

    private static func sound(_ c: Config) -> String {
        switch c.audio {
        case .null: return "null output (silent, in real time)"
        case .snapcast:
            let s = c.snapcast ?? SnapcastSettings()
            return "Snapcast pipe \(shown(s.pipe)) (\(s.sampleFormat))"
        case .alsa:
            let mixer = c.mixer.map { "mixer \"\(shown($0))\" on card \(shown(c.mixerCard))" } ?? "software volume"
            var text = "ALSA device \"\(shown(c.device))\", \(mixer)"
            if let h = c.headphones?.device { text += "; headphones \"\(shown(h))\"" }
            if let b = c.bluetooth?.device { text += "; Bluetooth \"\(shown(b))\"" }
            if c.bluetoothPhone { text += "; a phone may play through the box (Bluetooth)" }
            return text
        }
    }

    private static func music(_ paths: [String]) -> String {
        guard !paths.isEmpty else { return "none (a new player queues nothing: add \"music\" paths)" }
        let listed = paths.prefix(musicShown).map(shown).joined(separator: ", ")
        return listed + (paths.count > musicShown ? " and \(paths.count - musicShown) more" : "")
    }

    private static func faces(_ c: Config) -> String {
        var on: [String] = []
        switch c.socketPath {
        case nil: on.append("control socket (the default place)")
        case ""?: break
        case let p?: on.append("control socket \(shown(p))")
        }
        if let mpd = c.mpd { on.append("MPD on " + mpd.binds.map { MPDSettings.isPath($0) ? shown($0) : "\(shown($0)):\(mpd.port)" }.joined(separator: ", ")) }
        if let m = c.mqtt { on.append("MQTT to \(shown(m.host)):\(m.port ?? (m.tls == nil ? 1883 : 8883))") }
        if let tty = c.console { on.append("serial console \(shown(tty))") }
        if let r = c.rfid { on.append("card reader (\(r.reader.rawValue))") }
        if c.usbRoots != nil { on.append("USB sticks") }
        return on.isEmpty ? "none (no control socket: only buttons and cards)" : on.joined(separator: ", ")
    }

    private static func board(_ h: BoardConfig) -> String {
        var parts: [String] = []
        if let b = h.board { parts.append("profile \(shown(b))") }
        let buttons = h.buttons?.count ?? 0
        if buttons > 0 { parts.append("\(buttons) button" + (buttons == 1 ? "" : "s")) }
        if h.encoder != nil { parts.append("rotary encoder") }
        if let input = h.input, !input.isEmpty { parts.append("media keys") }
        if let d = h.display { parts.append("display \(shown(d.type))") }
        return parts.isEmpty ? "no buttons or display" : parts.joined(separator: ", ")
    }
}

extension Help {
    static let checkConfig = """
    Usage: jukebox check-config [FILE]

    Checks a config file the way 'jukebox run --config FILE' reads it (the same reader and the
    same checks), without playing: no sound device, socket or board device is opened. FILE
    defaults to \(Config.installedPath), the installed service's. Prints what the config sets
    (sound, music, state file, faces, board) and exits 0 when run would start with it; prints
    "jukebox: FILE: reason" on stderr and exits 1 when it would not (not JSON, a wrong value,
    not a regular file, bigger than 1 MiB). Warnings (unknown keys) go to stderr and do not fail.
    Check an edited config before 'systemctl restart jukebox' (or a SIGHUP).
    """
}

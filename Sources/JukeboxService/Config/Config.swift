// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore
import Glibc
import JukeboxSystem

/// The daemon's configuration, read from a JSON file. Every key is optional; docs/CONFIGURATION.md lists
/// each with its default. Unknown keys are reported (a typo should not pass silently) but do not
/// stop the player.
public struct Config: Equatable, Sendable {
    /// ALSA PCM name (`default`, `hw:CARD=DAC`, `plughw:1,0`, a PCM from asoundrc, ...).
    public var device = "default"
    /// Output kind: `alsa`, `null` (discards audio but keeps real time) or `snapcast`.
    public var audio: AudioKind = .alsa
    /// The Snapcast pipe stream, with `audio == .snapcast` (config `"output"`); nil otherwise.
    public var snapcast: SnapcastSettings?
    /// Path of the state file; nil keeps no state.
    public var statePath: String? = "/var/lib/jukebox/state.json"
    /// The appliance image's boot-time problems file (`jukebox-setup` writes it; `SetupProblemsFile`);
    /// nil: none is read (config `"setupProblems": ""`). Not there: no problems.
    public var setupProblemsPath: String? = "/run/jukebox-setup/problems"
    /// Files, folders and playlists to queue when the state file holds no queue.
    public var music: [String] = []
    /// Least severe log level written: `error`, `warning`, `info` or `debug`.
    public var logLevel: LogLevel = .info
    /// Control socket path; nil: the default (`ControlSocket.defaultPath()`); "" turns it off.
    public var socketPath: String?
    /// ALSA mixer control to set the volume with ("PCM", "Master", "Digital"...); nil: software gain.
    public var mixer: String?
    /// Card whose mixer holds `mixer`: a name (`DAC`), a number, or `default`.
    public var mixerCard = "default"
    /// The serial console's TTY (`/dev/ttyAMA0`, `/dev/ttyS0`, `/dev/ttyGS0`); nil: none.
    public var console: String?
    /// The serial console's speed (8N1).
    public var consoleBaud = 115200
    /// The MPD listener; nil (the default) keeps it off.
    public var mpd: MPDSettings?
    /// The card reader and cards map; nil: none.
    public var rfid: RFIDSettings?
    /// The battery's chip (`battery`); nil: no battery monitor.
    public var battery: BatteryMonitorSettings?
    /// The low-battery pin (`battery.lowPin`); nil: none.
    public var batteryPin: BatteryPinSettings?
    /// The headphone jack to watch (`headphones`); nil: none.
    public var headphones: HeadphoneJackSettings?
    /// The Bluetooth speaker to play to when it is connected (`bluetooth`); nil: none.
    public var bluetooth: BluetoothSpeakerSettings?
    /// Whether a phone playing through the box over Bluetooth is watched for (`bluetooth.phone`):
    /// it is then the source `bluetooth` (docs/SOURCES.md).
    public var bluetoothPhone = false
    /// The address of the box's Bluetooth adapter `bluetooth pair` uses (`bluetooth.adapter`);
    /// nil: BlueZ's default one (docs/BLUETOOTH.md).
    public var bluetoothAdapter: String?
    /// shairport-sync's metadata pipe (`airplayMetadata`), made and read by jukebox for the
    /// AirPlay sender's name; nil (the default, or "") reads none.
    public var airplayMetadata: String?
    /// The USB sticks' mount roots (`usb.roots`); nil: no `usb` key, sticks are not watched.
    public var usbRoots: [String]?
    /// Whether only mount points under the roots are sticks (`usb.mountsOnly`, default true;
    /// false: every folder there is one, for tests and folders copied in by hand).
    public var usbMountsOnly = true
    /// The MQTT bridge; nil (the default) keeps it off.
    public var mqtt: MQTTSettings?
    /// Buttons, encoder, input devices and display (with the board profile merged in).
    public var hardware = BoardConfig()
    /// Seconds of a stream buffered before it plays (the config's `radio.bufferSeconds`).
    public var radioBufferSeconds = 2.0
    /// Whether the installed service must reach the internet for streams: the config's
    /// `radio.network`, or true by itself when `music` names a URL or `podcasts` a feed. Read by `jukebox mpd-tcp
    /// --radio` for the service's network drop-in (board/mpd-network.sh); the player itself
    /// tries any URL it is given either way.
    public var radioNetwork: Bool {
        radioNetworkSwitch || music.contains(where: Library.isStreamURL) || !settings.podcasts.feeds.isEmpty
    }
    /// The config's `radio.network` itself.
    public var radioNetworkSwitch = false
    /// A PEM bundle trusted for HTTPS streams besides the system's certificates (`radio.caFile`);
    /// nil when not given or not readable (a warning says so).
    public var radioCAFile: String?
    /// The core's settings: the core's defaults, under the file's policy keys (`resume`,
    /// `saveInterval`, volume limits, timings, `chime`...) and the hardware's policy parts
    /// (`BoardConfig.apply`: debounce, encoder, power command, panel layout).
    public var settings = Settings()

    /// Output kinds.
    public enum AudioKind: String, Sendable, Equatable {
        /// Through libasound to `device`.
        case alsa
        /// Discard, paced in real time (for machines without a sound card).
        case null
        /// Into a snapserver pipe stream (`Config.snapcast`).
        case snapcast
    }

    /// The defaults.
    public init() {}

    /// A configuration problem, phrased as what to fix.
    public struct Problem: Error, Equatable, CustomStringConvertible, Sendable {
        /// The message.
        public var description: String
    }

    /// Folders searched for board profiles: beside the config, the install locations (install.sh's
    /// /usr/local, the .deb's /usr), and the repository's `board/profiles` (for running from a checkout).
    public static func profileFolders(configPath: String) -> [String] {
        var folders = [Paths.directory(absolutePath(configPath)) + "/profiles", "/usr/local/share/jukebox/profiles",
                       "/usr/share/jukebox/profiles"]
        // A binary built in a checkout lives at .build/<triple>/<configuration>/jukebox.
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 {
            let exe = FileSystemPath.string(buffer[0..<n].map { UInt8(bitPattern: $0) })
            folders.append(Paths.resolve("../../../board/profiles", against: Paths.directory(exe)))
        }
        return folders
    }

    /// The most bytes a configuration file may have: a bigger one is refused, not cut.
    public static let maxFileBytes = 1 << 20

    /// Where the installed service reads its configuration (systemd/jukebox.service, install.sh,
    /// the package): what `jukebox check-config` checks when given no file.
    public static let installedPath = "/etc/jukebox/config.json"

    /// Reads and validates a configuration file, with its board profile merged in; unknown keys
    /// come back as warnings. The one reader and check of every config: `jukebox run` (and its
    /// SIGHUP), `check-config`, `mpd-tcp`. Only a regular file is read (a symbolic link is
    /// followed; a FIFO, a device or a folder is refused without blocking), at most
    /// `maxFileBytes`. Every problem it reads itself begins with `path` and ": ".
    public static func load(path: String) throws(Problem) -> (config: Config, warnings: [String]) {
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: maxFileBytes) } catch {
            throw Problem(description: "\(path): cannot read: \(readProblem(error, path: path))")
        }
        return try load(bytes, path: path)
    }

    /// Why `readFile` could not read the config, in words: errno's text or our own reason, and
    /// for a file too big, its size.
    static func readProblem(_ error: SystemError, path: String) -> String {
        guard error.errno == EFBIG, error.reason == nil else { return error.reason ?? errnoText(error.errno) }
        var st = stat()
        let size = stat(cPath(path), &st) == 0 && st.st_size > maxFileBytes ? "\(st.st_size) bytes, " : ""
        return "it is \(size)more than the \(maxFileBytes) bytes a config may have"
    }

    /// `load(path:)` on the file's bytes as read (or as they would be: `ConfigEdit`).
    public static func load(_ bytes: [UInt8], path: String) throws(Problem) -> (config: Config, warnings: [String]) {
        var (config, warnings) = try parse(bytes, source: path)
        if let board = config.hardware.board, !board.isEmpty {
            // "board" names a profile; the config's own hardware keys override it.
            let profile = try BoardConfig.profile(board, folders: profileFolders(configPath: path))
            var own = config.hardware
            own.board = profile.board ?? board
            config.hardware = own.over(profile)
            // The merged layer holds the config's own values, so this only adds the profile's.
            config.hardware.apply(to: &config.settings)
        }
        try config.hardware.validate(source: path)
        return (config, warnings)
    }

    // The decoder says only "not valid JSON", without a key, for a number its type cannot hold
    // (80.5 or 1e300 for a whole number, 1e999 for any): the key and the value's problem, found
    // by `JSONNumbers`, with what the key takes where it is known.
    private static func numberProblem(_ bytes: [UInt8]) -> String? {
        let generic = { (candidate: [UInt8]) -> Bool in
            do { _ = try JSONDecoder().decode(ConfigFile.self, from: Data(candidate)); return false } catch {
                guard case .dataCorrupted(let c)? = error as? DecodingError else { return false }
                return c.codingPath.isEmpty
            }
        }
        guard let bad = JSONNumbers.culprit(in: bytes, fails: generic) else { return nil }
        let keys = bad.path.split(separator: ".").map(String.init)
        var takes: String?
        switch keys.count {
        case 1: takes = RawConfig.expectation(keys[0])
        case 2 where keys[0] == "mpd": takes = RawMPD.expectation(keys[1])
        case 2 where keys[0] == "rfid": takes = RawRFID.expectation(keys[1])
        case 2 where keys[0] == "output": takes = RawOutput.expectation(keys[1])
        default: break
        }
        if takes == "unexpected value" { takes = nil }
        return "\(bad.path): \(bad.text) \(bad.problem)" + (takes.map { " (it \($0))" } ?? "")
    }

    /// Parses configuration JSON; `source` names it in messages.
    public static func parse(_ bytes: [UInt8], source: String) throws(Problem) -> (config: Config, warnings: [String]) {
        let file: ConfigFile
        if let problem = JSONText.problem(bytes) { throw Problem(description: "\(source): not valid JSON (\(problem))") }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw Problem(description: "\(source): the config file is empty (write {} for every default)")
        }
        do {
            file = try JSONDecoder().decode(ConfigFile.self, from: Data(bytes))
        } catch let e as DecodingError {
            if case .typeMismatch(_, let c) = e {
                guard let key = c.codingPath.first?.stringValue else {
                    throw Problem(description: "\(source): must be a JSON object, like {\"device\": \"default\"}")
                }
                if key == "rfid", c.codingPath.count > 1 {
                    let inner = c.codingPath[1].stringValue
                    throw Problem(description: "\(source): rfid.\(inner): \(RawRFID.expectation(inner))")
                }
                if key == "output", c.codingPath.count > 1 {
                    let inner = c.codingPath[1].stringValue
                    throw Problem(description: "\(source): output.\(inner): \(RawOutput.expectation(inner))")
                }
                if key == "mpd", c.codingPath.count > 1 {
                    let inner = c.codingPath[1].stringValue
                    throw Problem(description: "\(source): mpd.\(inner): \(RawMPD.expectation(inner))")
                }
                throw Problem(description: "\(source): \(key): \(RawConfig.expectation(key))")
            }
            if case .dataCorrupted(let c) = e, c.codingPath.isEmpty, let bad = numberProblem(bytes) {
                throw Problem(description: "\(source): \(bad)")
            }
            throw Problem(description: "\(source): not valid JSON (\(StateStore.describe(e)))")
        } catch {
            throw Problem(description: "\(source): not valid JSON")
        }
        let raw = file.raw
        var c = Config()
        func check(_ ok: Bool, _ key: String) throws(Problem) {
            if !ok { throw Problem(description: "\(source): \(key): \(RawConfig.expectation(key))") }
        }
        if let v = raw.device { try check(!v.isEmpty, "device"); c.device = v }
        if let v = raw.audio {
            guard let kind = AudioKind(rawValue: v), kind != .snapcast else { try check(false, "audio"); return (c, []) }
            c.audio = kind
        }
        var sectionWarnings: [String] = []
        if let v = raw.output {
            // One place says where the sound goes: "output" is the newer spelling of "audio".
            try check(raw.audio == nil, "output")
            switch v.settings() {
            case .success(let (kind, snapcast)): (c.audio, c.snapcast) = (kind, snapcast)
            case .failure(let e): throw Problem(description: "\(source): output.\(e.key): \(RawOutput.expectation(e.key))")
            }
            sectionWarnings += unknownKeyWarnings(source, section: "output", v.unknownKeys)
        }
        if let v = raw.state { c.statePath = v.isEmpty ? nil : v }
        if let v = raw.setupProblems { c.setupProblemsPath = v.isEmpty ? nil : v }
        if let v = raw.airplayMetadata {
            try check(v.isEmpty || (v.hasPrefix("/") && v.utf8.count < 4096), "airplayMetadata")
            c.airplayMetadata = v.isEmpty ? nil : v
        }
        if let v = raw.music { c.music = v }
        if let v = raw.resume { try check(v == "playing" || v == "paused", "resume"); c.settings.resumePlaying = v == "playing" }
        if let v = raw.saveInterval { try check(v >= 1 && v <= 300, "saveInterval"); c.settings.saveInterval = v }
        if let v = raw.volumeMin { try check((0...100).contains(v), "volumeMin"); c.settings.volumeMin = v }
        if let v = raw.volumeMax { try check((0...100).contains(v), "volumeMax"); c.settings.volumeMax = v }
        try check(c.settings.volumeMin <= c.settings.volumeMax, "volumeMin")
        if let v = raw.volumeStep { try check((1...50).contains(v), "volumeStep"); c.settings.volumeStep = v }
        if let v = raw.seekStep { try check(v > 0 && v <= 600, "seekStep"); c.settings.seekStep = v }
        if let v = raw.socket { c.socketPath = v }
        if let v = raw.releaseDelay { try check(v >= 0 && v <= 3600, "releaseDelay"); c.settings.releaseDelay = v }
        if let v = raw.resumeAfterDeviceLoss { c.settings.resumeAfterDeviceLoss = v }
        if let v = raw.bootVolume { try check((0...100).contains(v), "bootVolume"); c.settings.bootVolume = v }
        if let v = raw.mixer { c.mixer = v.isEmpty ? nil : v }
        if let v = raw.console { c.console = v.isEmpty ? nil : v }
        if let v = raw.chime { c.settings.chime = v.isEmpty ? nil : v }
        if let v = raw.warningChime { c.settings.warningChime = v.isEmpty ? nil : v }
        if let v = raw.consoleBaud { try check([9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600].contains(v), "consoleBaud"); c.consoleBaud = v }
        if let v = raw.resumeRewind { try check(v >= 0 && v <= 600, "resumeRewind"); c.settings.resumeRewind = v }
        if let v = raw.mixerCard { try check(!v.isEmpty, "mixerCard"); c.mixerCard = v }
        if let v = raw.idlePowerOff { try check(v > 0 && v <= 1440, "idlePowerOff"); c.settings.idlePowerOff = v * 60 }
        if let v = raw.bookmarks {
            guard let mode = BookmarkMode(rawValue: v) else { try check(false, "bookmarks"); return (c, []) }
            c.settings.bookmarks = mode
        }
        if let v = raw.bookmarkLimit { try check((1...10000).contains(v), "bookmarkLimit"); c.settings.bookmarkLimit = v }
        if let v = raw.audiobookFolders {
            try check(v.count <= 1000 && v.allSatisfy { $0.hasPrefix("/") && $0.utf8.count <= Bookmark.maxPathBytes }, "audiobookFolders")
            c.settings.audiobookFolders = v
        }
        if let v = raw.speeds {
            try check(v.count <= 1000 && v.allSatisfy { folder, speed in
                folder.hasPrefix("/") && folder.utf8.count <= Bookmark.maxPathBytes && Speed.range.contains(speed)
            }, "speeds")
            c.settings.speeds = v
        }
        if let v = raw.radio {
            if let b = v.bufferSeconds { try check(b >= 0.5 && b <= 30, "radio"); c.radioBufferSeconds = b }
            if let g = v.giveUpSeconds { try check(g >= 5 && g <= 86400, "radio"); c.settings.streamGiveUp = g }
            c.radioNetworkSwitch = v.network ?? false
            if let path = v.caFile {
                try check(path.hasPrefix("/") && path.utf8.count <= 4096, "radio")
                // Not fatal: local files and other stations still play; a station that needs this
                // CA then fails with the certificate reason, which the warning explains.
                if let problem = Self.caFileProblem(path) {
                    sectionWarnings.append("\(source): radio.caFile: \(problem); HTTPS streams trust the system's certificates only")
                } else {
                    c.radioCAFile = path
                }
            }
            sectionWarnings += unknownKeyWarnings(source, section: "radio", v.unknownKeys)
        }
        if let v = raw.podcasts {
            guard let podcasts = v.settings() else { throw Problem(description: "\(source): podcasts: " + RawPodcasts.expectation) }
            c.settings.podcasts = podcasts
            sectionWarnings += unknownKeyWarnings(source, section: "podcasts", v.unknownKeys)
        }
        if let v = raw.sources {
            guard let sources = Self.sourceSettings(v) else { try check(false, "sources"); return (c, []) }
            c.settings.sources = sources
        }
        if let v = raw.sleep {
            switch v.settings() {
            case .success(let sleep): c.settings.sleep = sleep
            case .failure: try check(false, "sleep")
            }
            sectionWarnings += unknownKeyWarnings(source, section: "sleep", v.unknownKeys)
        }
        if let v = raw.loudness {
            guard let loudness = v.settings() else { try check(false, "loudness"); return (c, []) }
            c.settings.loudness = loudness
            sectionWarnings += unknownKeyWarnings(source, section: "loudness", v.unknownKeys)
        }
        if let v = raw.usb {
            let roots = v.roots ?? ["/media/jukebox"]
            try check(!roots.isEmpty && roots.count <= 16 && roots.allSatisfy { $0.hasPrefix("/") && $0.utf8.count <= Bookmark.maxPathBytes }, "usb")
            c.usbRoots = roots
            c.settings.usbAutoplay = v.autoplay ?? false
            c.usbMountsOnly = v.mountsOnly ?? true
            sectionWarnings += unknownKeyWarnings(source, section: "usb", v.unknownKeys)
        }
        if let v = raw.battery {
            guard let (monitor, pin, rules) = v.settings() else { throw Problem(description: "\(source): battery: " + RawBattery.expectation) }
            c.battery = monitor
            c.batteryPin = pin
            c.settings.battery = rules
            sectionWarnings += unknownKeyWarnings(source, section: "battery", v.unknownKeys)
        }
        if let v = raw.headphones {
            guard let (jack, rules) = v.settings(volumeMin: c.settings.volumeMin) else {
                throw Problem(description: "\(source): headphones: " + RawHeadphones.expectation)
            }
            c.headphones = jack
            c.settings.headphones = rules
            sectionWarnings += unknownKeyWarnings(source, section: "headphones", v.unknownKeys)
        }
        if let v = raw.bluetooth {
            switch v.parsed(volumeMin: c.settings.volumeMin) {
            case .success(let parsed):
                c.bluetooth = parsed.speaker
                c.settings.bluetooth = parsed.rules
                c.bluetoothPhone = parsed.phone
                c.bluetoothAdapter = parsed.adapter
            case .failure(let reason):
                throw Problem(description: "\(source): bluetooth: " + reason.text)
            }
            sectionWarnings += unknownKeyWarnings(source, section: "bluetooth", v.unknownKeys)
        }
        if let v = raw.parental {
            guard let rules = v.settings() else { throw Problem(description: "\(source): parental: " + RawParental.expectation) }
            c.settings.parental = rules
            sectionWarnings += unknownKeyWarnings(source, section: "parental", v.unknownKeys)
        }
        if let v = raw.mpd {
            switch v.settings() {
            case .success(let settings): c.mpd = settings
            case .failure(let e): throw Problem(description: "\(source): mpd.\(e.key): \(RawMPD.expectation(e.key))")
            }
            sectionWarnings += unknownKeyWarnings(source, section: "mpd", v.unknownKeys)
        }
        if let v = raw.rfid {
            switch v.settings(configPath: source) {
            case .success(let (rfid, policy)):
                c.rfid = rfid
                c.settings.cards = policy
            case .failure(let e): throw Problem(description: "\(source): rfid.\(e.key): \(RawRFID.expectation(e.key))")
            }
            sectionWarnings += unknownKeyWarnings(source, section: "rfid", v.unknownKeys)
        }
        if let v = raw.mqtt {
            if let problem = v.problem() { throw Problem(description: "\(source): mqtt.\(problem)") }
            c.mqtt = v
        }
        if let v = raw.logLevel {
            guard let level = LogLevel(name: v) else { try check(false, "logLevel"); return (c, []) }
            c.logLevel = level
        }
        do { c.hardware = try JSONDecoder().decode(BoardConfig.self, from: Data(bytes)) } catch {
            throw Problem(description: "\(source): buttons, encoder, gpio, display or input: \(StateStore.describe(error))")
        }
        try c.hardware.validate(source: source)
        c.hardware.apply(to: &c.settings)
        let warnings = file.unknownKeys.sorted().map { "\(source): unknown key \"\($0)\" ignored" } + sectionWarnings
        return (c, warnings)
    }

    /// The config's `sources` as settings (`other` names the policy of every source not named),
    /// nil when a name or a policy is not one the player knows.
    static func sourceSettings(_ raw: [String: String]) -> SourceSettings? {
        var settings = SourceSettings()
        guard raw.count <= 64 else { return nil }
        for (name, value) in raw {
            guard let policy = SourcePolicy(rawValue: value), OtherSource.isValidName(name) else { return nil }
            if name == "other" { settings.other = policy } else { settings.named[name] = policy }
        }
        return settings
    }

    /// Why `path` cannot serve as `radio.caFile` (unreadable, or no PEM certificate in its first
    /// MiB), or nil when it can.
    static func caFileProblem(_ path: String) -> String? {
        let bytes: [UInt8]
        do { bytes = try readFile(path, limit: 1 << 20) } catch {
            return "cannot read \(path): \(error)"
        }
        let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
        guard bytes.count >= marker.count,
              (0...(bytes.count - marker.count)).contains(where: { bytes[$0..<$0 + marker.count].elementsEqual(marker) }) else {
            return "\(path) holds no PEM certificate"
        }
        return nil
    }
}

/// The file as written: each key's value, nil when absent; `Config.parse` checks them. The
/// synthesized decoding reads the keys in this order, so of several keys of the wrong type the
/// first here is the one reported.
private struct RawConfig: Decodable {
    var device: String?
    var audio: String?
    var output: RawOutput?
    var state: String?
    var setupProblems: String?
    var music: [String]?
    var resume: String?
    var saveInterval: Double?
    var volumeMin: Int?
    var volumeMax: Int?
    var volumeStep: Int?
    var seekStep: Double?
    var logLevel: String?
    var socket: String?
    var releaseDelay: Double?
    var resumeAfterDeviceLoss: Bool?
    var bootVolume: Int?
    var mixer: String?
    var mixerCard: String?
    var resumeRewind: Double?
    var console: String?
    var consoleBaud: Int?
    var chime: String?
    var warningChime: String?
    var idlePowerOff: Double?
    var bookmarks: String?
    var bookmarkLimit: Int?
    var audiobookFolders: [String]?
    var speeds: [String: Double]?
    var mpd: RawMPD?
    var rfid: RawRFID?
    var usb: RawUSB?
    var battery: RawBattery?
    var headphones: RawHeadphones?
    var bluetooth: RawBluetooth?
    var mqtt: MQTTSettings?
    var radio: RawRadio?
    var podcasts: RawPodcasts?
    var sleep: RawSleep?
    var sources: [String: String]?
    var airplayMetadata: String?
    var loudness: RawLoudness?
    var parental: RawParental?

    /// Whether `key` is one of the keys above.
    static func reads(_ key: String) -> Bool { CodingKeys(stringValue: key) != nil }

    static func expectation(_ key: String) -> String {
        switch key {
        case "device": return "must be a non-empty ALSA PCM name such as \"default\" or \"hw:CARD=DAC\""
        case "audio": return "must be \"alsa\" or \"null\""
        case "output": return RawOutput.expectation("output") + " (and no \"audio\" key beside it)"
        case "state": return "must be a path (\"\" keeps no state)"
        case "airplayMetadata": return "must be an absolute path (\"\" reads no AirPlay metadata)"
        case "setupProblems": return "must be a path (\"\" reads no setup problems file)"
        case "music": return "must be a list of paths"
        case "resume": return "must be \"playing\" or \"paused\""
        case "saveInterval": return "must be seconds from 1 to 300"
        case "volumeMin", "volumeMax": return "must be 0 to 100, with volumeMin <= volumeMax"
        case "volumeStep": return "must be 1 to 50"
        case "seekStep": return "must be seconds above 0, at most 600"
        case "logLevel": return "must be \"error\", \"warning\", \"info\" or \"debug\""
        case "socket": return "must be a path (\"\" turns the control socket off)"
        case "releaseDelay": return "must be seconds from 0 to 3600"
        case "resumeAfterDeviceLoss": return "must be true or false"
        case "bootVolume": return "must be 0 to 100 (leave it out to keep the saved volume)"
        case "mixer": return "must be a mixer control name such as \"PCM\" or \"Master\" (\"\" for software volume)"
        case "mixerCard": return "must be a card name, number or \"default\""
        case "resumeRewind": return "must be seconds from 0 to 600"
        case "console": return "must be a TTY path such as \"/dev/ttyAMA0\" (\"\" for none)"
        case "chime", "warningChime": return "must be the path of a sound file (\"\" for none)"
        case "idlePowerOff": return "must be minutes above 0, at most 1440 (leave it out to never power off)"
        case "bookmarks": return "must be \"always\", \"audiobooks\" or \"never\""
        case "bookmarkLimit": return "must be 1 to 10000"
        case "audiobookFolders": return "must be a list of absolute folder paths"
        case "speeds": return "must be an object of absolute folder path → speed from 0.75 to 2, like {\"/srv/music/Audiobooks\": 1.25}"
        case "mpd": return RawMPD.expectation("mpd")
        case "rfid": return RawRFID.expectation("rfid")
        case "radio": return "must be {\"bufferSeconds\": 0.5 to 30, \"giveUpSeconds\": 5 to 86400, \"network\": true|false, \"caFile\": an absolute path}"
        case "battery": return RawBattery.expectation
        case "headphones": return RawHeadphones.expectation
        case "bluetooth": return RawBluetooth.expectation
        case "sleep": return RawSleep.expectation
        case "sources": return "must be an object of source name (airplay, bluetooth, other: any source not named) → \"resume\", \"stay-paused\" or \"forbidden\""
        case "podcasts": return RawPodcasts.expectation
        case "loudness": return RawLoudness.expectation
        case "parental": return RawParental.expectation
        case "usb": return "must be {\"roots\": [absolute folder paths, 1 to 16], \"autoplay\": true or false}"
        case "mqtt": return "must be an object with at least \"host\" (see docs/REMOTE.md \"MQTT\")"
        case "consoleBaud": return "must be 9600, 19200, 38400, 57600, 115200, 230400, 460800 or 921600"
        default: return "unexpected value"
        }
    }
}

/// The configuration file: its keys' values, and the keys that neither `RawConfig` nor
/// `BoardConfig` reads.
private struct ConfigFile: Decodable {
    var raw: RawConfig
    var unknownKeys: [String]

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: AnyConfigKey.self).allKeys.map(\.stringValue)
        unknownKeys = keys.filter { !RawConfig.reads($0) && !BoardConfig.keys.contains($0) }
        raw = try RawConfig(from: decoder)
    }
}

/// The config's `radio`: how much of a stream is buffered, how long a lost one is tried again,
/// whether the installed service opens its sandbox to the internet for streams, which CA bundle
/// HTTPS streams also trust.
struct RawRadio: Decodable {
    var bufferSeconds: Double?
    var giveUpSeconds: Double?
    var network: Bool?
    var caFile: String?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey { case bufferSeconds, giveUpSeconds, network, caFile }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        bufferSeconds = try c.decodeIfPresent(Double.self, forKey: .bufferSeconds)
        giveUpSeconds = try c.decodeIfPresent(Double.self, forKey: .giveUpSeconds)
        network = try c.decodeIfPresent(Bool.self, forKey: .network)
        caFile = try c.decodeIfPresent(String.self, forKey: .caFile)
    }
}

/// The config's `usb`: where sticks are mounted, and whether one inserted plays at once.
struct RawUSB: Decodable {
    var roots: [String]?
    var autoplay: Bool?
    var mountsOnly: Bool?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey { case roots, autoplay, mountsOnly }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        roots = try c.decodeIfPresent([String].self, forKey: .roots)
        autoplay = try c.decodeIfPresent(Bool.self, forKey: .autoplay)
        mountsOnly = try c.decodeIfPresent(Bool.self, forKey: .mountsOnly)
    }
}

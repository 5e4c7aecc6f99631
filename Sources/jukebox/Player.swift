// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxMQTT
import JukeboxAudio
import JukeboxCore
import JukeboxService
import Glibc
import JukeboxSystem

/// What one run of the player is wired from.
struct PlayerSetup {
    var device = "default"
    var audio: Config.AudioKind = .alsa
    /// The Snapcast pipe stream, with `audio == .snapcast`.
    var snapcast: SnapcastSettings?
    var statePath: String?
    /// The appliance image's boot-time problems file (config `setupProblems`); nil: none is read.
    var setupProblemsPath: String?
    var settings = Settings()
    var logLevel: LogLevel = .warning
    /// Use the terminal for keys and the status line when it is one.
    var interactive = true
    /// Control socket path; nil: none.
    var socketPath: String? = ControlSocket.defaultPath()
    /// Mixer control for the volume (with its card); nil: software gain.
    var mixer: (card: String, control: String)?
    /// Seconds of a stream buffered before it plays (the config's `radio.bufferSeconds`).
    var radioBufferSeconds = 2.0
    /// The CA bundle HTTPS streams also trust (the config's `radio.caFile`).
    var radioCAFile: String?
    /// Buttons, encoder, input devices, display.
    var hardware = BoardConfig()
    /// A simulated panel drawn in the terminal (`demo --panel`).
    var terminalPanel: PanelLayout?
    /// The serial console (path, baud), if any.
    var console: (path: String, baud: Int)?
    /// The MPD listener's settings; nil: none.
    var mpd: MPDSettings?
    /// The music folders (MPD's relative names are rooted there).
    var musicFolders: [String] = []
    /// The card reader and the cards map; nil: none.
    var rfid: RFIDSettings?
    /// The battery's chip; nil: none.
    var battery: BatteryMonitorSettings?
    /// The low-battery pin; nil: none.
    var batteryPin: BatteryPinSettings?
    /// The headphone jack to watch; nil: none.
    var headphones: HeadphoneJackSettings?
    var bluetooth: BluetoothSpeakerSettings?
    /// Whether a phone playing through the box is watched for (`bluetooth.phone`).
    var bluetoothPhone = false
    /// The box's adapter `bluetooth pair` uses (`bluetooth.adapter`); nil: BlueZ's default.
    var bluetoothAdapter: String?
    /// shairport-sync's metadata pipe, made and read for the AirPlay sender's name; nil: none.
    var airplayMetadata: String?
    /// The USB sticks' mount roots and whether only mount points count; nil: not watched.
    var usb: (roots: [String], mountsOnly: Bool)?
    /// The MQTT bridge's settings; nil: none (and what an earlier run announced is taken away).
    var mqtt: MQTTSettings?
    /// The config file (the MQTT bridge checks it when it holds the broker's password).
    var configPath: String?
    /// Re-reads the configuration (SIGHUP); nil for players without a config file.
    var reload: ((Log) -> ConfigReload?)?
}

/// Wires the live adapters into a runtime and runs it: the part of `main` every subcommand
/// shares.
enum Player {
    /// Runs until the core says exit; `initial` builds the first events once the log exists.
    static func run(_ setup: PlayerSetup, initial: (Log) -> [Event]?) -> Int32 {
        Runtime.blockSignals()
        // From here SIGTERM ends the process within 5 s, even while start-up is stuck in a read.
        ShutdownWatchdog.shared.start()
        let log = Log(level: setup.logLevel)
        if let path = setup.statePath {
            // Before the file is read: one player per state file, for the whole of its life.
            do { try StateStore(path: path).lock() } catch {
                switch error {
                case .held, .refused:
                    log.error("\(error)")
                    return 1
                case .failed: break
                }
                // A read-only place still plays (saves will fail and say so).
                log.warning("\(error); not protected against a second player")
            }
        }
        guard let events = initial(log) else { return 1 }
        // Headphones with a device of their own, a Bluetooth speaker: the core routes between the
        // card and them (`RoutedOutput`).
        // The speaker's watcher first: without bluealsa-cli there is no speaker to route to, and
        // the mixer stays in use.
        let speakerWatch: [EventSource] = TestPipes.drivesBluetooth ? [] : BluetoothSources.make(setup.bluetooth, phone: setup.bluetoothPhone, log: log)
        let routed = makeRoutedOutput(setup, bluetooth: TestPipes.drivesBluetooth || !speakerWatch.isEmpty)
        let output: () -> PCMOutput
        if let routed { output = { routed } } else { output = makeOutput(setup, log: log) }
        let interactive = setup.interactive && Terminal.isInteractive
        let terminal = interactive ? Terminal(log: log) : nil
        let status: StatusSink = terminal ?? LogStatus(log: log)
        let mailbox = Mailbox()
        // libasound's own lines (a missing card at every probe) go to the log: once, then counted.
        AlsaMessages.route { mailbox.postLog(.warning, $0) }
        let traceStart = setup.logLevel == .debug
        var mixer: AlsaMixer?
        if setup.mixer != nil, routed != nil {
            // A mixer control belongs to one card; the two devices share the software volume.
            log.warning("mixer: not used while the output is routed (headphones.device, bluetooth); using software volume")
        } else if let wanted = setup.mixer {
            do { mixer = try AlsaMixer(card: wanted.card, control: wanted.control) } catch {
                // The volume still works, in software; the message lists the controls there are.
                log.warning("mixer: \(error); using software volume")
            }
        }
        let engine = AudioEngine(makeOutput: output, mixer: mixer) { report in
            if let event = AudioWiring.event(for: report) { mailbox.post(event) }
            // For start-up measurements: one write(2) from the engine thread, comparable with any
            // other CLOCK_MONOTONIC reading (the benchmark's clock before it started the process).
            if case .firstSample = report, traceStart {
                writeAll(2, "jukebox: first sample handed to the output at monotonic \(monotonicNow())\n")
            }
        }
        var streams = StreamSettings()
        streams.bufferSeconds = setup.radioBufferSeconds
        streams.caFile = setup.radioCAFile
        engine.setStreamSettings(streams)
        var state = State(settings: setup.settings)
        state.now = monotonicNow()
        var control: ControlSocket?
        if let path = setup.socketPath {
            do { control = try ControlSocket(path: path) } catch {
                // Playing matters more than being remote-controlled: say so and go on.
                log.warning("no control socket: \(error)")
            }
        }
        var panel = PanelSink.make(setup.hardware.display, log: log, threaded: true)
        // `"display": {"type": "terminal"}` is the demo's simulated panel, chosen in the config.
        let terminalLayout = setup.terminalPanel ?? (setup.hardware.display?.kind == .terminal ? DisplayType.terminal.layout : nil)
        if let layout = terminalLayout {
            panel = PanelSink.simulated(layout, log: log) { lines in terminal?.setBlock(lines) }
            if terminal == nil { log.warning("--panel draws in a terminal only") }
        }
        let usbWatch: [EventSource] = setup.usb.map { [USBWatch(roots: $0.roots, mountsOnly: $0.mountsOnly)] } ?? []
        // A kernel card that goes away is waited for by the kernel's word, not by polling.
        var soundWatch: [EventSource] = []
        if setup.audio == .alsa, SoundDeviceWatch.namesKernelCard(setup.device) {
            let watch = SoundDeviceWatch()
            if watch.isWatching {
                soundWatch = [watch]
                state.deviceReturnAnnounced = true
            } else {
                log.warning("cannot watch /dev/snd: a lost sound card is polled for")
            }
        }
        // In parts, each typed: Swift 6.0.3 (Debian 13's) gives up on one long sum of optionals' maps.
        var sources: [EventSource] = BoardSources.make(setup.hardware, log: log) + BoardSources.cardReader(setup.rfid, log: log)
        sources += usbWatch + soundWatch
        sources += BoardSources.battery(setup.battery, log: log)
        sources += BoardSources.batteryPin(setup.batteryPin, gpio: setup.hardware.gpio, log: log)
        if let headphones = setup.headphones { sources.append(JackSource(headphones, log: log)) }
        sources += speakerWatch
        // Made before shairport-sync looks for it (the player starts first): its own FIFO, or none.
        if let path = setup.airplayMetadata {
            let metadata = AirPlayMetadata(path: path, log: log)
            if metadata.isReading { sources.append(metadata) }
        }
        sources += TestPipes.sources(log: log, bluetooth: setup.bluetooth)
        let runtime = Runtime(state: state, audio: engine,
                              store: setup.statePath.map(StateStore.init(path:)), status: status, log: log,
                              keyInput: interactive ? 0 : nil, mailbox: mailbox, control: control, display: panel,
                              sources: sources)
        runtime.controlSettings.version = "jukebox \(jukeboxVersion)"
        if let routed { runtime.routeOutput = { routed.route(to: AudioWiring.device(for: $0)) } }
        // The speaker's own volume (AVRCP absolute volume), set through the watcher's bluealsa-cli.
        if setup.bluetooth != nil, let watch = speakerWatch.first as? BluetoothSpeakerSource {
            runtime.bluetoothVolume = { level, take in watch.setVolume(level: level, take: take) }
        }
        runtime.controlSettings.musicFolders = setup.musicFolders
        runtime.controlSettings.bluetoothAdapter = setup.bluetoothAdapter
        runtime.setupProblemsPath = setup.setupProblemsPath
        runtime.notifier = SystemdNotifier()
        // Read only while the config has parental rules (`Runtime.feedWallClock`).
        if !TestPipes.drivesWallClock { runtime.wallClock = { WallClock.read() } }
        if let mpd = setup.mpd {
            // Like the control socket: a listener that cannot open is one line, and the player plays on.
            for problem in runtime.openMPD(mpd, musicFolders: setup.musicFolders, playlists: mpd.playlistFolder(statePath: setup.statePath)) { log.error(problem) }
            if let listening = runtime.mpdListening, !listening.isEmpty { log.info("mpd: listening on \(listening.joined(separator: ", "))") }
        }
        if let wanted = setup.console {
            do {
                let console = try SerialConsole(path: wanted.path, baud: wanted.baud)
                console.print("jukebox \(jukeboxVersion): type help")
                console.prompt()
                runtime.console = console
            } catch {
                // The player plays without its console; a technician sees why in the journal.
                log.warning("console: \(error); no serial console")
            }
        }
        if let reload = setup.reload { runtime.controlSettings.reload = { reload(log) } }
        runtime.loadTracks = { paths in LibraryLoader(readInfo: trackInfo(path:)).load(paths) }
        runtime.readPicture = { path in AudioWiring.picture(path: path) }
        // Untagged files measured off the loop, each once: the cache lives beside the state file.
        runtime.measureLoudness = AudioWiring.measureLoudness
        runtime.loudnessCachePath = setup.statePath.map { $0 + ".loudness" }
        // The MPD library is read on the tag reader, so it needs `loadTracks`; playback never waits for it.
        runtime.startMPDLibrary()
        if let rfid = setup.rfid { runtime.watchCards(path: rfid.cards) }
        // Feeds are fetched on their own thread, started at the first fetch (none configured: never).
        runtime.podcasts = PodcastWiring(mailbox: mailbox, caFile: setup.radioCAFile, downloads: setup.statePath.map { $0 + ".episodes" })
        runtime.releaseColdPages = { [log] in
            let start = monotonicNow()
            let released = ColdPages.release()
            let ms = Int(((monotonicNow() - start) * 1000).rounded())
            log.debug("released \(released.kib) KiB of cold pages in \(released.runs) runs (\(ms) ms)")
        }
        let device = switch setup.audio {
        case .null: "null (silent, paced)"
        case .snapcast: setup.snapcast.map { "snapcast pipe \($0.pipe) (\($0.sampleFormat))" } ?? "snapcast"
        case .alsa: setup.device
        }
        runtime.controlSettings.diagnostics = { [weak panel] in
            let c = engine.counters()
            var lines = ["audio device \(device): xruns \(c.xruns), suspends \(c.suspends), recoveries \(c.recoveries), "
                         + "stalls \(c.stalls), lost \(c.lost)"]
            lines.append("mixer " + (mixer.map { "\($0.device) \($0.control)" } ?? "none (software volume)"))
            if let panel {
                lines.append("display \(panel.summary)")
            } else {
                lines.append("display none")
            }
            lines.append("inputs \(sources.map { "\(type(of: $0)) (\($0.fds.count) fds)" }.joined(separator: ", "))")
            return lines
        }
        // The MQTT face is a client of the control socket (JukeboxMQTT/MQTTBridge.swift): it needs one.
        let (bridge, forgetter) = startMQTT(setup, socket: control != nil, mailbox: mailbox, log: log)
        let code = runtime.run(initial: events)
        bridge?.close()
        forgetter?.close()
        runtime.cards?.finish()
        // The card poller's thread ends within one look (it owns the SPI/I2C chip meanwhile).
        for case let poller as PolledCardSource in sources { poller.close() }
        panel?.close()
        terminal?.close()
        return code
    }

    /// Starts the MQTT bridge the config asks for; without one, a forgetter takes away what an
    /// earlier run announced (the record beside the state file says what and where). Problems are
    /// logged; the player plays on.
    static func startMQTT(_ setup: PlayerSetup, socket: Bool, mailbox: Mailbox, log: Log) -> (MQTTBridge?, MQTTForgetter?) {
        let record = setup.statePath.map { MQTTRecord(statePath: $0) }
        let say: @Sendable (LogLevel, String) -> Void = { [mailbox] level, line in mailbox.postLog(level, line) }
        guard let mqtt = setup.mqtt else {
            guard let record, !record.load().isEmpty else { return (nil, nil) }
            return (nil, MQTTForgetter(record: record, log: say))
        }
        guard let path = setup.socketPath, socket else {
            log.error("mqtt: needs the control socket (the config's \"socket\" turns it off); no MQTT")
            return (nil, nil)
        }
        var context = MQTTBridge.Context(socketPath: path)
        context.volumeRange = setup.settings.volumeMin...setup.settings.volumeMax
        var buttons = (setup.hardware.buttons ?? [:]).keys.compactMap(Button.init(rawValue:))
        if setup.hardware.encoder?.push != nil { buttons.append(.encoderPush) }
        context.buttons = buttons
        context.bindings = setup.settings.buttons
        context.playlistFolders = [(setup.mpd ?? MPDSettings()).playlistFolder(statePath: setup.statePath)].compactMap { $0 }
            + setup.musicFolders
        context.record = record
        context.configPath = setup.configPath
        context.version = "jukebox \(jukeboxVersion)"
        context.battery = setup.battery != nil || setup.batteryPin != nil
        context.headphones = setup.headphones != nil
        let bridge = MQTTBridge(settings: mqtt, context: context, log: say)
        if let problem = bridge.start() {
            log.error(problem + "; no MQTT")
            bridge.close()
            return (nil, nil)
        }
        return (bridge, nil)
    }

    /// The output factory: ALSA, a Snapcast pipe, or the paced silent output when asked for or when the default
    /// device is wanted on a machine without any sound card (said once, in one line).
    /// The card's ALSA device and the headphones' (`headphones.device`) and a Bluetooth speaker's
    /// (`bluetooth.device`) when the config names them.
    /// `bluetooth`: whether the speaker's comings and goings are watched.
    static func makeRoutedOutput(_ setup: PlayerSetup, bluetooth watched: Bool) -> RoutedOutput? {
        guard setup.audio == .alsa else { return nil }
        let headphones = setup.headphones?.device, bluetooth = watched ? setup.bluetooth?.device : nil
        guard headphones != nil || bluetooth != nil else { return nil }
        return RoutedOutput(card: AlsaOutput(device: setup.device), headphones: headphones.map { AlsaOutput(device: $0) },
                            bluetooth: bluetooth.map { AlsaOutput(device: $0) })
    }

    static func makeOutput(_ setup: PlayerSetup, log: Log) -> () -> PCMOutput {
        if setup.audio == .null { return { SilentOutput() } }
        if setup.audio == .snapcast {
            let s = setup.snapcast ?? SnapcastSettings()
            return { SnapcastOutput(pipe: s.pipe, stream: .init(rate: s.rate, bits: s.bits, channels: s.channels)) }
        }
        if setup.device == "default" && !AlsaOutput.hasSoundCard() {
            log.write(.warning, "no sound card: playing silently in real time (--device PCM picks one)")
            return { SilentOutput() }
        }
        let device = setup.device
        return { AlsaOutput(device: device) }
    }

    /// A file's tags (`AudioWiring.trackInfo`). Test knob (docs/TESTING.md): with
    /// `JUKEBOX_TEST_HANG_READS=TEXT` in the environment, the read of a path containing TEXT blocks
    /// for good in a read(2) — a hung NFS server or USB disk, which no file check can prevent.
    static func trackInfo(path: String) -> TrackInfo {
        if let marker = hangMarker, !marker.isEmpty, path.contains(marker) {
            var ends: [Int32] = [0, 0]
            if pipe(&ends) == 0 {
                var byte: UInt8 = 0
                // The write end stays open and unwritten: this read never returns.
                while read(ends[0], &byte, 1) != 1 {}
            }
        }
        return AudioWiring.trackInfo(path: path)
    }

    private static let hangMarker: String? = getenv("JUKEBOX_TEST_HANG_READS").map { String(cString: $0) }

    /// Loads `paths` into track info, logging what could not be used; nil (and a message) when
    /// nothing playable is left.
    static func load(_ paths: [String], log: Log) -> [TrackInfo]? {
        let loader = LibraryLoader(readInfo: trackInfo(path:))
        let (tracks, messages) = loader.load(paths)
        // TagLib's code and tables are done with until the next `add`: given back before the
        // device is opened, so start-up and playing do not add up to one peak (bench: 16.9 -> 13.9 MiB).
        ColdPages.release()
        for m in messages { log.warning(m) }
        if tracks.isEmpty {
            log.error("nothing to play in \(paths.joined(separator: " "))")
            return nil
        }
        return tracks
    }
}

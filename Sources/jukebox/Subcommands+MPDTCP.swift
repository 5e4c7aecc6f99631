// SPDX-License-Identifier: MIT
import JukeboxMQTT
import JukeboxService
import JukeboxSystem

extension Subcommands {
    /// `jukebox mpd-tcp --config FILE`: the config's MPD TCP listeners, one `ADDRESS PORT` line
    /// each, nothing when the config has no `mpd` object or only Unix socket paths. The service's
    /// network drop-in is written from this (board/mpd-network.sh: install.sh and the package's
    /// postinst), so the sandbox opens exactly when a TCP listener is configured, with the same
    /// validation the player applies. With `--mqtt`: the MQTT brokers instead, one `HOST PORT` line
    /// each: the `mqtt` object's, then those the record beside the state file still lists (what
    /// an earlier config announced there, until the player has taken it away). With `--radio`:
    /// `any` when streams need the internet (`Config.radioNetwork`), else nothing. Exit 1 when
    /// the config cannot be read.
    static func mpdTCP(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config"], flags: ["--mqtt", "--radio"], command: "mpd-tcp")
        if a.wantsHelp { return help(Help.mpdTCP) }
        guard a.positional.isEmpty else { throw UsageError(message: "mpd-tcp takes no arguments but --config FILE") }
        guard let path = a.options["--config"] else { throw UsageError(message: "mpd-tcp needs --config FILE") }
        let config: Config
        do { config = try Config.load(path: path).config } catch {
            writeAll(2, "jukebox: error: \(error)\n")
            return 1
        }
        if a.flags.contains("--radio") {
            // One line, `any`, when streams need the internet (any address: a station can be anywhere).
            if config.radioNetwork { writeAll(1, "any\n") }
            return 0
        }
        if a.flags.contains("--mqtt") {
            // The config's broker, then those that still hold what an earlier config announced:
            // the player reaches them to take it away (MQTTForgetter), so the sandbox must too.
            var lines: [String] = []
            if let mqtt = config.mqtt { lines.append("\(mqtt.host) \(mqtt.port ?? (mqtt.tls == nil ? 1883 : 8883))") }
            for entry in config.statePath.map({ MQTTRecord(statePath: $0).load() }) ?? [] {
                let line = "\(entry.host) \(entry.port)"
                if !lines.contains(line), !entry.host.contains(where: { $0 == " " || $0 == "\n" }) { lines.append(line) }
            }
            for line in lines { writeAll(1, line + "\n") }
            return 0
        }
        guard let mpd = config.mpd else { return 0 }
        for bind in mpd.binds where !MPDSettings.isPath(bind) { writeAll(1, "\(bind) \(mpd.port)\n") }
        return 0
    }
}

extension Help {
    static let mpdTCP = """
    Usage: jukebox mpd-tcp [--mqtt | --radio] --config FILE

    Prints the MPD TCP listeners FILE configures, one "ADDRESS PORT" line each; nothing when
    it has no "mpd" object or binds only Unix socket paths. With --mqtt: the MQTT brokers, one
    "HOST PORT" line each: its "mqtt" object's, then any that still hold what an earlier config
    announced (mqtt-announced.json beside the state file). With --radio: "any" when streams
    need the internet ("radio": {"network": true}, or a URL in "music"), else nothing.
    Exit 1 when FILE cannot be read.
    Used by board/mpd-network.sh to open the service's sandbox to the network only then.
    """
}

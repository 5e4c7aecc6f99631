// SPDX-License-Identifier: MIT
import JukeboxService
import JukeboxSystem

extension Commands {
    /// `jukebox mpd-tcp --config FILE`: the config's MPD TCP listeners, one `ADDRESS PORT` line
    /// each, nothing when the config has no `mpd` object or only Unix socket paths. The service's
    /// network drop-in is written from this (board/mpd-network.sh: install.sh and the package's
    /// postinst), so the sandbox opens exactly when a TCP listener is configured, with the same
    /// validation the player applies. With `--mqtt`: the MQTT broker instead, one `HOST PORT` line,
    /// nothing without an `mqtt` object. Exit 1 when the config cannot be read.
    static func mpdTCP(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config"], flags: ["--mqtt"], command: "mpd-tcp")
        if a.wantsHelp { return help(Help.mpdTCP) }
        guard a.positional.isEmpty else { throw UsageError(message: "mpd-tcp takes no arguments but --config FILE") }
        guard let path = a.options["--config"] else { throw UsageError(message: "mpd-tcp needs --config FILE") }
        let config: Config
        do { config = try Config.load(path: path).config } catch {
            writeAll(2, "jukebox: error: \(error)\n")
            return 1
        }
        if a.flags.contains("--mqtt") {
            if let mqtt = config.mqtt { writeAll(1, "\(mqtt.host) \(mqtt.port ?? (mqtt.tls == nil ? 1883 : 8883))\n") }
            return 0
        }
        guard let mpd = config.mpd else { return 0 }
        for bind in mpd.binds where !MPDSettings.isPath(bind) { writeAll(1, "\(bind) \(mpd.port)\n") }
        return 0
    }
}

extension Help {
    static let mpdTCP = """
    Usage: jukebox mpd-tcp [--mqtt] --config FILE

    Prints the MPD TCP listeners FILE configures, one "ADDRESS PORT" line each; nothing when
    it has no "mpd" object or binds only Unix socket paths. With --mqtt: the MQTT broker of its
    "mqtt" object, one "HOST PORT" line, nothing without one. Exit 1 when FILE cannot be read.
    Used by board/mpd-network.sh to open the service's sandbox to the network only then.
    """
}

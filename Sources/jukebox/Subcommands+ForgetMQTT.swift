// SPDX-License-Identifier: MIT
import JukeboxMQTT
import JukeboxService
import JukeboxSystem

extension Subcommands {
    /// `jukebox mqtt-forget --config FILE [--timeout SECONDS]`: takes away what the player
    /// announced on its MQTT brokers (Home Assistant's discovery configs and the retained state:
    /// an empty retained message on each), as the record beside FILE's state file lists it. For
    /// the package's prerm and `install.sh --uninstall`, run after the service stopped; bounded by
    /// the timeout (default 10 s). Exit 0 when nothing is left announced, 1 otherwise.
    static func mqttForget(_ args: [String]) throws(UsageError) -> Int32 {
        let a = try Arguments(args, options: ["--config", "--timeout"], flags: [], command: "mqtt-forget")
        if a.wantsHelp { return help(Help.mqttForget) }
        guard a.positional.isEmpty else { throw UsageError(message: "mqtt-forget takes no arguments but --config FILE [--timeout SECONDS]") }
        guard let path = a.options["--config"] else { throw UsageError(message: "mqtt-forget needs --config FILE") }
        let timeout = try a.options["--timeout"].map { (text: String) throws(UsageError) -> Double in
            guard let t = Double(text), t > 0, t <= 600 else { throw UsageError(message: "--timeout: seconds from 1 to 600") }
            return t
        } ?? 10
        let config: Config
        do { config = try Config.load(path: path).config } catch {
            writeAll(2, "jukebox: error: \(error)\n")
            return 1
        }
        guard let statePath = config.statePath else {
            writeAll(1, "mqtt-forget: no state file is configured, so nothing was recorded\n")
            return 0
        }
        let record = MQTTRecord(statePath: statePath)
        let entries = record.load()
        if entries.isEmpty {
            writeAll(1, "mqtt-forget: nothing announced (\(record.path) lists nothing)\n")
            return 0
        }
        let problems = MQTTForget.all(in: record, timeout: timeout)
        for problem in problems { writeAll(2, "jukebox: \(problem)\n") }
        let left = record.load()
        for entry in entries where !left.contains(entry) {
            writeAll(1, "mqtt-forget: \(entry.host):\(entry.port): \(entry.retained.count) retained topics under \(entry.topic) and its discovery configs removed\n")
        }
        return problems.isEmpty ? 0 : 1
    }
}

extension Help {
    static let mqttForget = """
    Usage: jukebox mqtt-forget --config FILE [--timeout SECONDS]

    Removes what the player announced over MQTT: Home Assistant's discovery configs (so its
    entities go away) and the retained state topics, on every broker the record beside FILE's
    state file (mqtt-announced.json) lists. Run it after the service stopped (the package's prerm
    does on removal). At most SECONDS (default 10). Exit 1 when a broker could not be reached:
    the record keeps what is left, and the next start without "mqtt" retries.
    """
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import Glibc
import JukeboxService

/// The configuration loader: any bytes give a configuration with warnings or one clear problem.
enum ConfigHarness {
    static let source = "fuzz.json"

    static func run(_ data: [UInt8]) -> Bool {
        // The same bytes as a board profile (what `"board": PATH` loads), merged under the defaults.
        let profilePath = StateHarness.folder + "/profile.json"
        StateHarness.write(data, to: profilePath)
        defer { unlink(profilePath) }
        do {
            let profile = try BoardConfig.profile(profilePath, folders: [])
            let merged = BoardConfig().over(profile)
            try? merged.validate(source: source)
            var settings = Settings()
            merged.apply(to: &settings)
        } catch {
            require(error.description.hasPrefix(profilePath + ": not a valid board profile ("),
                    "a profile problem that does not name the file: \(error.description.debugDescription)")
        }
        let parsed: (config: Config, warnings: [String])
        do {
            parsed = try Config.parse(data, source: source)
        } catch {
            let text = error.description
            require(text.hasPrefix(source + ": ") && text.utf8.count > source.utf8.count + 8,
                    "a problem that does not name the file and what is wrong: \(text.debugDescription)")
            require(text.utf8.count <= data.count + 400, "a problem of \(text.utf8.count) bytes for \(data.count) bytes in")
            return false
        }
        let config = parsed.config
        for warning in parsed.warnings {
            require(warning.hasPrefix(source + ": unknown key"), "warning \(warning.debugDescription)")
        }
        require(config.settings.volumeMin <= config.settings.volumeMax, "volumeMin > volumeMax accepted")
        require(!config.device.isEmpty && !config.mixerCard.isEmpty, "an empty device or mixer card accepted")
        do { try config.hardware.validate(source: source) } catch {
            fatalError("property failed: an accepted configuration does not validate: \(error)")
        }
        // What the runtime builds from it must be usable by the core.
        let settings = config.settings
        var state = State(settings: settings)
        _ = reduce(&state, .add([TrackInfo(path: "/m/a.flac", duration: 60)]))
        _ = reduce(&state, .play)
        _ = reduce(&state, .changeVolume(by: settings.volumeStep))
        _ = reduce(&state, .seekBy(settings.seekStep))
        _ = reduce(&state, .reconfigured(settings))
        checkCoreInvariants(state, after: "a configuration")
        // Written back as JSON, the configuration reads the same.
        let text = ConfigRender.json(config)
        do {
            let again = try Config.parse(Array(text.utf8), source: source)
            require(again.config == config, "config does not read back equal: \(text)")
        } catch {
            fatalError("property failed: a rendered configuration is refused: \(error)\n\(text)")
        }
        return true
    }
}

/// A configuration as the JSON file that produces it (every key written out).
enum ConfigRender {
    static func json(_ c: Config) -> String {
        let s = c.settings
        var fields: [String] = [
            "\"device\": " + q(c.device),
            // A Snapcast pipe is spelled with "output" (which "audio" may not stand beside).
            c.snapcast.map { "\"output\": {\"type\": \"snapcast\", \"pipe\": " + q($0.pipe) + ", \"sampleFormat\": " + q($0.sampleFormat) + "}" }
                ?? "\"audio\": " + q(c.audio.rawValue),
            "\"state\": " + q(c.statePath ?? ""),
            "\"music\": " + list(c.music),
            "\"resume\": " + q(s.resumePlaying ? "playing" : "paused"),
            "\"saveInterval\": " + num(s.saveInterval),
            "\"volumeMin\": \(s.volumeMin)",
            "\"volumeMax\": \(s.volumeMax)",
            "\"volumeStep\": \(s.volumeStep)",
            "\"seekStep\": " + num(s.seekStep),
            "\"logLevel\": " + q(name(c.logLevel)),
            "\"releaseDelay\": " + num(s.releaseDelay),
            "\"resumeAfterDeviceLoss\": \(s.resumeAfterDeviceLoss)",
            "\"mixer\": " + q(c.mixer ?? ""),
            "\"mixerCard\": " + q(c.mixerCard),
            "\"resumeRewind\": " + num(s.resumeRewind),
            "\"console\": " + q(c.console ?? ""),
            "\"consoleBaud\": \(c.consoleBaud)",
            "\"chime\": " + q(s.chime ?? ""),
        ]
        if let v = c.socketPath { fields.append("\"socket\": " + q(v)) }
        if let v = s.bootVolume { fields.append("\"bootVolume\": \(v)") }
        let h = c.hardware
        if let v = h.board { fields.append("\"board\": " + q(v)) }
        if let g = h.gpio {
            var parts: [String] = []
            if let v = g.chip { parts.append("\"chip\": " + q(v)) }
            if let v = g.bias { parts.append("\"bias\": " + q(v)) }
            if let v = g.activeLow { parts.append("\"activeLow\": \(v)") }
            if let v = g.debounceMs { parts.append("\"debounceMs\": \(v)") }
            fields.append("\"gpio\": {" + parts.joined(separator: ", ") + "}")
        }
        if let b = h.buttons {
            fields.append("\"buttons\": {" + b.sorted { $0.key < $1.key }.map { q($0.key) + ": " + q($0.value) }.joined(separator: ", ") + "}")
        }
        if let e = h.encoder {
            var parts = ["\"a\": " + q(e.a), "\"b\": " + q(e.b)]
            if let v = e.push { parts.append("\"push\": " + q(v)) }
            if let v = e.stepsPerDetent { parts.append("\"stepsPerDetent\": \(v)") }
            if let v = e.acceleration { parts.append("\"acceleration\": \(v)") }
            fields.append("\"encoder\": {" + parts.joined(separator: ", ") + "}")
        }
        if let v = h.input { fields.append("\"input\": " + list(v)) }
        if let d = h.display {
            var parts = ["\"type\": " + q(d.type)]
            if let v = d.bus { parts.append("\"bus\": " + q(v)) }
            if let v = d.address { parts.append("\"address\": \(v)") }
            if let v = d.pins { parts.append("\"pins\": " + q(v)) }
            fields.append("\"display\": {" + parts.joined(separator: ", ") + "}")
        }
        if let v = h.powerCommand { fields.append("\"powerCommand\": " + list(v)) }
        return "{" + fields.joined(separator: ",\n ") + "}\n"
    }

    static func name(_ level: LogLevel) -> String {
        switch level {
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "info"
        case .debug: return "debug"
        }
    }

    /// Shortest text that reads back as the same Double.
    static func num(_ d: Double) -> String { "\(d)" }

    static func list(_ items: [String]) -> String { "[" + items.map(q).joined(separator: ", ") + "]" }

    static func q(_ s: String) -> String { JSONText.quoted(s) }
}

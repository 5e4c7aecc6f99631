// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// The settings the page may change, and nothing else: a key the web could set freely (a path
/// the player reads, `powerCommand`, the MQTT broker) would be more than a setting. The values
/// are checked by the config's own code (`Config.load`), never here.
public enum WebSettings {
    public enum Applies: String, Sendable {
        /// SIGHUP / `reload` applies it at once.
        case now
        /// Read when the player starts (the boot volume).
        case start
    }

    public struct Entry: Sendable {
        public var key: String
        public var applies: Applies
        /// Whether leaving it out of the file is a value of its own (`bootVolume`: keep the saved
        /// volume; `idlePowerOff`: never).
        public var optional: Bool
        /// The section that must already be in the file (`rfid` for its keys).
        public var needs: String?
    }

    public static let entries: [Entry] = [
        Entry(key: "volumeMin", applies: .now, optional: false),
        Entry(key: "volumeMax", applies: .now, optional: false),
        Entry(key: "volumeStep", applies: .now, optional: false),
        Entry(key: "bootVolume", applies: .start, optional: true),
        Entry(key: "idlePowerOff", applies: .now, optional: true),
        Entry(key: "rfid.secondSwipe", applies: .now, optional: false, needs: "rfid"),
        Entry(key: "rfid.onRemove", applies: .now, optional: false, needs: "rfid"),
        // The parental rules' numbers, behind the page's PIN like every setting here (the control
        // socket, the console and MQTT change no setting); times and folders: the file only.
        Entry(key: "parental.dailyLimitMinutes", applies: .now, optional: true, needs: "parental"),
        Entry(key: "parental.warnMinutes", applies: .now, optional: true, needs: "parental"),
    ]

    /// A value from the page: a number, a string, true/false, or null (the key leaves the file).
    public enum Value: Decodable, Equatable, Sendable {
        case number(Double), text(String), flag(Bool), null

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .flag(b) }
            else if let d = try? c.decode(Double.self) { self = .number(d) }
            else { self = .text(try c.decode(String.self)) }
        }

        /// The JSON text written into the file (nil: remove the key).
        public var json: String? {
            switch self {
            case .null: return nil
            case .flag(let b): return b ? "true" : "false"
            case .text(let s): return JSONText.quoted(s)
            case .number(let d):
                if d == d.rounded(), abs(d) < 1e9 { return String(Int(d)) }
                return d.isFinite ? String(d) : "null"
            }
        }
    }

    /// The changes for `values`, or the problem with the first that is not a setting of the page.
    public struct Refusal: Error, Equatable { public var message: String }

    public static func changes(_ values: [String: Value]) -> Result<[ConfigEdit.Change], Refusal> {
        guard !values.isEmpty, values.count <= entries.count else { return .failure(Refusal(message: "no setting to change")) }
        var out: [ConfigEdit.Change] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let entry = entries.first(where: { $0.key == key }) else {
                return .failure(Refusal(message: "\(key) is not a setting the page changes; edit the config file"))
            }
            if value == .null && !entry.optional { return .failure(Refusal(message: "\(key) needs a value")) }
            out.append(ConfigEdit.Change(key.split(separator: ".").map(String.init), value.json))
        }
        return .success(out)
    }

    /// The page's view of a config: each setting's value in effect (defaults included), where it
    /// applies, and what is shown only (buttons, display, which faces are on).
    public static func json(_ config: Config, file: [UInt8], path: String) -> String {
        let q = JSONText.quoted
        let s = config.settings
        func effective(_ key: String) -> String {
            switch key {
            case "volumeMin": return "\(s.volumeMin)"
            case "volumeMax": return "\(s.volumeMax)"
            case "volumeStep": return "\(s.volumeStep)"
            case "bootVolume": return s.bootVolume.map { "\($0)" } ?? "null"
            case "idlePowerOff": return s.idlePowerOff.map { ConfigEdit.number($0 / 60) } ?? "null"
            case "rfid.secondSwipe": return q(s.cards.secondSwipe.rawValue)
            case "rfid.onRemove": return q(s.cards.onRemove.rawValue)
            case "parental.dailyLimitMinutes": return s.parental.dailyLimit.map { ConfigEdit.number($0 / 60) } ?? "null"
            case "parental.warnMinutes": return ConfigEdit.number(s.parental.warnBefore / 60)
            default: return "null"
            }
        }
        // A section written `null` is off: its keys are not offered (an edit would find no object).
        let shown = entries.filter { e in e.needs.map { ConfigEdit.value(at: [$0], in: file)?.hasPrefix("{") == true } ?? true }
        let items = shown.map { e in
            "{\"key\":" + q(e.key) + ",\"value\":" + effective(e.key) + ",\"applies\":" + q(e.applies.rawValue)
                + ",\"optional\":\(e.optional)}"
        }
        let buttons = (config.hardware.buttons ?? [:]).sorted { $0.key < $1.key }.map { q($0.key) + ":" + q($0.value) }
        let choices = "{\"rfid.secondSwipe\":[" + SecondSwipe.allCases.map { q($0.rawValue) }.joined(separator: ",")
            + "],\"rfid.onRemove\":[" + OnRemove.allCases.map { q($0.rawValue) }.joined(separator: ",") + "]}"
        return "{\"file\":" + q(path) + ",\"settings\":[" + items.joined(separator: ",") + "],\"choices\":" + choices
            + ",\"buttons\":{" + buttons.joined(separator: ",") + "},\"board\":" + (config.hardware.board.map(q) ?? "null")
            + ",\"display\":" + (config.hardware.display.map { q($0.type) } ?? "null")
            + ",\"mpd\":\(config.mpd != nil),\"mqtt\":\(config.mqtt != nil),\"rfid\":\(config.rfid != nil)}"
    }
}

extension ConfigEdit {
    /// A number as the page shows it: whole numbers without a fraction.
    public static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e9 ? String(Int(d)) : String(d)
    }
}

extension WebServer {
    private struct SettingsBody: Decodable { var changes: [String: WebSettings.Value] }

    /// `GET /api/settings` (signed in): the settings as the config file has them.
    func settings(_ request: Incoming) -> Reply {
        guard lock.withLock({ sessions.csrf(for: request.sessionToken, now: monotonicNow()) }) != nil else {
            return .error(401, "sign in first")
        }
        guard let path = options.configPath else { return .error(409, "the web face was started without --config: no settings to show") }
        let bytes: [UInt8]
        let config: Config
        do {
            bytes = try readFile(path, limit: 1 << 20)
            config = try Config.load(bytes, path: path).config
        } catch {
            return .error(500, "\(error)")
        }
        return .json(200, WebSettings.json(config, file: bytes, path: path))
    }

    /// `POST /api/settings/change {"changes":{"volumeMax":80}}` (signed in): written into the
    /// config file (checked by the config's code, atomically, the rest of the file kept), then
    /// the player reads it again (`reload`).
    func changeSettings(_ request: Incoming) -> Reply {
        switch lock.withLock({ sessions.check(cookie: request.sessionToken, csrfHeader: request.csrf, now: monotonicNow()) }) {
        case .allowed: break
        case .signInFirst: return .error(401, "sign in first")
        case .badCSRF: return .error(403, "bad CSRF token")
        }
        guard let path = options.configPath else { return .error(409, "the web face was started without --config: no settings to change") }
        guard let body = decode(SettingsBody.self, request.body) else {
            return .error(400, "the body must be {\"changes\":{\"KEY\":VALUE}}")
        }
        let changes: [ConfigEdit.Change]
        switch WebSettings.changes(body.changes) {
        case .failure(let refusal): return .error(400, refusal.message)
        case .success(let c): changes = c
        }
        // One writer at a time: two pages saving at once must not lose one's change.
        let written: Result<Config, Config.Problem> = settingsLock.withLock {
            do throws(Config.Problem) { return .success(try ConfigEdit.write(path: path, changes)) } catch { return .failure(error) }
        }
        if case .failure(let problem) = written { return .error(400, problem.description) }
        let restart = changes.compactMap { c in
            WebSettings.entries.first { $0.key == c.path.joined(separator: ".") && $0.applies == .start }?.key
        }
        var reload = "error: the player is not running"
        if let client = try? ControlClient(path: options.socketPath), let reply = client.request("reload", timeout: 10) {
            reload = reply
        }
        return .json(200, "{\"saved\":true,\"reload\":" + JSONText.quoted(reload) + ",\"atStart\":["
            + restart.map(JSONText.quoted).joined(separator: ",") + "]}")
    }
}

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
        /// What the value is: a number, a word or a flag, or one of the parental rules' spans.
        public var kind: Kind = .scalar
        /// Offered also when the file has no `needs` section at all: a value then adds the section
        /// with this one key (the speaker's address, which is all a `bluetooth` section needs).
        /// A section written `null` (off) is still not offered.
        public var addsSection = false
        /// A key that must be in the `needs` section too (`speaker` for the speaker's rules: a
        /// section `{"phone": true}` alone has no speaker for them to apply to).
        public var needsKey: String?
    }

    /// The shape of an entry's value; a value of another shape is refused here (the config's
    /// code checks the rest: times, ranges, folders, how many).
    public enum Kind: Sendable {
        /// A number, a string or true/false.
        case scalar
        /// `parental.quietHours`: one span with `folders` and `volumeMax`.
        case quietHours
        /// `parental.caps`: a list of spans with `volumeMax` and `output`.
        case caps
        /// `speeds`: folder → playback speed.
        case speeds
    }

    public static let entries: [Entry] = [
        Entry(key: "volumeMin", applies: .now, optional: false),
        Entry(key: "volumeMax", applies: .now, optional: false),
        Entry(key: "volumeStep", applies: .now, optional: false),
        Entry(key: "bootVolume", applies: .start, optional: true),
        Entry(key: "idlePowerOff", applies: .now, optional: true),
        Entry(key: "rfid.secondSwipe", applies: .now, optional: false, needs: "rfid"),
        Entry(key: "rfid.onRemove", applies: .now, optional: false, needs: "rfid"),
        // The parental rules, behind the page's PIN like every setting here (the control socket,
        // the console and MQTT change no setting).
        Entry(key: "parental.dailyLimitMinutes", applies: .now, optional: true, needs: "parental"),
        Entry(key: "parental.warnMinutes", applies: .now, optional: true, needs: "parental"),
        Entry(key: "parental.resetAt", applies: .now, optional: true, needs: "parental"),
        Entry(key: "parental.quietHours", applies: .now, optional: true, needs: "parental", kind: .quietHours),
        Entry(key: "parental.caps", applies: .now, optional: true, needs: "parental", kind: .caps),
        // Per-folder playback speeds (`Speed`); a reload applies them to the track playing too.
        Entry(key: "speeds", applies: .now, optional: true, kind: .speeds),
        // The Bluetooth speaker (docs/BLUETOOTH.md): its address is checked by the config's rule
        // (`BluetoothAddress`, the control language's too); the player watches a new one from its
        // next start, as it opens its devices then. `device` is a path-like PCM name: the file's.
        Entry(key: "bluetooth.speaker", applies: .start, optional: false, needs: "bluetooth", addsSection: true),
        Entry(key: "bluetooth.whenGone", applies: .now, optional: false, needs: "bluetooth", needsKey: "speaker"),
        Entry(key: "bluetooth.volumeMax", applies: .now, optional: true, needs: "bluetooth", needsKey: "speaker"),
    ]

    /// A span of the day from the page: quiet hours (with `folders`, `volumeMax`) or a volume cap
    /// (`volumeMax`, `output`). Only these keys are read; any other refuses the body.
    public struct Span: Decodable, Equatable, Sendable {
        public var from: String
        public var to: String
        public var folders: [String]?
        public var volumeMax: Int?
        public var output: String?

        public init(from: String, to: String, folders: [String]? = nil, volumeMax: Int? = nil, output: String? = nil) {
            self.from = from
            self.to = to
            self.folders = folders
            self.volumeMax = volumeMax
            self.output = output
        }

        private enum Keys: String, CodingKey, CaseIterable { case from, to, folders, volumeMax, output }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            if let odd = c.allKeys.first(where: { Keys(rawValue: $0.stringValue) == nil }) {
                throw DecodingError.dataCorruptedError(forKey: odd, in: c, debugDescription: "not a key of a span")
            }
            let k = try decoder.container(keyedBy: Keys.self)
            from = try k.decode(String.self, forKey: .from)
            to = try k.decode(String.self, forKey: .to)
            folders = try k.decodeIfPresent([String].self, forKey: .folders)
            volumeMax = try k.decodeIfPresent(Int.self, forKey: .volumeMax)
            output = try k.decodeIfPresent(String.self, forKey: .output)
        }

        /// The span as the config file writes it; absent fields left out.
        var json: String {
            let q = JSONText.quoted
            var fields: [String] = ["\"from\": " + q(from), "\"to\": " + q(to)]
            if let folders { fields.append("\"folders\": [" + folders.map(q).joined(separator: ", ") + "]") }
            if let volumeMax { fields.append("\"volumeMax\": \(volumeMax)") }
            if let output { fields.append("\"output\": " + q(output)) }
            return "{" + fields.joined(separator: ", ") + "}"
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A value from the page: a number, a string, true/false, or null (the key leaves the file).
    /// A span (`parental.quietHours`) or a list of them (`parental.caps`) too, or an object of
    /// numbers (`speeds`: folder → speed).
    public enum Value: Decodable, Equatable, Sendable {
        case number(Double), text(String), flag(Bool), null, span(Span), spans([Span]), numbers([String: Double])

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .flag(b) }
            else if let d = try? c.decode(Double.self) { self = .number(d) }
            else if let t = try? c.decode(String.self) { self = .text(t) }
            else if let list = try? c.decode([Span].self) { self = .spans(list) }
            else if let map = try? c.decode([String: Double].self) { self = .numbers(map) }
            else { self = .span(try c.decode(Span.self)) }
        }

        /// The JSON text written into the file (nil: remove the key).
        public var json: String? {
            switch self {
            case .null: return nil
            case .flag(let b): return b ? "true" : "false"
            case .text(let s): return JSONText.quoted(s)
            case .span(let span): return span.json
            case .spans(let list): return "[" + list.map(\.json).joined(separator: ", ") + "]"
            case .numbers(let map):
                let fields: [String] = map.sorted { $0.key < $1.key }.map { JSONText.quoted($0.key) + ": " + ConfigEdit.number($0.value) }
                return "{" + fields.joined(separator: ", ") + "}"
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
            if let problem = shapeProblem(value, entry) { return .failure(Refusal(message: "\(key) " + problem)) }
            out.append(ConfigEdit.Change(key.split(separator: ".").map(String.init), value.json))
        }
        return .success(out)
    }

    /// Why `value` is not of the shape `entry` takes; nil: it is (null always is: it removes).
    static func shapeProblem(_ value: Value, _ entry: Entry) -> String? {
        switch (entry.kind, value) {
        case (_, .null): return nil
        case (.scalar, .span), (.scalar, .spans), (.scalar, .numbers): return "takes a number or a word, not a span of the day"
        case (.speeds, .numbers(let map)) where map.values.allSatisfy(\.isFinite): return nil
        case (.speeds, _): return "must be an object of folder → speed, like {\"/srv/music/Audiobooks\": 1.25}"
        case (.scalar, _): return nil
        case (.quietHours, .span(let s)) where s.output == nil: return nil
        case (.quietHours, _): return "must be {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"folders\": [folders], \"volumeMax\": 0-100}"
        case (.caps, .spans(let list)) where list.allSatisfy({ $0.folders == nil }): return nil
        case (.caps, _): return "must be a list of {\"from\": \"HH:MM\", \"to\": \"HH:MM\", \"volumeMax\": 0-100, \"output\": \"speaker\" or \"headphones\"}"
        }
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
            case "parental.resetAt": return q(LocalTime.text(s.parental.resetAt))
            case "parental.quietHours": return s.parental.quietHours.map(quietJSON) ?? "null"
            case "parental.caps": return "[" + s.parental.caps.map(capJSON).joined(separator: ",") + "]"
            case "speeds": return speedsJSON(s.speeds)
            case "bluetooth.speaker": return config.bluetooth.map { q($0.address) } ?? "null"
            case "bluetooth.whenGone": return s.bluetooth.map { q($0.whenGone.rawValue) } ?? "null"
            case "bluetooth.volumeMax": return s.bluetooth?.volumeMax.map { "\($0)" } ?? "null"
            default: return "null"
            }
        }
        // A section written `null` is off: its keys are not offered (an edit would find no object).
        let shown: [Entry] = entries.filter { (e: Entry) -> Bool in
            e.needs.map { (section: String) -> Bool in
                let text = ConfigEdit.value(at: [section], in: file)
                if let key = e.needsKey, ConfigEdit.value(at: [section, key], in: file) == nil { return false }
                return text?.hasPrefix("{") == true || (e.addsSection && text == nil)
            } ?? true
        }
        let items = shown.map { e in
            "{\"key\":" + q(e.key) + ",\"value\":" + effective(e.key) + ",\"applies\":" + q(e.applies.rawValue)
                + ",\"optional\":\(e.optional)}"
        }
        let buttons = (config.hardware.buttons ?? [:]).sorted { $0.key < $1.key }.map { q($0.key) + ":" + q($0.value) }
        // In typed parts: Swift 6.0.3 gives up on one long `+` of mapped lists.
        let swipes: String = SecondSwipe.allCases.map { q($0.rawValue) }.joined(separator: ",")
        let removes: String = OnRemove.allCases.map { q($0.rawValue) }.joined(separator: ",")
        let outputs: String = CapOutput.allCases.map { q($0.rawValue) }.joined(separator: ",")
        let gone: String = BluetoothSettings.WhenGone.allCases.map { q($0.rawValue) }.joined(separator: ",")
        let choices: String = "{\"rfid.secondSwipe\":[" + swipes + "],\"rfid.onRemove\":[" + removes
            + "],\"parental.caps.output\":[" + outputs + "],\"bluetooth.whenGone\":[" + gone + "]}"
        return "{\"file\":" + q(path) + ",\"settings\":[" + items.joined(separator: ",") + "],\"choices\":" + choices
            + ",\"buttons\":{" + buttons.joined(separator: ",") + "},\"board\":" + (config.hardware.board.map(q) ?? "null")
            + ",\"display\":" + (config.hardware.display.map { q($0.type) } ?? "null")
            + ",\"mpd\":\(config.mpd != nil),\"mqtt\":\(config.mqtt != nil),\"rfid\":\(config.rfid != nil)}"
    }
}

extension WebSettings {
    /// Quiet hours as the page reads them: every field present (`volumeMax` null: none).
    static func quietJSON(_ quiet: QuietHours) -> String {
        let q = JSONText.quoted
        let window: String = "{\"from\":" + q(LocalTime.text(quiet.window.from)) + ",\"to\":" + q(LocalTime.text(quiet.window.to))
        let folders: String = ",\"folders\":[" + quiet.folders.map(q).joined(separator: ",") + "]"
        return window + folders + ",\"volumeMax\":" + (quiet.volumeMax.map { String($0) } ?? "null") + "}"
    }

    /// The folders' speeds as the page reads them, by folder.
    static func speedsJSON(_ speeds: [String: Double]) -> String {
        let fields: [String] = speeds.sorted { $0.key < $1.key }.map { JSONText.quoted($0.key) + ":" + ConfigEdit.number($0.value) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A cap as the page reads it (`output` null: both).
    static func capJSON(_ cap: VolumeCap) -> String {
        let q = JSONText.quoted
        let window: String = "{\"from\":" + q(LocalTime.text(cap.window.from)) + ",\"to\":" + q(LocalTime.text(cap.window.to))
        return window + ",\"volumeMax\":\(cap.volumeMax),\"output\":" + (cap.output.map { q($0.rawValue) } ?? "null") + "}"
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

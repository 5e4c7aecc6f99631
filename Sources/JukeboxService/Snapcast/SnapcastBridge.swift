// SPDX-License-Identifier: MIT
import FoundationEssentials
import JukeboxCore

/// Snapcast's stream plugin API (newline-delimited JSON-RPC 2.0 on the plugin's stdin and stdout,
/// snapserver's doc/json_rpc_api/stream_plugin.md) in terms of jukebox's control language: what
/// `jukebox snapcast-control` (`SnapcastControl`) does with each line snapserver sends, and the
/// properties it reports, built from `status --json`. Pure: no I/O.
public enum SnapcastBridge {
    /// What a line from snapserver asks for.
    public enum Action: Equatable, Sendable {
        /// Send `line` to the control socket; answer request `id` with "ok" when it says `ok …`,
        /// with its message as an error when it says `error: …`.
        case control(id: String, line: String)
        /// Answer request `id` with the properties now.
        case properties(id: String)
        /// Write this line back at once (an error reply).
        case reply(String)
        /// Nothing to do (a notification, or a line that is no request).
        case ignore
    }

    /// A JSON-RPC error code for what jukebox refused or could not do (the implementation-defined
    /// server error range).
    public static let refusedCode = -32000

    /// The action for one line from snapserver (without its newline).
    public static func action(for line: [UInt8]) -> Action {
        guard JSONText.problem(line) == nil,
              let message = try? JSONDecoder().decode(JSONValue.self, from: Data(line)),
              case .object(let fields) = message else {
            return .reply(error(id: "null", code: -32700, message: "parse error"))
        }
        guard let rawID = fields["id"], rawID != .null else { return .ignore }  // a notification or a response
        guard let id = rawID.idText else { return .reply(error(id: "null", code: -32600, message: "invalid request")) }
        guard case .string(let method)? = fields["method"] else {
            // A response to nothing we asked (the plugin sends no requests).
            return fields["result"] != nil || fields["error"] != nil ? .ignore : .reply(error(id: id, code: -32600, message: "invalid request"))
        }
        let params = fields["params"]?.objectValue ?? [:]
        switch method {
        case "Plugin.Stream.Player.GetProperties":
            return .properties(id: id)
        case "Plugin.Stream.Player.Control":
            guard case .string(let command)? = params["command"] else {
                return .reply(error(id: id, code: -32602, message: "Control needs a command"))
            }
            let arguments = params["params"]?.objectValue ?? [:]
            switch control(command, arguments) {
            case .success(let line): return .control(id: id, line: line)
            case .failure(let problem): return .reply(error(id: id, code: -32602, message: problem.message))
            }
        case "Plugin.Stream.Player.SetProperty":
            switch setProperty(params) {
            case .success(let line): return .control(id: id, line: line)
            case .failure(let problem): return .reply(error(id: id, code: -32602, message: problem.message))
            }
        default:
            return .reply(error(id: id, code: -32601, message: "method not found: " + String(method.prefix(80))))
        }
    }

    /// The control line for a `Plugin.Stream.Player.Control` command.
    static func control(_ command: String, _ arguments: [String: JSONValue]) -> Result<String, BridgeProblem> {
        switch command {
        case "play": return .success("play")
        case "pause": return .success("pause")
        case "playPause": return .success("toggle")
        case "stop": return .success("stop")
        case "next": return .success("next")
        case "previous": return .success("prev")
        case "seek":
            guard let offset = arguments["offset"]?.numberValue, offset.isFinite, abs(offset) < 1e7 else {
                return .failure(BridgeProblem("seek needs params.offset in seconds"))
            }
            return .success("seek " + (offset < 0 ? "-" : "+") + seconds(abs(offset)))
        case "setPosition":
            guard let position = arguments["position"]?.numberValue, position.isFinite, position >= 0, position < 1e7 else {
                return .failure(BridgeProblem("setPosition needs params.position in seconds"))
            }
            return .success("seek " + seconds(position))
        default:
            return .failure(BridgeProblem("unknown command: " + String(command.prefix(40))))
        }
    }

    /// The control line for a `Plugin.Stream.Player.SetProperty` (`{"volume": 40}`).
    static func setProperty(_ params: [String: JSONValue]) -> Result<String, BridgeProblem> {
        guard params.count == 1, let (name, value) = params.first else {
            return .failure(BridgeProblem("SetProperty needs one property"))
        }
        switch (name, value) {
        case ("volume", .number(let v)) where v.isFinite && v >= 0 && v <= 100:
            return .success("vol \(Int(v.rounded()))")
        case ("shuffle", .bool(let on)):
            return .success("shuffle " + (on ? "on" : "off"))
        case ("loopStatus", .string(let loop)):
            switch loop {
            case "none": return .success("repeat off")
            case "track": return .success("repeat one")
            case "playlist": return .success("repeat all")
            default: return .failure(BridgeProblem("loopStatus must be none, track or playlist"))
            }
        case ("rate", _):
            return .failure(BridgeProblem("jukebox plays at rate 1 only"))
        default:
            return .failure(BridgeProblem("cannot set " + String(name.prefix(40))))
        }
    }

    /// `seconds` as the control language's seek argument (plain seconds, three decimals).
    private static func seconds(_ value: Double) -> String {
        let millis = Int((value * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// The player's properties as snapserver wants them (a JSON object), from the text after `ok `
    /// of `status --json`; nil (no player reached): stopped and not controllable. `metadata` is
    /// always there (snapserver 0.26 reads it unguarded once it has none).
    public static func properties(status: String?) -> String {
        guard let status, let s = PlayerStatusJSON(text: status) else {
            return properties(playback: "stopped", loop: "none", shuffle: false, volume: 0, position: .integer(0),
                              hasTracks: false, canSeek: false, canControl: false, metadata: []).text
        }
        let playback = switch s.phase {
        case "playing", "waiting": "playing"
        case "paused", "interrupted": "paused"
        default: "stopped"
        }
        let loop = switch s.repeat {
        case "one": "track"
        case "all": "playlist"
        default: "none"
        }
        var metadata: [JSONValue.Field] = []
        if let title = s.title { metadata.append(.init("title", .string(title))) }
        if let artist = s.artist { metadata.append(.init("artist", .array([.string(artist)]))) }
        if let album = s.album { metadata.append(.init("album", .string(album))) }
        if let duration = s.duration, duration.isFinite { metadata.append(.init("duration", .number(duration))) }
        // snapserver 0.26 knows `url`, not the `file` its documentation lists (it warns at each one).
        // A stream's URL is already one (percent-encoding it as a path would make `file://http%3A//…`).
        if let path = s.path { metadata.append(.init("url", .string(Library.isStreamURL(path) ? path : fileURL(path)))) }
        if let index = s.index { metadata.append(.init("trackId", .string(String(index)))) }
        let position = s.position.map { $0.isFinite ? max(0, $0) : 0 } ?? 0
        return properties(playback: playback, loop: loop, shuffle: s.shuffle, volume: s.volume, position: .number(position),
                          hasTracks: s.count > 0, canSeek: s.duration != nil, canControl: true, metadata: metadata).text
    }

    /// The properties object, its fields in snapserver's documented order.
    private static func properties(playback: String, loop: String, shuffle: Bool, volume: Int, position: JSONValue,
                                   hasTracks: Bool, canSeek: Bool, canControl: Bool, metadata: [JSONValue.Field]) -> JSONValue {
        let state: [JSONValue.Field] = [
            .init("playbackStatus", .string(playback)), .init("loopStatus", .string(loop)), .init("shuffle", .bool(shuffle)),
            .init("volume", .integer(volume)), .init("position", position),
        ]
        let abilities: [JSONValue.Field] = [
            .init("canGoNext", .bool(hasTracks)), .init("canGoPrevious", .bool(hasTracks)), .init("canPlay", .bool(hasTracks)),
            .init("canPause", .bool(hasTracks)), .init("canSeek", .bool(canSeek)), .init("canControl", .bool(canControl)),
            .init("metadata", .fields(metadata)),
        ]
        return .fields(state + abilities)
    }

    /// `file://` and the path, every byte but unreserved ones and `/` percent-encoded (RFC 3986).
    static func fileURL(_ path: String) -> String {
        var out = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }

    /// A reply with `result` (JSON text) to request `id` (its JSON text).
    public static func result(id: String, _ result: String) -> String {
        "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"result\":\(result)}"
    }

    /// An error reply to request `id`.
    public static func error(id: String, code: Int, message: String) -> String {
        "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"error\":{\"code\":\(code),\"message\":" + JSONText.quoted(message) + "}}"
    }

    /// A notification (`params`: JSON text, or nil for none).
    public static func notification(_ method: String, params: String? = nil) -> String {
        "{\"jsonrpc\":\"2.0\",\"method\":" + JSONText.quoted(method) + (params.map { ",\"params\":" + $0 } ?? "") + "}"
    }
}

/// Why a request cannot become a control line.
struct BridgeProblem: Error, Equatable {
    var message: String
    init(_ message: String) { self.message = message }
}

extension JSONValue {
    /// A request id as JSON text to echo back: a string (quoted again) or an integer.
    var idText: String? {
        switch self {
        case .string(let s): return JSONText.quoted(s)
        case .number(let n) where n.isFinite && n == n.rounded() && abs(n) < 1e15: return String(Int64(n))
        default: return nil
        }
    }
}

// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore

/// The MPD listener's settings (the config's `"mpd"` object). They belong to the shell: where to
/// listen and whom to let in; what a command does is the core's.
public struct MPDSettings: Equatable, Sendable {
    /// Where to listen: IPv4 or IPv6 literals (`127.0.0.1`, `::1`, `0.0.0.0`, `::`), or absolute
    /// paths of Unix sockets.
    public var binds: [String] = ["127.0.0.1"]
    /// The TCP port for the addresses.
    public var port = 6600
    /// When set, every command but `password`, `close`, `ping`, `commands` and `notcommands`
    /// needs `password` first.
    public var password: String?
    /// Most clients at once; a newcomer beyond is closed at accept.
    public var maxClients = 16
    /// Seconds a client may be silent outside `idle` before it is closed (MPD's `connection_timeout`).
    public var timeout = 60.0

    /// Whether MPD clients may queue `http(s)://` URLs (`add`, `addid`, stored playlists). Off by
    /// default: anyone who reaches the MPD port could otherwise make the box connect to any host
    /// and port of its network, again and again (a port scanner). The control socket (local, root
    /// or the group only) always may.
    public var allowURLs = false

    /// The stored playlists' folder (absolute); nil: `playlists` next to the state file (see
    /// `playlistFolder(statePath:)`).
    public var playlists: String?

    /// The defaults (`127.0.0.1:6600`, no password, 16 clients, 60 s, playlists by the state file).
    public init() {}

    /// Where stored playlists live: `playlists` when set, else a `playlists` folder in the state
    /// file's folder; nil (stored playlists off) when neither is known.
    public func playlistFolder(statePath: String?) -> String? {
        playlists ?? statePath.map { Paths.directory($0) + "/playlists" }
    }

    /// Whether `bind` is a Unix socket path rather than an address.
    public static func isPath(_ bind: String) -> Bool { bind.hasPrefix("/") }

    /// Whether `bind` is an IPv4 or IPv6 literal (names are not resolved: the listener must not
    /// wait for DNS at start).
    public static func isAddress(_ bind: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, bind, &v4) == 1 || inet_pton(AF_INET6, bind, &v6) == 1
    }
}

/// The `"mpd"` object as written; `Config.parse` checks the values.
struct RawMPD: Decodable {
    var bind: [String]?
    var port: Int?
    var password: String?
    var maxClients: Int?
    var timeout: Double?
    var playlists: String?
    var allowURLs: Bool?
    /// Keys this object does not read (reported as warnings, like the top level's).
    var unknownKeys: [String] = []

    private enum Keys: String, CodingKey, CaseIterable { case bind, port, password, maxClients, timeout, playlists, allowURLs }

    init(from decoder: any Decoder) throws {
        unknownKeys = try decoder.unknownKeys(besides: Keys.self)
        let c = try decoder.container(keyedBy: Keys.self)
        // One address or a list of them.
        if let one = try? c.decodeIfPresent(String.self, forKey: .bind) {
            bind = [one]
        } else {
            bind = try c.decodeIfPresent([String].self, forKey: .bind)
        }
        port = try c.decodeIfPresent(Int.self, forKey: .port)
        password = try c.decodeIfPresent(String.self, forKey: .password)
        maxClients = try c.decodeIfPresent(Int.self, forKey: .maxClients)
        timeout = try c.decodeIfPresent(Double.self, forKey: .timeout)
        playlists = try c.decodeIfPresent(String.self, forKey: .playlists)
        allowURLs = try c.decodeIfPresent(Bool.self, forKey: .allowURLs)
    }

    /// The settings these values make, or the first key that is wrong.
    func settings() -> Result<MPDSettings, MPDKeyError> {
        var s = MPDSettings()
        if let bind {
            guard !bind.isEmpty, bind.allSatisfy({ MPDSettings.isPath($0) ? $0.utf8.count < 108 : MPDSettings.isAddress($0) }) else {
                return .failure(MPDKeyError(key: "bind"))
            }
            s.binds = bind
        }
        if let port { guard (1...65535).contains(port) else { return .failure(MPDKeyError(key: "port")) }; s.port = port }
        if let password { guard !password.isEmpty, !password.contains(where: \.isNewline) else { return .failure(MPDKeyError(key: "password")) }; s.password = password }
        if let maxClients { guard (1...256).contains(maxClients) else { return .failure(MPDKeyError(key: "maxClients")) }; s.maxClients = maxClients }
        if let timeout { guard timeout >= 1 && timeout <= 86400 else { return .failure(MPDKeyError(key: "timeout")) }; s.timeout = timeout }
        if let playlists {
            guard playlists.hasPrefix("/"), !playlists.contains(where: { $0.isNewline || $0 == "\0" }) else { return .failure(MPDKeyError(key: "playlists")) }
            s.playlists = playlists
        }
        if let allowURLs { s.allowURLs = allowURLs }
        return .success(s)
    }

    /// What a key of the `"mpd"` object must be.
    static func expectation(_ key: String) -> String {
        switch key {
        case "bind": return "must be an IP address (\"127.0.0.1\", \"::1\", \"0.0.0.0\", \"::\"), an absolute Unix socket path, or a list of them"
        case "port": return "must be a TCP port from 1 to 65535"
        case "password": return "must be a non-empty string on one line, or null for none"
        case "maxClients": return "must be 1 to 256"
        case "timeout": return "must be seconds from 1 to 86400"
        case "allowURLs": return "must be true or false (whether MPD clients may queue http(s) URLs; default false)"
        case "playlists": return "must be an absolute folder path (stored playlists; default: playlists next to the state file)"
        default: return "must be an object such as {\"bind\": \"127.0.0.1\", \"port\": 6600} (null turns MPD off)"
        }
    }
}

/// Which key of the `"mpd"` object is wrong.
struct MPDKeyError: Error, Equatable {
    var key: String
}

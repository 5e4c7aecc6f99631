// SPDX-License-Identifier: MIT

/// The MQTT bridge (the config's `"mqtt"` object; off when absent): the broker, the topic under
/// which the player's state, events and commands live, and Home Assistant's discovery prefix.
public struct MQTTSettings: Equatable, Sendable, Decodable {
    /// Client certificate files for TLS; `ca` alone verifies the broker only.
    public struct TLS: Equatable, Sendable, Decodable {
        /// The CA file that signed the broker's certificate.
        public var ca: String
        /// This client's certificate (with `key`; both or neither).
        public var cert: String?
        /// This client's private key.
        public var key: String?

        /// A CA file, and a client certificate with its key when the broker wants one.
        public init(ca: String, cert: String? = nil, key: String? = nil) {
            self.ca = ca
            self.cert = cert
            self.key = key
        }
    }
    /// The broker's host name or address.
    public var host: String
    /// The broker's port (1883, or 8883 with TLS, when absent).
    public var port: Int?
    /// The user name, if the broker wants one.
    public var username: String?
    /// The password, with `username`, written in the config (which must then be unreadable to
    /// other users, as `passwordFile` must).
    public var password: String?
    /// A file whose first line is the password (instead of `password`): readable by the service
    /// user, not by every user.
    public var passwordFile: String?
    /// TLS; nil: plain TCP.
    public var tls: TLS?
    /// The topic prefix; `jukebox/<hostname>` when absent.
    public var topic: String?
    /// Home Assistant's discovery prefix; "" publishes no discovery.
    public var discoveryPrefix: String?
    /// Seconds between position updates while playing (jumps are published at once).
    public var positionInterval: Double?

    /// Settings for `host` (the rest as when left out of the config).
    public init(host: String, port: Int? = nil, topic: String? = nil, positionInterval: Double? = nil) {
        self.host = host
        self.port = port
        self.topic = topic
        self.positionInterval = positionInterval
    }

    /// The problem with these settings, if any (the key and what it must be).
    public func problem() -> String? {
        if host.isEmpty || host.utf8.count > 255 { return "host: must be a host name or address" }
        if let port, !(1...65535).contains(port) { return "port: must be 1 to 65535" }
        if let topic, topic.isEmpty || topic.utf8.count > 200 || topic.contains(where: { $0 == "+" || $0 == "#" || $0.asciiValue.map { $0 < 32 } ?? false }) || topic.hasSuffix("/") {
            return "topic: must be a topic without wildcards or a trailing /, at most 200 bytes"
        }
        if let p = discoveryPrefix, p.contains(where: { $0 == "+" || $0 == "#" }) { return "discoveryPrefix: must be a topic without wildcards" }
        if let v = positionInterval, !(v >= 1 && v <= 3600) { return "positionInterval: must be seconds from 1 to 3600" }
        if let tls, (tls.cert == nil) != (tls.key == nil) { return "tls: cert and key go together" }
        if password != nil, passwordFile != nil { return "password, passwordFile: one or the other" }
        if password != nil || passwordFile != nil, username == nil { return "username: a password goes with a user name" }
        for (key, path) in [("passwordFile", passwordFile), ("tls.ca", tls?.ca), ("tls.cert", tls?.cert), ("tls.key", tls?.key)] {
            if let path, !path.hasPrefix("/") { return "\(key): must be an absolute path" }
        }
        return nil
    }
}

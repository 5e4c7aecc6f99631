// SPDX-License-Identifier: MIT
import CMosquitto
import Glibc
import JukeboxService
import JukeboxSystem

/// How a libmosquitto client is set up for a broker (the bridge's and `MQTTForget`'s), and the
/// rule for the files that hold the broker's secrets.
enum MQTTClientSetup {
    /// Loads libmosquitto and initialises it, once per process, before the first client: nil when
    /// it is ready, else the problem ("mqtt: libmosquitto.so.1 could not be loaded: …"). Loaded
    /// here, not linked, so a player without MQTT never maps it (CMosquitto).
    static let libraryProblem: String? = jb_mosquitto_load().map { "mqtt: " + String(cString: $0) }

    /// The problem with a file that holds a secret (the password file, the TLS key, the config
    /// when it holds the password), nil when there is none: it must be a regular file that other
    /// users cannot read. The message names the fix.
    static func secretProblem(_ path: String, holding what: String) -> String? {
        var st = stat()
        guard stat(cPath(path), &st) == 0 else { return "mqtt: \(what) \(path): \(errnoText(errno))" }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return "mqtt: \(what) \(path) is not a regular file" }
        if st.st_mode & S_IROTH != 0 {
            let mode = String(st.st_mode & 0o7777, radix: 8)
            return "mqtt: \(what) \(path) is readable by every user (mode \(mode)); make it readable by the service only, "
                + "e.g. chown root:jukebox \(path) && chmod 640 \(path)"
        }
        return nil
    }

    /// The problem with a file the client only reads (the CA, the certificate), nil when none.
    static func readableProblem(_ path: String, as what: String) -> String? {
        access(cPath(path), R_OK) == 0 ? nil : "mqtt: \(what) \(path): \(errnoText(errno))"
    }

    /// The password in `path`: its first line.
    static func password(from path: String) -> Result<String, MQTTProblem> {
        guard let text = readFileText(path, limit: 4096) else {
            return .failure(MQTTProblem(text: "mqtt: passwordFile \(path): \(errnoText(errno))"))
        }
        return .success(String(text.prefix { $0 != "\n" && $0 != "\r\n" }))
    }

    /// Gives `m` its credentials and TLS files; the problem when libmosquitto refuses them.
    static func configure(_ m: OpaquePointer, username: String?, password: String?, tls: MQTTSettings.TLS?) -> String? {
        var rc = MOSQ_ERR_SUCCESS.rawValue
        if username != nil || password != nil { rc = jb_mosquitto_username_pw_set(m, username, password) }
        if rc == MOSQ_ERR_SUCCESS.rawValue, let tls {
            rc = jb_mosquitto_tls_set(m, tls.ca, nil, tls.cert, tls.key, nil)
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : "mqtt: " + String(cString: jb_mosquitto_strerror(rc))
    }

    /// The problems with `settings`' secret and TLS files (`configPath`: the config, checked when
    /// it holds the password itself).
    static func fileProblems(_ settings: MQTTSettings, configPath: String?) -> [String] {
        var problems: [String] = []
        if let path = settings.passwordFile, let p = secretProblem(path, holding: "passwordFile") { problems.append(p) }
        if settings.password != nil, let path = configPath, let p = secretProblem(path, holding: "the config, which holds the password,") {
            problems.append(p)
        }
        if let tls = settings.tls {
            if let p = readableProblem(tls.ca, as: "tls.ca") { problems.append(p) }
            if let cert = tls.cert, let p = readableProblem(cert, as: "tls.cert") { problems.append(p) }
            if let key = tls.key, let p = secretProblem(key, holding: "tls.key") { problems.append(p) }
        }
        return problems
    }
}

/// A problem, said in one line.
public struct MQTTProblem: Error, CustomStringConvertible, Sendable {
    /// The line.
    public var text: String
    /// A problem.
    public init(text: String) { self.text = text }
    /// The line.
    public var description: String { text }
}

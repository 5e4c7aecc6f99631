// SPDX-License-Identifier: MIT

/// The checks every request passes before its route is served (pure): who connects, where a
/// change comes from, what it carries.
public enum RequestGuard {
    /// The largest POST body, in bytes.
    public static let bodyLimit = 16 << 10

    /// Why a request is refused: the HTTP status and the error text.
    public struct Refusal: Equatable, Sendable {
        public var status: Int
        public var error: String
        /// The connection is closed after the answer.
        public var close: Bool
        public init(_ status: Int, _ error: String, close: Bool = false) {
            self.status = status
            self.error = error
            self.close = close
        }
    }

    /// nil when the request may be served. `localPeer`: the peer passes `MPDPeer.isLocal` (the MPD
    /// listener's rule). A POST must be `bodyType` (`application/json`; an upload's
    /// `application/octet-stream`; parameters allowed), at most
    /// `bodyLimit` bytes, and when it has an `Origin` it must be `http://` + its `Host`.
    /// `machineName`: this machine's host name (`gethostname`), a name the `Host` header may carry
    /// besides those `hostIsLocal` accepts.
    public static func check(method: String, localPeer: Bool, host: String?, origin: String?, contentType: String?,
                             bodyTooLarge: Bool, machineName: String = "", bodyType: String = "application/json") -> Refusal? {
        guard localPeer else { return Refusal(403, "only this machine and the local network may connect", close: true) }
        guard hostIsLocal(host, machineName: machineName) else {
            return Refusal(403, "unknown host name: open the box by its address or its .local name", close: true)
        }
        guard method == "POST" else { return nil }
        if let origin {
            guard let host, !host.isEmpty, origin == "http://" + host else { return Refusal(403, "cross-origin request refused") }
        }
        let type = contentType?.split(separator: ";").first.map { $0.trimmingCharacters() .lowercased() }
        guard type == bodyType else { return Refusal(415, "a POST must be \(bodyType)") }
        guard !bodyTooLarge else { return Refusal(413, "the request is larger than \(bodyLimit / 1024) KiB") }
        return nil
    }
}

extension RequestGuard {
    /// Names no public DNS answers for: a web page elsewhere cannot make one of them point at the box.
    static let localSuffixes = [".local", ".lan", ".home", ".home.arpa", ".internal", ".localdomain", ".localhost", ".fritz.box"]

    /// Whether the `Host` header names the box as only a local name or an address can (pure).
    /// DNS rebinding: a page from `evil.example` that makes its name resolve to the box's address
    /// reaches it as a local peer, with `evil.example` as its Host and Origin, so the peer and
    /// Origin checks both pass; the name is what gives it away. Accepted: no Host (not a browser),
    /// an IPv4 or bracketed IPv6 address, `localhost`, a name of one label (`jukebox`), a name under
    /// `localSuffixes` (`jukebox.local`), and `machineName` itself; any port.
    public static func hostIsLocal(_ host: String?, machineName: String) -> Bool {
        guard let host, !host.isEmpty else { return true }
        if host.hasPrefix("[") { return host.contains("]") }
        var name = Substring(host.lowercased())
        if let colon = name.lastIndex(of: ":") {
            let port = name[name.index(after: colon)...]
            guard port.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
            name = name[..<colon]
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        guard !name.isEmpty, name.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }) else {
            return false
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count == 4, labels.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { ("0"..."9").contains($0) } }) { return true }
        if labels.count == 1 || name == "localhost" { return true }
        if localSuffixes.contains(where: { name.hasSuffix($0) }) { return true }
        let machine = machineName.lowercased()
        return !machine.isEmpty && name == machine
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

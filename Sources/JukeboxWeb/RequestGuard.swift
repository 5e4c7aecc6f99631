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
    /// listener's rule). A POST must be `application/json` (parameters allowed), at most
    /// `bodyLimit` bytes, and when it has an `Origin` it must be `http://` + its `Host`.
    public static func check(method: String, localPeer: Bool, host: String?, origin: String?, contentType: String?,
                             bodyTooLarge: Bool) -> Refusal? {
        guard localPeer else { return Refusal(403, "only this machine and the local network may connect", close: true) }
        guard method == "POST" else { return nil }
        if let origin {
            guard let host, !host.isEmpty, origin == "http://" + host else { return Refusal(403, "cross-origin request refused") }
        }
        let type = contentType?.split(separator: ";").first.map { $0.trimmingCharacters() .lowercased() }
        guard type == "application/json" else { return Refusal(415, "a POST must be application/json") }
        guard !bodyTooLarge else { return Refusal(413, "the request is larger than \(bodyLimit / 1024) KiB") }
        return nil
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

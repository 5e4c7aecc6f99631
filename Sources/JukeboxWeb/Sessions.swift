// SPDX-License-Identifier: MIT

/// The signed-in sessions (pure): random tokens (made by the caller from getrandom) to the CSRF
/// token that goes with each. Bounded: the oldest session is dropped for a new one past `limit`;
/// a session unused for `lifetime` seconds ends.
public struct SessionTable: Sendable {
    public struct Session: Equatable, Sendable {
        public var csrf: String
        public var lastUsed: Double
    }

    public private(set) var sessions: [String: Session] = [:]
    public let limit: Int
    public let lifetime: Double

    public init(limit: Int = 32, lifetime: Double = 30 * 24 * 3600) {
        self.limit = limit
        self.lifetime = lifetime
    }

    /// Starts a session with these tokens.
    public mutating func create(token: String, csrf: String, now: Double) {
        expire(now: now)
        while sessions.count >= limit, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
            sessions[oldest] = nil
        }
        sessions[token] = Session(csrf: csrf, lastUsed: now)
    }

    /// The CSRF token of the session `token` names, nil when it names none (or it expired); the
    /// session counts as used.
    public mutating func csrf(for token: String?, now: Double) -> String? {
        expire(now: now)
        guard let token, var session = sessions[token] else { return nil }
        session.lastUsed = now
        sessions[token] = session
        return session.csrf
    }

    public mutating func end(_ token: String?) {
        if let token { sessions[token] = nil }
    }

    /// Every session ends (the PIN was set anew).
    public mutating func endAll() { sessions = [:] }

    private mutating func expire(now: Double) {
        sessions = sessions.filter { now - $0.value.lastUsed < lifetime }
    }

    /// What a change needs: a session, and its CSRF token in the header.
    public enum Verdict: Equatable, Sendable {
        case allowed
        /// 401: no session (none, unknown or expired).
        case signInFirst
        /// 403: a session, but not its CSRF token.
        case badCSRF
    }

    public mutating func check(cookie token: String?, csrfHeader: String?, now: Double) -> Verdict {
        guard let csrf = csrf(for: token, now: now) else { return .signInFirst }
        guard let csrfHeader, constantTimeEqual(csrfHeader, csrf) else { return .badCSRF }
        return .allowed
    }
}

/// Equal strings, compared without an early exit.
public func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var diff = UInt8(x.count == y.count ? 0 : 1)
    for i in 0..<min(x.count, y.count) { diff |= x[i] ^ y[i] }
    return diff == 0
}

/// The wrong-PIN back-off (pure, fed the time): the first `free` wrong tries cost nothing more
/// than the answer; after that, from any client, every attempt waits 1, 2, 4 … `cap` seconds
/// from the last wrong one. A right PIN starts it over.
public struct PinBackoff: Equatable, Sendable {
    public private(set) var failures = 0
    public private(set) var nextAllowed = 0.0
    public let free: Int
    public let cap: Double

    public init(free: Int = 3, cap: Double = 60) {
        self.free = free
        self.cap = cap
    }

    /// Seconds to wait before an attempt is heard (429), nil when it may be tried now.
    public func wait(now: Double) -> Int? {
        now < nextAllowed ? max(1, Int((nextAllowed - now).rounded(.up))) : nil
    }

    /// Records a wrong PIN; returns the seconds before the next attempt is heard (0: at once).
    public mutating func failed(now: Double) -> Int {
        failures += 1
        guard failures >= free else { return 0 }
        let delay = min(cap, Double(1 << min(failures - free, 20)))
        nextAllowed = now + delay
        return Int(delay)
    }

    public mutating func succeeded() {
        failures = 0
        nextAllowed = 0
    }
}

/// What a PIN may be: 4 to 12 digits, or a passphrase of 4 to 64 characters without control
/// characters. nil when it may, else why not.
public func pinProblem(_ pin: String) -> String? {
    let count = pin.count
    guard count >= 4 else { return "a PIN has at least 4 characters" }
    guard count <= 64 else { return "a passphrase has at most 64 characters" }
    guard !pin.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) else {
        return "a PIN has no control characters"
    }
    return nil
}

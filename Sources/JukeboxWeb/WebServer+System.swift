// SPDX-License-Identifier: MIT
import JukeboxService
import JukeboxSystem

extension WebServer {
    /// How many of the player's last log lines the System page shows, and how long each may be.
    static let systemLogLines = 30, systemLogLineLength = 500

    /// `GET /api/system` (signed in): the player's `system --json` and its last log lines
    /// (`log N`) as `{"system":{…},"log":["…"]}`. The lines are text (JSON-escaped; the page sets
    /// them as DOM text), each cut at 500 characters.
    func system(_ request: Incoming) -> Reply {
        guard lock.withLock({ sessions.csrf(for: request.sessionToken, now: monotonicNow()) }) != nil else {
            return .error(401, "sign in first")
        }
        let facts = ask("system --json")
        guard facts.status == 200 else { return facts }
        var lines: [String] = []
        if let client = try? ControlClient(path: options.socketPath), let reply = client.request("log \(Self.systemLogLines)", timeout: 10) {
            lines = reply.split(separator: "\n", omittingEmptySubsequences: true)
                .filter { $0.hasPrefix("  ") }
                .suffix(Self.systemLogLines)
                .map { String($0.dropFirst(2).prefix(Self.systemLogLineLength)) }
        }
        return .json(200, "{\"system\":" + facts.body + ",\"log\":[" + lines.map(JSONText.quoted).joined(separator: ",") + "]}")
    }
}

extension WebServer {
    /// A PIN set anew with `jukebox web-pin` (a reset: maybe someone else knew the old one) ends
    /// every session made under the old one. The hash is read from its file at each API request.
    func endSessionsIfThePinChanged() {
        let current = pins.hash()
        lock.withLock {
            if current != sessionsPinHash {
                sessions.endAll()
                sessionsPinHash = current
            }
        }
    }
}

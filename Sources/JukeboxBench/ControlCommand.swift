// SPDX-License-Identifier: MIT
import JukeboxService
import JukeboxFixtures

/// Sends `line` to the player's control socket at `socket` (one connection, retried for up to 10 s
/// while the player starts) and throws unless the reply starts with `ok`; `section` names the
/// bench section in the error.
func controlCommand(_ line: String, socket: String, section: String) throws {
    var reply: String?
    _ = waitFor(10) {
        reply = try? ControlClient.connect(path: socket, request: line, timeout: 5).reply
        return reply != nil
    }
    guard let reply, reply.hasPrefix("ok") else { throw BenchError("\(section): `\(line)` answered \(reply ?? "nothing")") }
}

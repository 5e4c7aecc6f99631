// SPDX-License-Identifier: MIT
import Foundation
import Glibc

/// An answer of the web face as the tests read it: the status, the header fields (names
/// lowercased) and the body's bytes (a chunked body unchunked).
struct WebReply {
    var status: Int
    var headers: [String: String]
    var bytes: [UInt8]
    /// The body as text (bytes that are not UTF-8 as U+FFFD).
    var body: String { String(decoding: bytes, as: UTF8.self) }
    var text: String { body }
}

/// One HTTP/1.1 exchange with `jukebox web` on 127.0.0.1 (`Connection: close`): the request's
/// head and body sent, the answer read until the server closes the connection or `timeout`
/// passes. The one reader of every web test (the face, the library, uploads, paging).
enum WebClient {
    static func exchange(port: UInt16, head: String, body: [UInt8] = [], timeout: Double = 10) throws -> WebReply {
        let fd = try WebFaceTests.connect(port: port)
        defer { close(fd) }
        send(fd, Array(head.utf8))
        send(fd, body)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) >= 0 else { break }
            if p.revents == 0 { continue }
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let split = (0..<max(0, bytes.count - 3)).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }),
              bytes.starts(with: Array("HTTP/1.1 ".utf8)), let code = Int(String(decoding: bytes[9..<min(12, bytes.count)], as: UTF8.self)) else {
            throw NSError(domain: "web", code: 1, userInfo: [NSLocalizedDescriptionKey:
                "no HTTP answer: \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)"])
        }
        var fields: [String: String] = [:]
        for line in String(decoding: bytes[..<split], as: UTF8.self).components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var payload = Array(bytes[(split + 4)...])
        if fields["transfer-encoding"] == "chunked" { payload = unchunk(payload) }
        return WebReply(status: code, headers: fields, bytes: payload)
    }

    /// Sends all of `bytes` (a peer that closed ends it: the answer says what happened).
    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// A chunked body's data.
    static func unchunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], i = 0
        while i < bytes.count {
            guard let lineEnd = (i..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self), radix: 16), size > 0 else { break }
            out += bytes[(lineEnd + 2)..<min(bytes.count, lineEnd + 2 + size)]
            i = lineEnd + 2 + size + 2
        }
        return out
    }
}

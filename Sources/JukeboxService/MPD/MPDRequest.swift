// SPDX-License-Identifier: MIT
import JukeboxCore

/// One line of the MPD protocol, split into its command and arguments (MPD's `doc/protocol.rst`:
/// a lower-case command name, then arguments separated by blanks, each bare or in double quotes
/// with `\"` and `\\` escapes). Pure: no state, no I/O.
public struct MPDRequest: Equatable, Sendable {
    /// The command name as sent (MPD's names are lower case).
    public var name: String
    /// The arguments, unquoted.
    public var args: [String]

    /// Creates a request.
    public init(_ name: String, _ args: [String] = []) {
        self.name = name
        self.args = args
    }

    /// Splits one line (without its newline). The error names the problem for the ACK; a line
    /// that is not UTF-8 or has no command is refused here, before any command sees it.
    public static func parse(_ bytes: [UInt8]) -> Result<MPDRequest, MPDError> {
        guard let line = String(validating: bytes, as: UTF8.self) else {
            return .failure(MPDError(.arg, "the line is not UTF-8"))
        }
        var words: [String] = []
        var i = line.unicodeScalars.startIndex
        let scalars = line.unicodeScalars
        func isBlank(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" }
        while true {
            while i < scalars.endIndex, isBlank(scalars[i]) { i = scalars.index(after: i) }
            guard i < scalars.endIndex else { break }
            var word = String.UnicodeScalarView()
            if scalars[i] == "\"" {
                i = scalars.index(after: i)
                var closed = false
                while i < scalars.endIndex {
                    let s = scalars[i]
                    i = scalars.index(after: i)
                    if s == "\"" { closed = true; break }
                    if s == "\\" {
                        guard i < scalars.endIndex else { break }
                        word.append(scalars[i])
                        i = scalars.index(after: i)
                    } else {
                        word.append(s)
                    }
                }
                guard closed else { return .failure(MPDError(.arg, "Missing closing '\"'")) }
                if i < scalars.endIndex, !isBlank(scalars[i]) {
                    return .failure(MPDError(.arg, "Space expected after closing '\"'"))
                }
            } else {
                while i < scalars.endIndex, !isBlank(scalars[i]) {
                    if scalars[i] == "\"" { return .failure(MPDError(.arg, "Invalid unquoted character")) }
                    word.append(scalars[i])
                    i = scalars.index(after: i)
                }
            }
            words.append(String(word))
        }
        guard let name = words.first else { return .failure(MPDError(.unknown, "No command given")) }
        guard name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "_" }) else {
            return .failure(MPDError(.unknown, "unknown command \"\(DisplayText.inert(name.prefix(40)))\""))
        }
        return .success(MPDRequest(name, Array(words.dropFirst())))
    }

    /// `text` quoted as MPD's clients quote an argument (for tests and for replies that echo).
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for ch in text {
            if ch == "\\" || ch == "\"" { out.append("\\") }
            out.append(ch)
        }
        return out + "\""
    }
}

/// An MPD error: its code (`ACK [code@…]`) and message.
public struct MPDError: Error, Equatable, Sendable {
    /// MPD's error codes (`enum ack` in MPD's `protocol/Ack.hxx`).
    public enum Code: Int, Sendable {
        /// A command that only makes sense in a command list, outside one (or the reverse).
        case notList = 1
        /// Bad arguments.
        case arg = 2
        /// Wrong password.
        case password = 3
        /// Not allowed without the password.
        case permission = 4
        /// No such command.
        case unknown = 5
        /// No such song, file or entry.
        case noExist = 50
        /// The queue is full.
        case playlistMax = 51
        /// A system error (here also: what jukebox does not do).
        case system = 52
        /// A playlist could not be loaded.
        case playlistLoad = 53
        /// An update is already running.
        case updateAlready = 54
        /// The player is not in a state for this.
        case playerSync = 55
        /// It already exists.
        case exist = 56
    }

    /// The code.
    public var code: Code
    /// The message, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The ACK line for the command `command` at `index` in its command list (0 outside one).
    /// The command name and message are made inert: neither can forge a second line.
    public func ack(index: Int, command: String) -> String {
        "ACK [\(code.rawValue)@\(index)] {\(DisplayText.inert(command.prefix(40)))} \(DisplayText.inert(message))"
    }
}

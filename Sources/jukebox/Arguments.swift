// SPDX-License-Identifier: MIT

/// A command-line mistake: the message says what to do instead; exit code 2.
struct UsageError: Error {
    var message: String
}

/// Splits `args` into `--name value` options, `--flag` switches and positional words, checking
/// each against what the subcommand accepts. `--name=value` works too; `--` ends options.
/// `--help` and `-h` are accepted by every command (`wantsHelp`).
struct Arguments {
    var options: [String: String] = [:]
    var flags: Set<String> = []
    var positional: [String] = []
    /// The flags every command takes.
    static let helpFlags: Set<String> = ["--help", "-h"]
    /// Whether `--help` or `-h` was given: the command prints its help and does nothing else.
    var wantsHelp: Bool { !flags.isDisjoint(with: Self.helpFlags) }

    init(_ args: [String], options allowed: Set<String>, flags allowedFlags: Set<String>, command: String) throws(UsageError) {
        var i = 0
        var onlyPositional = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositional || !a.hasPrefix("-") || a == "-" {
                positional.append(a)
                continue
            }
            if a == "--" { onlyPositional = true; continue }
            var name = a, inline: String?
            if let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq])
                inline = String(a[a.index(after: eq)...])
            }
            if allowedFlags.contains(name) || Self.helpFlags.contains(name) {
                guard inline == nil else { throw UsageError(message: "\(name) takes no value") }
                flags.insert(name)
            } else if allowed.contains(name) {
                if let inline {
                    options[name] = inline
                } else {
                    guard i < args.count else { throw UsageError(message: "\(name) needs a value") }
                    options[name] = args[i]
                    i += 1
                }
            } else {
                throw UsageError(message: "unknown option \(name) for '\(command)' (see: jukebox \(command) --help)")
            }
        }
    }

    /// An integer option within `range`.
    func int(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw UsageError(message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return v
    }

    /// An option that must be one of `choices`.
    func choice(_ name: String, _ choices: [String]) throws(UsageError) -> String? {
        guard let text = options[name] else { return nil }
        guard choices.contains(text) else {
            throw UsageError(message: "\(name) must be one of \(choices.joined(separator: ", ")), not '\(text)'")
        }
        return text
    }
}

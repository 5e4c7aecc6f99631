// SPDX-License-Identifier: MIT
import FoundationEssentials
import Glibc
import JukeboxCore
import JukeboxSystem

/// The cards map file: a JSON object, card id → an absolute path (a folder or a playlist), a list
/// of absolute paths, or a command word (`Cards.commands`):
///
///     {"0012345678": "/music/Peppa", "0099": "toggle", "04A3B2C1": ["/music/a.flac", "/music/b.flac"]}
///
/// An entry that plays may be an object with options: `{"play": "/music/Book", "speed": 1.25}`
/// (`play` a path or a list of paths; `speed` from 0.75 to 2, the speed its tracks play at).
///
/// It is untrusted (edited by hand, written by `card assign`): ids keep letters and digits only,
/// every entry must parse, and a file with any problem is refused whole (the caller keeps the
/// previous map). Runs on the cards worker's thread, never on the loop.
public enum CardMapFile {
    /// Largest file read.
    public static let maxBytes = 1 << 20

    /// One entry's value as written.
    indirect enum Entry: Codable, Equatable {
        case text(String)
        case list([String])
        /// `{"play": PATH|[PATHS], "speed": N}`.
        case options(Options)
        /// `{"podcast": NAME}`.
        case podcast(PodcastRef)

        /// A podcast by its name in the config.
        struct PodcastRef: Codable, Equatable {
            var podcast: String
        }

        /// An entry with options.
        struct Options: Codable, Equatable {
            var play: Entry
            var speed: Double?
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let text = try? c.decode(String.self) { self = .text(text); return }
            if let list = try? c.decode([String].self) { self = .list(list); return }
            if let podcast = try? c.decode(PodcastRef.self) { self = .podcast(podcast); return }
            let options = try c.decode(Options.self)
            // Options nest one level only: `play` is a path or a list.
            if case .options = options.play { throw DecodingError.dataCorruptedError(in: c, debugDescription: "nested options") }
            self = .options(options)
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .text(let text): try c.encode(text)
            case .list(let list): try c.encode(list)
            case .options(let options): try c.encode(options)
            case .podcast(let podcast): try c.encode(podcast)
            }
        }
    }

    /// The map in `bytes`, or every problem found (one per line, for the log); `source` names it.
    public static func parse(_ bytes: [UInt8], source: String) -> Result<CardMap, CardMapError> {
        entries(bytes, source: source).flatMap { raw in
            var map: [String: CardAction] = [:]
            var speeds: [String: Double] = [:]
            var problems: [String] = []
            for (key, entry) in raw.sorted(by: { $0.key < $1.key }) {
                let shown = DisplayText.inert(String(key.prefix(40)))
                guard let id = Cards.normalisedID(key) else {
                    problems.append("\(source): \"\(shown)\": an id must be 1-\(Cards.maxIDLength) letters and digits")
                    continue
                }
                guard map[id] == nil else {
                    problems.append("\(source): \"\(shown)\": card \(id) is listed twice")
                    continue
                }
                let action: Result<CardAction, CardMapError>
                switch entry {
                case .text(let text): action = Cards.parseAction(text)
                case .list(let list): action = Cards.parseAction(paths: list)
                case .podcast(let ref): action = Cards.parseAction("podcast " + ref.podcast)
                case .options(let options):
                    if let speed = options.speed {
                        guard Speed.range.contains(speed) else {
                            problems.append("\(source): card \(id): a speed must be from 0.75 to 2")
                            continue
                        }
                        speeds[id] = speed
                    }
                    switch options.play {
                    case .text(let text): action = Cards.parseAction(text)
                    case .list(let list): action = Cards.parseAction(paths: list)
                    case .options, .podcast: action = .failure(CardMapError("options inside options"))
                    }
                    if case .success(let a) = action, case .play = a {} else if case .success = action {
                        problems.append("\(source): card \(id): only an entry that plays takes options")
                        continue
                    }
                }
                switch action {
                case .success(let a):
                    if case .play(let paths) = a, paths.contains(where: { $0.contains("\0") }) {
                        problems.append("\(source): card \(id): a path holds a NUL byte")
                    } else {
                        map[id] = a
                    }
                case .failure(let e): problems.append("\(source): card \(id): \(e.message)")
                }
            }
            return problems.isEmpty ? .success(CardMap(map, speeds: speeds)) : .failure(CardMapError(problems.joined(separator: "\n")))
        }
    }

    static func entries(_ bytes: [UInt8], source: String) -> Result<[String: Entry], CardMapError> {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .success([:]) }
        if let problem = JSONText.problem(bytes) { return .failure(CardMapError("\(source): not valid JSON (\(problem))")) }
        do {
            return .success(try JSONDecoder().decode([String: Entry].self, from: Data(bytes)))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            return .failure(CardMapError("\(source): not valid JSON (\(context.debugDescription))"))
        } catch {
            return .failure(CardMapError("\(source): must be an object of card id → path, list of paths, command or "
                                         + "{\"play\": path, \"speed\": N}, like {\"0012345678\": \"/music/Peppa\", \"0099\": \"toggle\"}"))
        }
    }

    /// Reads the map at `path`: an absent file is an empty map (no card known yet).
    public static func load(_ path: String) -> Result<CardMap, CardMapError> {
        switch read(path) {
        case .success(let bytes): return parse(bytes ?? [], source: path)
        case .failure(let e): return .failure(e)
        }
    }

    /// The file's bytes, nil when there is none.
    static func read(_ path: String) -> Result<[UInt8]?, CardMapError> {
        do { return .success(try readFile(path, limit: maxBytes)) } catch {
            if error.errno == ENOENT { return .success(nil) }
            return .failure(CardMapError("\(path): \(error)"))
        }
    }

    /// Sets card `id`'s entry to `value` (a path or a command, checked as the map checks it) and
    /// writes the map atomically: a new file created with O_EXCL beside it, written, fsynced,
    /// renamed over the map, and the folder fsynced. Other entries are kept as they were written;
    /// a map with problems is not touched (the person editing it must fix it first).
    public static func assign(id rawID: String, value: String, path: String) throws(CardMapError) {
        try update(id: rawID, value: value, path: path)
    }

    /// Takes card `id` off the map, written as `assign` writes it; an error when it is not there.
    public static func remove(id rawID: String, path: String) throws(CardMapError) {
        try update(id: rawID, value: nil, path: path)
    }

    /// `assign` (a value) or `remove` (nil).
    static func update(id rawID: String, value: String?, path: String) throws(CardMapError) {
        guard let id = Cards.normalisedID(rawID) else {
            throw CardMapError("a card id must be 1-\(Cards.maxIDLength) letters and digits")
        }
        if let value, case .failure(let e) = Cards.parseAction(value) { throw e }
        var entries: [String: Entry]
        switch read(path) {
        case .success(let bytes):
            switch CardMapFile.entries(bytes ?? [], source: path) {
            case .success(let e): entries = e
            case .failure(let e): throw CardMapError("\(e.message); fix it before assigning")
            }
        case .failure(let e): throw e
        }
        if case .failure(let e) = parse(try encode(entries), source: path) { throw CardMapError("\(e.message)\nfix it before assigning") }
        // The same card written another way ("00ab" for "00AB") is replaced, not doubled.
        let before = entries.count
        for key in entries.keys where Cards.normalisedID(key) == id { entries[key] = nil }
        if let value {
            entries[id] = .text(value[...].trimmingSpacesForCards())
        } else if entries.count == before {
            throw CardMapError("card \(id) is not on the map")
        }
        let bytes = try encode(entries)
        do { try writeExclusive(bytes, to: path) } catch { throw CardMapError("\(path): \(error)") }
    }

    private static func encode(_ entries: [String: Entry]) throws(CardMapError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do { return Array(try encoder.encode(entries)) + [0x0A] } catch { throw CardMapError("cannot encode the map: \(error)") }
    }

    /// Writes `bytes` over `path` through a temporary file that no one else can have made.
    static func writeExclusive(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let folder = Paths.directory(path)
        let (tempPath, opened) = try createTemporary(beside: path, fallbackName: "cards.json")
        do {
            var offset = 0
            while offset < bytes.count {
                let n = try sys("write", tempPath) { bytes.withUnsafeBytes { write(opened, $0.baseAddress! + offset, $0.count - offset) } }
                offset += n
            }
            try sys("fsync", tempPath) { Int(fsync(opened)) }
            try sys("close", tempPath) { Int(close(opened)) }
        } catch {
            close(opened)
            unlink(cPath(tempPath))
            throw error
        }
        do { try sys("rename", "\(tempPath) → \(path)") { Int(rename(cPath(tempPath), cPath(path))) } } catch {
            unlink(cPath(tempPath))
            throw error
        }
        let dirfd = open(cPath(folder), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirfd >= 0 {
            fsync(dirfd)
            close(dirfd)
        }
    }
}

extension Substring {
    func trimmingSpacesForCards() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

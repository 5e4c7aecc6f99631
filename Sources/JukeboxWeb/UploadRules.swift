// SPDX-License-Identifier: MIT
import JukeboxCore

/// The pure decisions of an upload (docs/WEB.md, "Upload"), table-tested in JukeboxWebTests: the
/// name a file may take in the music folders, and the limits. The file system work is `UploadSink`.
public enum UploadRules {
    /// Why an upload is refused: the HTTP status and the words the page shows.
    public struct Refusal: Error, Equatable, Sendable {
        public var status: Int
        public var error: String
        public init(_ status: Int, _ error: String) {
            self.status = status
            self.error = error
        }
    }

    /// The limits: per file, in all (the uploads in progress together), at once, and the room
    /// the disk keeps free after an upload.
    public struct Limits: Equatable, Sendable {
        public var maxFileBytes: Int64 = 1 << 30
        public var maxTotalBytes: Int64 = 2 << 30
        public var maxAtOnce = 3
        public var reserveBytes: Int64 = 64 << 20
        public init() {}
    }

    /// The longest name, folders included, in bytes; a component's longest (Linux's NAME_MAX);
    /// the deepest folder path a name may carry (`Album/CD1/01.flac` is two folders).
    public static let maxNameBytes = 1024
    public static let maxComponentBytes = 255
    public static let maxFolders = 8

    /// The parts of `name` (folders under the target folder, then the file's name) when it is a
    /// name an upload may take: valid UTF-8; `/` only between parts (a folder upload keeps its
    /// relative path), no empty part, no `.` or `..`, no hidden part (a leading dot: the library
    /// never lists those, and the upload's own temporary files are hidden); no control character
    /// (C0, DEL, C1), no backslash; at most `maxNameBytes` in all and `maxComponentBytes` a part;
    /// the file's name ends in an extension the player lists (`Library.isAudio`).
    public static func nameParts(_ bytes: [UInt8]) -> Result<[String], Refusal> {
        guard !bytes.isEmpty else { return .failure(Refusal(400, "the file has no name")) }
        guard bytes.count <= maxNameBytes else { return .failure(Refusal(400, "the name is longer than \(maxNameBytes) bytes")) }
        guard let name = String(validating: bytes, as: UTF8.self) else { return .failure(Refusal(400, "the name is not valid UTF-8")) }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\\" }) else {
            return .failure(Refusal(400, "the name has a control character or a backslash"))
        }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty) else { return .failure(Refusal(400, "the name has an empty folder (a leading, trailing or double slash)")) }
        guard !parts.contains(where: { $0 == "." || $0 == ".." }) else { return .failure(Refusal(400, "the name may not contain . or .. folders")) }
        guard !parts.contains(where: { $0.hasPrefix(".") }) else { return .failure(Refusal(400, "hidden names (a leading dot) are not taken")) }
        guard !parts.contains(where: { $0.utf8.count > maxComponentBytes }) else {
            return .failure(Refusal(400, "a part of the name is longer than \(maxComponentBytes) bytes"))
        }
        guard parts.count - 1 <= maxFolders else { return .failure(Refusal(400, "more than \(maxFolders) folders deep")) }
        guard Library.isAudio(parts[parts.count - 1]) else {
            return .failure(Refusal(415, "not an audio file name the player lists (" + Library.audioExtensions.sorted().joined(separator: ", ") + ")"))
        }
        return .success(parts)
    }

    /// The declared length of the body, checked before a byte of it is read: present (a chunked
    /// body of unknown length is refused), digits only, above zero, within the file limit.
    public static func length(_ header: String?, limits: Limits) -> Result<Int64, Refusal> {
        guard let header, !header.isEmpty else { return .failure(Refusal(411, "an upload needs a Content-Length")) }
        guard header.utf8.count <= 19, header.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int64(header) else {
            return .failure(Refusal(400, "not a usable Content-Length"))
        }
        guard length > 0 else { return .failure(Refusal(400, "the file is empty")) }
        guard length <= limits.maxFileBytes else {
            return .failure(Refusal(413, "the file is larger than the limit of \(megabytes(limits.maxFileBytes)) per file"))
        }
        return .success(length)
    }

    /// Whether one more upload of `length` bytes may start beside `running` others of
    /// `runningBytes` in all: at most `maxAtOnce` at once (429), at most `maxTotalBytes` together (413).
    public static func admit(length: Int64, running: Int, runningBytes: Int64, limits: Limits) -> Refusal? {
        guard running < limits.maxAtOnce else { return Refusal(429, "\(limits.maxAtOnce) uploads are already running: try again when one is done") }
        guard runningBytes + length <= limits.maxTotalBytes else {
            return Refusal(413, "the uploads running now and this one are over the limit of \(megabytes(limits.maxTotalBytes)) in all")
        }
        return nil
    }

    /// Whether the disk has room for `length` bytes beside the `reservedBytes` of uploads running,
    /// keeping `reserveBytes` free (the player's state file and the system need some).
    public static func space(free: Int64, length: Int64, reservedBytes: Int64, limits: Limits) -> Refusal? {
        guard free - reservedBytes - limits.reserveBytes >= length else {
            return Refusal(507, "not enough free space: \(megabytes(max(0, free - reservedBytes - limits.reserveBytes))) usable, the file is \(megabytes(length))")
        }
        return nil
    }

    /// The temporary name of an upload (hidden: the library never lists it): `.upload-HEX.part`.
    public static func temporaryName(_ hex: String) -> String { ".upload-" + hex + ".part" }

    /// Whether `name` is a temporary name `temporaryName` makes (what the clean-up at start removes, and nothing else).
    public static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix(".upload-"), name.hasSuffix(".part") else { return false }
        let hex = name.dropFirst(".upload-".count).dropLast(".part".count)
        return hex.count == 32 && hex.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    /// "12.5 MB" (decimal megabytes, one decimal).
    static func megabytes(_ bytes: Int64) -> String {
        let tenths = (bytes + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

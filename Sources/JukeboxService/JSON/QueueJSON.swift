// SPDX-License-Identifier: MIT
import JukeboxCore

/// `queue --json`: the whole queue as one object for the web face,
/// `{"entries":[{"position":1,"path":…,"title":…,"artist":…,"album":…,"seconds":212.5}],"current":1}`
/// (positions 1-based, like `queue` and `play N`; `current` null when nothing is current).
///
/// One reply line, bounded: entries stop once the text reaches `limit` bytes, and then
/// `"truncated":true` says so (a queue of a whole library is tens of thousands of entries).
public enum QueueJSON {
    /// The bound of one reply, in bytes.
    public static let defaultLimit = 1 << 20

    public static func text(_ state: State, limit: Int = defaultLimit) -> String {
        let q = JSONText.quoted
        func str(_ s: String?) -> String { s.map(q) ?? "null" }
        func view(_ s: String?) -> String? {
            guard let s, s.unicodeScalars.contains(where: DisplayText.isEscapedByte) else { return s }
            return String(String.UnicodeScalarView(s.unicodeScalars.map { DisplayText.isEscapedByte($0) ? DisplayText.replacement : $0 }))
        }
        var entries: [String] = []
        var size = 0
        var truncated = false
        for (i, track) in state.queue.enumerated() {
            let info = track.info
            let seconds = info.duration.map { $0.isFinite ? String($0) : "null" } ?? "null"
            let entry = "{\"position\":\(i + 1),\"path\":" + str(view(info.path)) + ",\"title\":" + str(view(info.title))
                + ",\"artist\":" + str(view(info.artist)) + ",\"album\":" + str(view(info.album)) + ",\"seconds\":" + seconds + "}"
            size += entry.utf8.count + 1
            if size > limit {
                truncated = true
                break
            }
            entries.append(entry)
        }
        let current = state.currentTrack.flatMap { t in state.queue.firstIndex { $0.id == t.id } }.map { String($0 + 1) } ?? "null"
        return "{\"entries\":[" + entries.joined(separator: ",") + "],\"current\":" + current + (truncated ? ",\"truncated\":true" : "") + "}"
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// `queue --json [FROM]`: a page of the queue as one object for the web face,
/// `{"entries":[{"position":1,"path":…,"title":…,"artist":…,"album":…,"seconds":212.5}],"current":1,"total":2}`
/// (positions 1-based, like `queue` and `play N`; `current` null when nothing is current; `total`
/// the queue's length).
///
/// One reply line, paged (`JSONPage`): the entries from position FROM that fit in `budget` bytes,
/// the whole object counted, and `"next":N` when more follow (ask `queue --json N` for them). An
/// entry longer than a page on its own comes first on its page, its text cut and `"shortened"` saying why.
public enum QueueJSON {
    public static func text(_ state: State, from: Int = 1, budget: Int = JSONPage.budget) -> String {
        let q = JSONText.quoted
        func str(_ s: String?) -> String { s.map(q) ?? "null" }
        func view(_ s: String?) -> String? {
            guard let s, s.unicodeScalars.contains(where: DisplayText.isEscapedByte) else { return s }
            return String(String.UnicodeScalarView(s.unicodeScalars.map { DisplayText.isEscapedByte($0) ? DisplayText.replacement : $0 }))
        }
        let queue = state.queue
        let current = state.currentTrack.flatMap { t in queue.firstIndex { $0.id == t.id } }.map { String($0 + 1) } ?? "null"
        let head = "{\"entries\":["
        let tail = "],\"current\":" + current + ",\"total\":\(queue.count)"
        // The room for the entries: the budget less the rest of the object, `next` at its longest.
        let room = budget - head.utf8.count - tail.utf8.count - ",\"next\":\(queue.count)}".utf8.count
        // A shortened entry's four text fields at most this many scalars each (6 bytes each in JSON at most).
        let clip = max(16, (room - 200) / 24)
        func entry(_ i: Int, shortened: Bool) -> String {
            let info = queue[i].info
            let seconds = info.duration.map { $0.isFinite ? String($0) : "null" } ?? "null"
            func field(_ s: String?) -> String { str(shortened ? JSONPage.clipped(view(s), clip) : view(s)) }
            return "{\"position\":\(i + 1),\"path\":" + field(info.path) + ",\"title\":" + field(info.title)
                + ",\"artist\":" + field(info.artist) + ",\"album\":" + field(info.album) + ",\"seconds\":" + seconds
                + (shortened ? ",\"shortened\":" + q(JSONPage.shortenedReason) : "") + "}"
        }
        let page = JSONPage.cut(count: queue.count, from: from - 1, room: room,
                                entry: { entry($0, shortened: false) }, shortened: { entry($0, shortened: true) })
        return head + page.entries.joined(separator: ",") + tail + (page.next.map { ",\"next\":\($0 + 1)" } ?? "") + "}"
    }
}

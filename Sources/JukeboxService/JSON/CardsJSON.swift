// SPDX-License-Identifier: MIT
import JukeboxCore

/// `cards --json` and `bookmarks --json`: the cards map and the bookmarks as one JSON object each,
/// for the web face's Cards and Bookmarks pages. One reply line each, bounded: entries stop once
/// they reach `limit` bytes, and `"truncated":true` says so. The limit keeps the whole line (the
/// settings, a waiting value of up to a control line) under the control socket's 64 KiB for one
/// reply line (`ControlSocket.maxOutput`), which would replace a longer one by an error.
///
/// `{"cards":[{"id":"0012345678","paths":["/music/A"]},{"id":"0099","command":"toggle"}],
///   "secondSwipe":"toggle","onRemove":"none","sameCardDelay":1,"newCard":null,"assignNext":null}`
/// (cards sorted by id; `paths` for what plays, `command` for a command, `sleep 30` included).
public enum CardsJSON {
    /// The bound of one reply, in bytes.
    public static let defaultLimit = ControlSocket.maxOutput - (8 << 10)

    public static func text(_ state: State, limit: Int = defaultLimit) -> String {
        let q = JSONText.quoted
        var entries: [String] = []
        var size = 0
        var truncated = false
        for id in state.cards.map.entries.keys.sorted() {
            guard let action = state.cards.map.entries[id] else { continue }
            let entry = "{\"id\":" + q(id) + "," + describe(action) + "}"
            size += entry.utf8.count + 1
            if size > limit {
                truncated = true
                break
            }
            entries.append(entry)
        }
        let settings = state.settings.cards
        // In parts: one long `+` chain is more than Swift 6.0's type checker takes in time.
        let list: String = "{\"cards\":[" + entries.joined(separator: ",") + "]" + (truncated ? ",\"truncated\":true" : "")
        let swipes: String = ",\"secondSwipe\":" + q(settings.secondSwipe.rawValue) + ",\"onRemove\":" + q(settings.onRemove.rawValue)
        let delay: String = ",\"sameCardDelay\":" + number(settings.sameCardDelay)
        let newCard: String = ",\"newCard\":" + (state.cards.lastUnknown.map(q) ?? "null")
        return list + swipes + delay + newCard + ",\"assignNext\":" + assignment(state.cards.assignNext) + "}"
    }

    /// A waiting or finished `card assign --next` as a JSON object (`null` without one):
    /// `{"stage":"waiting|writing|done|failed","value":…,"card":…|null,"error":…|null}`.
    public static func assignment(_ next: NextCardAssignment?) -> String {
        guard let next else { return "null" }
        let q = JSONText.quoted
        let card: String = next.card.map(q) ?? "null"
        let error: String = next.error.map { q(view($0)) } ?? "null"
        return "{\"stage\":" + q(next.stage.rawValue) + ",\"value\":" + q(view(next.value)) + ",\"card\":" + card + ",\"error\":" + error + "}"
    }

    /// An entry's `paths` or `command` field(s).
    static func describe(_ action: CardAction) -> String {
        let q = JSONText.quoted
        switch action {
        case .play(let paths):
            return "\"paths\":[" + paths.map { q(view($0)) }.joined(separator: ",") + "]"
        case .command(let button):
            // The map's word for it (the longest of its spellings: `previous`, not `prev`).
            let word = Cards.commands.filter { $0.value == button }.map(\.key).sorted().max { $0.count < $1.count } ?? "\(button)"
            return "\"command\":" + q(word)
        case .sleep(let request):
            let words: String
            switch request {
            case .after(let seconds)?: words = "sleep " + number(seconds / 60)
            case let other?: words = other.words
            case nil: words = "sleep off"
            }
            return "\"command\":" + q(words)
        case .podcast(let name):
            return "\"podcast\":" + q(view(name))
        }
    }

    /// `bookmarks --json`: `{"bookmarks":[{"paths":["/music/A"],"track":"/music/A/02.flac","position":73.5}]}`,
    /// the one played last first.
    public static func bookmarks(_ state: State, limit: Int = defaultLimit) -> String {
        let q = JSONText.quoted
        var entries: [String] = []
        var size = 0
        var truncated = false
        for mark in state.bookmarks.reversed() {
            let entry = "{\"paths\":[" + mark.paths.map { q(view($0)) }.joined(separator: ",") + "],\"track\":" + q(view(mark.track))
                + ",\"position\":" + number(mark.position) + "}"
            size += entry.utf8.count + 1
            if size > limit {
                truncated = true
                break
            }
            entries.append(entry)
        }
        return "{\"bookmarks\":[" + entries.joined(separator: ",") + "]" + (truncated ? ",\"truncated\":true" : "")
            + ",\"mode\":" + q(state.settings.bookmarks.rawValue) + "}"
    }

    static func number(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// The escaped bytes of a name that is not UTF-8 as U+FFFD (controls are escaped by the JSON).
    static func view(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: DisplayText.isEscapedByte) else { return s }
        return String(String.UnicodeScalarView(s.unicodeScalars.map { DisplayText.isEscapedByte($0) ? DisplayText.replacement : $0 }))
    }
}

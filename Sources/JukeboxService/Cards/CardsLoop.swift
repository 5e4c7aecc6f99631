// SPDX-License-Identifier: MIT
import JukeboxCore

extension OffLoopJobs {
    /// `Command.loadCard`: the card's paths are read by the tag reader (never on the loop) and
    /// come back as `Event.cardTracks` through `deliver`. Nil once started; a player that cannot
    /// load files gets the event that says so at once (to queue: this runs while the loop
    /// carries out a command).
    func readCard(_ card: String, paths: [String], deliver: @escaping (Event) -> Void) -> Event? {
        let started = read(paths) { tracks, messages, marked in
            deliver(.cardTracks(card: card, tracks: tracks, messages: messages, marked: marked))
        }
        return started ? nil : .cardTracks(card: card, tracks: [], messages: ["this player cannot load files"])
    }
}

extension CardMapWorker {
    /// A read or write of the cards map finished: a new map goes to the core (`dispatch`) before
    /// whoever waits for it hears back; a map that could not be read is logged and reported and
    /// the previous one kept.
    func settle(_ report: Report, dispatch: (Event) -> Void, log: Log, status: StatusSink) {
        if let map = report.map {
            dispatch(.cardsLoaded(map))
            log.info("cards map \(path): \(map.entries.count) card\(map.entries.count == 1 ? "" : "s")")
        } else if let problem = report.problem, report.assignment == nil {
            for line in problem.split(separator: "\n") { log.warning(String(line)) }
            status.report("cards map not loaded, keeping the previous one: " + (problem.split(separator: "\n").first.map(String.init) ?? problem))
        }
        settled(report)
    }

    /// `card assign [ID] VALUE`: the reply once the map on disk has it (and the new map is in
    /// force). `lastUnknown` is the card to assign when no id is given.
    func assign(id: String?, value: String, lastUnknown: String?, _ reply: @escaping ([String]) -> Void) {
        guard let card = id.flatMap(Cards.normalisedID) ?? (id == nil ? lastUnknown : nil) else {
            return reply([id == nil ? "error: no new card to assign: swipe one, or give its id" : "error: a card id is 1-\(Cards.maxIDLength) letters and digits"])
        }
        if case .failure(let e) = Cards.parseAction(value) { return reply(["error: " + e.message]) }
        assign(id: card, value: value) { error in
            reply([error.map { "error: " + $0.split(separator: "\n").joined(separator: "; ") } ?? "ok card \(card) is \(value)"])
        }
    }

    /// `card delete ID`: the reply once the map on disk no longer has it.
    func delete(id: String, _ reply: @escaping ([String]) -> Void) {
        assign(id: id, value: nil) { error in
            reply([error.map { "error: " + $0.split(separator: "\n").joined(separator: "; ") } ?? "ok card \(id) deleted"])
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

extension Runtime {
    /// `Command.loadCard`: the card's paths are read by the tag reader (never on the loop) and
    /// come back as `Event.cardTracks`; a player that cannot load files says so at once.
    func loadCard(_ card: String, paths: [String]) {
        let started = readSource(paths) { [weak self] tracks, messages, marked in
            self?.dispatch(.cardTracks(card: card, tracks: tracks, messages: messages, marked: marked))
        }
        // Queued, not dispatched: this runs while a command of the loop is carried out.
        if !started { pending.append(.cardTracks(card: card, tracks: [], messages: ["this player cannot load files"])) }
    }
}

extension Runtime {
    /// Starts watching the cards map at `path` (read off the loop; the first map arrives as an
    /// event like every later one).
    public func watchCards(path: String) {
        cards = CardMapWorker(path: path, mailbox: mailbox)
    }

    /// A read or write of the cards map finished.
    func settleCards(_ report: CardMapWorker.Report) {
        if let map = report.map {
            dispatch(.cardsLoaded(map))
            log.info("cards map \(cards?.path ?? ""): \(map.entries.count) card\(map.entries.count == 1 ? "" : "s")")
        } else if let problem = report.problem, report.assignment == nil {
            for line in problem.split(separator: "\n") { log.warning(String(line)) }
            status.report("cards map not loaded, keeping the previous one: " + (problem.split(separator: "\n").first.map(String.init) ?? problem))
        }
        cards?.settled(report)
    }

    /// `card assign [ID] VALUE`: the reply once the map on disk has it (and the new map is in force).
    func assignCard(id: String?, value: String, _ reply: @escaping ([String]) -> Void) -> Bool {
        guard let cards else { return false }
        guard let card = id.flatMap(Cards.normalisedID) ?? (id == nil ? state.cards.lastUnknown : nil) else {
            reply([id == nil ? "error: no new card to assign: swipe one, or give its id" : "error: a card id is 1-\(Cards.maxIDLength) letters and digits"])
            return true
        }
        if case .failure(let e) = Cards.parseAction(value) {
            reply(["error: " + e.message])
            return true
        }
        cards.assign(id: card, value: value) { error in
            reply([error.map { "error: " + $0.split(separator: "\n").joined(separator: "; ") } ?? "ok card \(card) is \(value)"])
        }
        return true
    }
}

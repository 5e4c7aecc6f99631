// SPDX-License-Identifier: MIT

// Cards: a swipe plays what the map says, a second swipe of the card already playing does what
// `CardSettings.secondSwipe` says, an unknown card is named so it can be assigned.
extension State {
    mutating func card(_ event: Event, _ step: inout Step) {
        switch event {
        case .cardRead(let raw, let at):
            guard let id = Cards.normalisedID(raw) else {
                step.commands.append(.report("card reader: ignored an id that is not 1-\(Cards.maxIDLength) letters and digits"))
                return
            }
            // The card whose removal paused its tracks, put back: they go on, whatever the delay.
            // Played again by hand meanwhile, putting it back changes nothing (it is no swipe).
            if let paused = cards.pausedByRemoval {
                cards.pausedByRemoval = nil
                if paused == id, phase == .paused || phase == .playing, activeCardQueued(id) != nil {
                    cards.lastRead = (id, at)
                    if phase == .paused {
                        message = nil
                        apply(.play, &step)
                    }
                    return
                }
            }
            // Readers repeat while a card lies on them, and a swipe may be read twice: reads of
            // the same id closer together than `sameCardDelay` are one swipe, however long it lasts.
            if let last = cards.lastRead, last.id == id, at >= last.at, at - last.at < settings.cards.sameCardDelay {
                cards.lastRead = (id, at)
                return
            }
            cards.lastRead = (id, at)
            swipe(id, &step)
        case .cardRemoved(let raw, _):
            guard settings.cards.onRemove == .pause, let id = Cards.normalisedID(raw) else { return }
            // A card taken away before its folder was read: it is not wanted any more.
            if cards.loading == id {
                cards.loading = nil
                return
            }
            // Only the card whose tracks are playing pauses them; paused by hand or stopped,
            // the player stays as it is, and putting the card back is a swipe.
            guard phase == .playing, activeCardQueued(id) != nil else { return }
            apply(.pause, &step)
            if phase == .paused { cards.pausedByRemoval = id }
        case .cardsLoaded(let map):
            cards.map = map
            if let unknown = cards.lastUnknown, map.entries[unknown] != nil { cards.lastUnknown = nil }
        case .cardTracks(let id, let tracks, let messages, let marked):
            // Only the card swiped last counts: an earlier card's folder read late must not win.
            guard cards.loading == id else { return }
            cards.loading = nil
            for line in messages { step.commands.append(.report("card \(id): \(line)")) }
            guard !tracks.isEmpty else {
                message = "card \(id): nothing to play"
                step.commands.append(.report("card \(id): nothing to play"))
                return
            }
            message = nil
            let first = nextTrackID
            // The card's paths are the source its bookmark is kept under; its speed, the queue's.
            if case .play(let paths)? = cards.map.entries[id] {
                step.activity = true
                failuresInARow = 0
                replaceQueue(tracks, from: QueueSource(paths: paths, marked: marked), speed: cards.map.speeds[id], &step)
            } else {
                apply(.replaceQueue(tracks), &step)
            }
            cards.active = ActiveCard(id: id, tracks: first..<nextTrackID)
        case .cardAssignNext(let value):
            step.activity = true
            if cards.assignNext?.stage == .waiting || cards.assignNext?.stage == .writing, message == State.swipeNow { message = nil }
            guard let value else {
                // A write already under way finishes; only a wait is cancelled.
                if cards.assignNext?.stage != .writing { cards.assignNext = nil }
                step.commands.append(.cancelTimer(.cardAssign))
                return
            }
            cards.assignNext = NextCardAssignment(value: value)
            message = State.swipeNow
            step.commands.append(.startTimer(.cardAssign, after: State.cardAssignWait))
        case .timerFired(.cardAssign, _):
            guard cards.assignNext?.stage == .waiting else { return }
            cards.assignNext = nil
            if message == State.swipeNow { message = nil }
            step.commands.append(.report("no card swiped within \(Int(State.cardAssignWait)) s: the assignment is dropped"))
        case .cardAssigned(let card, let value, let error):
            guard var next = cards.assignNext, next.stage == .writing, next.card == card, next.value == value else { return }
            next.stage = error == nil ? .done : .failed
            next.error = error
            cards.assignNext = next
            if let error {
                message = "card \(card) not assigned: " + (error.split(separator: "\n").first.map(String.init) ?? error)
                step.commands.append(.report("card \(card) not assigned: " + error.split(separator: "\n").joined(separator: "; ")))
            } else {
                message = "card \(card) assigned"
                step.commands.append(.report("card \(card) is \(value)"))
            }
        default:
            break
        }
    }

    /// The queue index of the first track of card `id` still queued, when it is the active card.
    private func activeCardQueued(_ id: String) -> Int? {
        guard let active = cards.active, active.id == id else { return nil }
        return queue.firstIndex(where: { active.tracks.contains($0.id) })
    }

    /// One swipe of a known or unknown card.
    private mutating func swipe(_ id: String, _ step: inout Step) {
        // `card assign --next` waits for this swipe: the card gets the value and plays nothing.
        if var next = cards.assignNext, next.stage == .waiting {
            next.card = id
            next.stage = .writing
            cards.assignNext = next
            if message == State.swipeNow { message = nil }
            step.commands.append(.cancelTimer(.cardAssign))
            step.commands.append(.assignCard(card: id, value: next.value))
            return
        }
        guard let action = cards.map.entries[id] else {
            cards.lastUnknown = id
            message = "new card \(id)"
            step.commands.append(.report("new card \(id): assign it with jukebox ctl card assign PATH|COMMAND"))
            return
        }
        switch action {
        case .command(let command):
            message = nil
            perform(command, &step)
        case .sleep(let request):
            setSleepTimer(request, &step)
        case .podcast(let name):
            playPodcast(name, &step)
        case .play(let paths):
            if let active = cards.active, active.id == id, phase != .stopped,
               let first = queue.firstIndex(where: { active.tracks.contains($0.id) }) {
                secondSwipe(entry: first, &step)
                return
            }
            // A stopped card (played to its end, or stopped) starts afresh: its folder is read
            // again, so what was added to it since is there.
            cards.loading = id
            step.commands.append(.loadCard(card: id, paths: paths))
        }
    }

    /// The card already playing was swiped again; `entry` is its first track still queued.
    private mutating func secondSwipe(entry: Int, _ step: inout Step) {
        switch settings.cards.secondSwipe {
        case .toggle: apply(.togglePlayPause, &step)
        case .restart: apply(.playEntry(at: entry), &step)
        case .next: apply(.next, &step)
        case .none: break
        }
    }
}

extension State {
    /// What the status and the display say while an assignment waits for a card.
    static let swipeNow = "swipe a card now"
    /// How long `card assign --next` waits for a card (seconds).
    public static let cardAssignWait: Double = 120
}

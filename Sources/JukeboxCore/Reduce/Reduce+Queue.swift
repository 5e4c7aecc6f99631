// SPDX-License-Identifier: MIT

// The queue and the modes that shape its play order: add, remove, move, clear, shuffle, repeat,
// volume.
extension State {
    mutating func queueChange(_ event: Event, _ step: inout Step) {
        switch event {
        case .add(let infos):
            guard !infos.isEmpty else { return }
            let added = makeTracks(infos)
            queue += added
            // New entries play after everything already queued, shuffled or not.
            order += shuffle ? added.map(\.id).shuffled(seed: derivedSeed()) : added.map(\.id)
            queueRevision += 1
        case .replaceQueue(let infos):
            replaceQueue(infos, from: nil, &step)
        case .loadSource(let source, let infos):
            replaceQueue(infos, from: source, &step)
        case .remove(let index):
            guard queue.indices.contains(index) else {
                message = "no queue entry \(index + 1)"
                return
            }
            remove(at: index, &step)
        case .move(let from, let to):
            guard queue.indices.contains(from), queue.indices.contains(to) else {
                message = "no queue entry \(max(from, to) + 1)"
                return
            }
            guard from != to else { return }
            reorder { $0.insert($0.remove(at: from), at: to) }
        case .moveRange(let range, let to):
            guard !range.isEmpty, range.upperBound <= queue.count, to >= 0, to + range.count <= queue.count else {
                message = "no queue entries \(range.lowerBound + 1)-\(range.upperBound) to move to \(to + 1)"
                return
            }
            guard range.lowerBound != to else { return }
            reorder { queue in
                let moved = Array(queue[range])
                queue.removeSubrange(range)
                queue.insert(contentsOf: moved, at: to)
            }
        case .insert(let infos, let index):
            guard (0...queue.count).contains(index) else {
                message = "no queue entry \(index + 1) to insert at"
                return
            }
            guard !infos.isEmpty else { return }
            let added = makeTracks(infos)
            guard shuffle else { return reorder { $0.insert(contentsOf: added, at: index) } }
            queue.insert(contentsOf: added, at: index)
            // "Play these next": right after the current track in play order, in their own order.
            order.insert(contentsOf: added.map(\.id), at: currentTrack == nil ? order.count : cursor! + 1)
            queueRevision += 1
        case .shuffleEntries(let range, let seed):
            guard range.lowerBound >= 0, range.upperBound <= queue.count else {
                message = "no queue entries \(range.lowerBound + 1)-\(range.upperBound) to shuffle"
                return
            }
            guard range.count > 1 else { return }
            let current = currentTrack?.id
            reorder { queue in
                var part = Array(queue[range])
                // As MPD does: the current track leads the range, so what follows it is the shuffle.
                if let c = current, let i = part.firstIndex(where: { $0.id == c }) {
                    let head = part.remove(at: i)
                    part = [head] + part.shuffled(seed: seed)
                } else {
                    part = part.shuffled(seed: seed)
                }
                queue.replaceSubrange(range, with: part)
            }
        case .clear:
            noteBookmark()
            source = nil
            bookmarkReset = nil
            stop(&step)
            musicMissing = nil
            usbFilling = nil
            queue = []
            order = []
            cursor = nil
            queueRevision += 1
        default:
            break
        }
    }

    /// The queue becomes `infos`, loaded from `newSource` (nil: by hand). The source left keeps
    /// its place as its bookmark; the new one resumes at its own, if it has one whose track is
    /// still there. It plays at `speed` (a card's) or else at its folders' speeds.
    mutating func replaceQueue(_ infos: [TrackInfo], from newSource: QueueSource?, speed: Double? = nil, startAt: Double? = nil,
                               _ step: inout Step) {
        noteBookmark()
        stop(&step)
        queueSpeed = speed
        // Other music: whether it is there shows when it plays.
        musicMissing = nil
        // A stick still being read appends nothing to other music.
        usbFilling = nil
        queue = makeTracks(infos)
        queueRevision += 1
        order = shuffle ? queue.map(\.id).shuffled(seed: derivedSeed()) : queue.map(\.id)
        cursor = order.isEmpty ? nil : 0
        // Only a source that keeps a bookmark is remembered: nothing else needs it.
        source = newSource.flatMap { keepsBookmark($0) ? $0 : nil }
        bookmarkReset = nil
        if let newSource, let resume = resumePoint(for: newSource) {
            cursor = resume.cursor
            position = resume.position
        }
        // A podcast's first episode at its own place (its queue is never shuffled apart from it:
        // `order` starts wherever shuffle put it, so the place is of the entry the cursor is on).
        if let startAt, let first = queue.first, !shuffle, cursor.map({ order[$0] }) == first.id { position = startAt }
        if !order.isEmpty { play(&step) }
    }

    // Changes the queue's order. Shuffled, the play order is its own and stays; not shuffled,
    // the play order is the queue's, and the cursor follows the current entry.
    private mutating func reorder(_ change: (inout [Track]) -> Void) {
        let current = currentTrack?.id
        change(&queue)
        if !shuffle {
            order = queue.map(\.id)
            cursor = current.flatMap { order.firstIndex(of: $0) }
        }
        queueRevision += 1
    }

    mutating func remove(at index: Int, _ step: inout Step) {
        let id = queue[index].id
        let wasCurrent = currentTrack?.id == id
        queue.remove(at: index)
        let orderIndex = order.firstIndex(of: id)!
        order.remove(at: orderIndex)
        queueRevision += 1
        guard let cur = cursor else { return }
        if orderIndex < cur { cursor = cur - 1; return }
        guard wasCurrent else { return }
        // The entry after the removed one takes its place, in the same phase.
        if order.isEmpty || cur >= order.count {
            endOfQueue(&step)
            return
        }
        go(to: cur, &step)
        if loaded?.trackID == id { unload(&step) }
    }

    mutating func modeChange(_ event: Event, _ step: inout Step) {
        switch event {
        case .setVolume(let v): personSetsVolume(v, &step)
        case .changeVolume(let delta): personSetsVolume(volume + delta, &step)
        case .toggleShuffle(let seed):
            modeChange(.setShuffle(!shuffle, seed: seed), &step)
        case .setShuffle(let on, let seed):
            guard on != shuffle else { return }
            shuffle = on
            let current = currentTrack?.id
            if on {
                shuffleSeed = seed
                let rest = queue.map(\.id).filter { $0 != current }.shuffled(seed: seed)
                order = current.map { [$0] + rest } ?? rest
                if current != nil { cursor = 0 }
            } else {
                order = queue.map(\.id)
                cursor = current.flatMap { order.firstIndex(of: $0) }
            }
            queueRevision += 1
        case .setRepeat(let mode): repeatMode = mode
        case .cycleRepeat: repeatMode = repeatMode.cycled
        default: break
        }
    }

    mutating func setVolume(_ requested: Int, _ step: inout Step) {
        let v = clampVolume(requested)
        // Show the overlay even at a limit, so a press visibly did something.
        if settings.display != nil { volumeShownUntil = now + settings.volumeOverlaySeconds }
        guard v != volume else { return }
        volume = v
        step.commands.append(.setVolume(v))
    }

    /// A volume a person asked for (a button, a knob, any face): it replaces a volume held back
    /// for an unknown time of day (`ParentalState.heldVolume`).
    mutating func personSetsVolume(_ requested: Int, _ step: inout Step) {
        parental.heldVolume = nil
        setVolume(cappedVolume(wanting: requested), &step)
    }

    func clampVolume(_ v: Int) -> Int {
        min(max(v, settings.volumeMin, 0), volumeMax)
    }

    /// `wanted` within the limits that hold now, keeping in `ParentalState.heldVolume` what a
    /// parental cap took away only because the time of day is not known.
    mutating func cappedVolume(wanting wanted: Int) -> Int {
        let capped = clampVolume(wanted)
        if wallTime == nil, capped < min(max(wanted, settings.volumeMin, 0), volumeMaxBeforeParental) {
            parental.heldVolume = parental.heldVolume ?? wanted
        }
        return capped
    }

    /// The highest volume now: the config's, lower while headphones or a Bluetooth speaker with a lower cap play,
    /// lower while a parental cap holds (`parentalVolumeCap`); never below the lowest volume a user
    /// can set.
    public var volumeMax: Int {
        var most = volumeMaxBeforeParental
        if let cap = parentalVolumeCap { most = min(most, max(cap, settings.volumeMin)) }
        return most
    }

    /// `volumeMax` without the parental caps: the config's, and the output's own (headphones',
    /// a Bluetooth speaker's) while it plays.
    var volumeMaxBeforeParental: Int {
        var most = min(settings.volumeMax, 100)
        let cap: Int?
        switch output {
        case .headphones: cap = settings.headphones?.volumeMax
        case .bluetooth: cap = settings.bluetooth?.volumeMax
        case .card: cap = nil
        }
        if let cap { most = min(most, max(cap, settings.volumeMin)) }
        return most
    }

    mutating func makeTracks(_ infos: [TrackInfo]) -> [Track] {
        infos.map { info in
            defer { nextTrackID += 1 }
            return Track(id: nextTrackID, info: info)
        }
    }

    // Later permutations derive from the shuffle seed and the queue revision, so the core
    // never needs a fresh random number outside `setShuffle`.
    func derivedSeed() -> UInt64 {
        shuffleSeed &+ UInt64(truncatingIfNeeded: queueRevision) &* 0x9E37_79B9_7F4A_7C15
    }
}

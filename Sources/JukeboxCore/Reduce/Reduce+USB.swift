// SPDX-License-Identifier: MIT

// USB sticks: a stick is a source (its mount path), so it resumes at its bookmark; pulling it
// out while it plays is missing music, which keeps the queue and the place.
extension State {
    mutating func usb(_ event: Event, _ step: inout Step) {
        switch event {
        case .usbInserted(let path):
            if usbGone == path { usbGone = nil }
            if musicMissing != nil, let track = currentTrack, Paths.isInside(track.info.path, folder: path) {
                // The stick the queue waited for is back: play on where it was.
                apply(.musicAppeared, &step)
                return
            }
            guard settings.usbAutoplay else {
                step.commands.append(.report("USB stick inserted: \(path)"))
                return
            }
            usbLoading = path
            step.commands.append(.report("USB stick inserted: \(path): reading"))
            // Read first: the folders through the one its bookmark is in, which plays at once.
            step.commands.append(.loadUSB(path: path, through: bookmarks.last(where: { $0.paths == [path] })?.track))
        case .usbRemoved(let path):
            if usbLoading == path { usbLoading = nil }
            if usbFilling == path { usbFilling = nil }
            step.commands.append(.report("USB stick removed"))
            takeBackFailuresOn(path)
            guard let track = currentTrack, Paths.isInside(track.info.path, folder: path), musicMissing == nil else { return }
            // The place as it was heard becomes the stick's bookmark before the output stops.
            noteBookmark()
            usbGone = path
            apply(.musicMissing(path), &step)
        case .usbTracks(let path, let tracks, let messages, let more):
            // Only the stick asked for last counts; one pulled out meanwhile is not played.
            guard usbLoading == path else { return }
            usbLoading = nil
            for line in messages { step.commands.append(.report("USB stick \(path): \(line)")) }
            guard !tracks.isEmpty else {
                message = "USB stick: nothing to play"
                step.commands.append(.report("USB stick \(path): nothing to play"))
                return
            }
            message = nil
            apply(.loadSource(QueueSource(paths: [path]), tracks: tracks), &step)
            usbFilling = more ? path : nil
        case .usbMoreTracks(let path, let tracks, let messages):
            // Only while the queue is still this stick's first part: a queue replaced or cleared
            // meanwhile (another stick, a card, a load, `clear`) gets nothing appended.
            guard usbFilling == path else { return }
            usbFilling = nil
            for line in messages { step.commands.append(.report("USB stick \(path): \(line)")) }
            apply(.add(tracks), &step)
        default:
            break
        }
    }

    /// Tracks that failed one after the other from a track on the stick at `path` failed because
    /// the stick was going (a read fails before the kernel lets go of the disk): the place goes
    /// back to where the first of them failed, wanting sound as it did then, as if the removal
    /// had been noticed at that moment. A run of failures that began elsewhere is left alone.
    private mutating func takeBackFailuresOn(_ path: String) {
        guard let from = failuresFrom, order.indices.contains(from.cursor),
              let track = queue.first(where: { $0.id == order[from.cursor] }),
              Paths.isInside(track.info.path, folder: path) else { return }
        cursor = from.cursor
        position = from.position
        failuresInARow = 0
        failuresFrom = nil
        message = nil
        if from.wantedSound, phase == .stopped { phase = .playing }
    }
}

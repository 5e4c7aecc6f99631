// SPDX-License-Identifier: MIT

// HTTP(S) streams (internet radio): what the stream adapter reports becomes what is shown (station
// and title as artist and title, "buffering N %", "reconnecting"), and a stream lost for longer than
// `Settings.streamGiveUp` is skipped like a file that does not play. A pause disconnects. A live
// stream refuses seeks and resumes live, not where it was paused; one the adapter reports on demand
// (an HLS playlist with ENDLIST, with its length) seeks within its length and resumes at the place,
// and so does a podcast episode played from its URL (`currentIsLive`), by range requests.
extension State {
    /// Whether the current track is a stream (by its URL).
    var currentIsStream: Bool { currentTrack.map { Library.isStreamURL($0.info.path) } ?? false }

    /// The current stream's length when its adapter reported it on demand; nil for a live
    /// stream, one that has not said yet, and a file.
    var currentOnDemandLength: Double? {
        guard let known = onDemandStream, let track = currentTrack, known.trackID == track.id, currentIsStream else { return nil }
        return known.duration
    }

    /// Whether the current track is a live stream: a stream that is neither a podcast episode nor
    /// reported on demand. An episode played from its URL is a file on a server: it starts at a
    /// place, seeks and resumes where it was paused (by range requests), as a file does.
    var currentIsLive: Bool {
        guard let track = currentTrack, Library.isStreamURL(track.info.path) else { return false }
        return !isPodcastEpisode(track.info.path) && currentOnDemandLength == nil
    }

    /// The stream status that applies to what plays now (nil for a file, or before any came).
    public var liveStream: StreamStatus? {
        guard let stream, stream.playID == loaded?.playID else { return nil }
        return stream.status
    }

    /// The current track as it is shown: for a stream, the station as the artist and what is on air
    /// as the title (the queue entry's own title until the stream names it).
    public var shownCurrentInfo: TrackInfo? {
        guard var info = currentTrack?.info else { return nil }
        if info.duration == nil, let length = currentOnDemandLength { info.duration = length }
        if let live = liveStream {
            if let title = live.title, !title.isEmpty { info.title = title }
            if let station = live.station, !station.isEmpty { info.artist = station }
        }
        return info
    }

    /// What the stream's state adds to the status line: buffering or reconnecting.
    var streamMessage: String? {
        guard let live = liveStream else { return nil }
        if live.reconnectingFor != nil {
            let why: String = live.lastError.map { " (\($0))" } ?? ""
            return "reconnecting\(why)"
        }
        if !streamStarted || live.rebuffering { return "buffering \(max(0, min(100, live.bufferedPercent))) %" }
        return nil
    }

    /// `.streamStatus`: keeps the facts, and gives up on a stream lost for too long.
    mutating func streamReport(playID: UInt64, status: StreamStatus, _ step: inout Step) {
        guard loaded?.playID == playID else { return }
        let before = stream?.playID == playID ? stream?.status : nil
        stream = PlayStreamStatus(playID: playID, status: status)
        if let length = status.onDemandDuration, length.isFinite, length > 0, let ref = loaded {
            onDemandStream = OnDemandStream(trackID: ref.trackID, duration: length)
        }
        // The log says when a stream came back (counted by the adapter, so none is missed between
        // two looks) and when one is seen lost (the status says it meanwhile).
        // Built in steps: Swift 6.0.3 type-checks long `+` chains of optionals slowly.
        let lastLost: String = status.lastError.map { "; last lost: \($0)" } ?? ""
        let cause: String = status.lastError.map { " (\($0))" } ?? ""
        if status.reconnects > (before?.reconnects ?? 0) {
            step.commands.append(.report("stream reconnected (\(status.reconnects) since it started\(lastLost))"))
        } else if before?.reconnectingFor == nil, status.reconnectingFor != nil {
            step.commands.append(.report("stream lost\(cause): reconnecting"))
        }
        // New notes go to the log, each once (counted by the adapter: none is said twice).
        let newNotes = min(status.notes.count, max(0, status.noteCount - (before?.noteCount ?? 0)))
        for note in status.notes.suffix(newNotes) { step.commands.append(.report("stream: \(note)")) }
        if let lost = status.reconnectingFor, lost >= settings.streamGiveUp {
            engineReport(.trackFailed(playID: playID, reason: "no connection for \(Int(lost)) s\(cause)"), &step)
        }
    }
}

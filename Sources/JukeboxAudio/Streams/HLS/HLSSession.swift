// SPDX-License-Identifier: MIT

/// The settings of HLS playback (`HLSSession`).
public struct HLSSettings: Sendable, Equatable {
    /// The variant rule's cap in bit/s (`HLSSession.chooseVariant`).
    public var maxBandwidth = 320_000
    /// A segment is tried this many times before it is skipped.
    public var segmentAttempts = 2
    /// This many segments skipped in a row end the stream.
    public var maxSkipsInARow = 5
    /// A playlist that cannot be fetched this many times in a row ends the stream.
    public var playlistAttempts = 5
    /// A live playlist bringing no new segment for this many target durations (at least
    /// `minStaleSeconds`) has stopped updating: the stream ends.
    public var staleTargetDurations = 4.0
    /// See `staleTargetDurations`.
    public var minStaleSeconds = 10.0
    /// The playlist's bounds.
    public var limits = HLSLimits()

    /// The defaults above.
    public init() {}
}

/// What HLS playback does next, decided from what happened (pure: the time comes with each event;
/// `HLSStream` carries the steps out with libcurl on its own thread).
///
/// RFC 8216's client rules, section 6.3: a live playlist starts at the segment three target
/// durations from its end (6.3.3); after a reload the next segment is found by its media sequence
/// number (6.3.2), and a window that slid past it is caught up with, the segments missed said;
/// a playlist is reloaded after its last segment's duration when it changed, after half the target
/// duration when it did not (6.3.4). Variants: `chooseVariant`. AES-128 segments are fetched as
/// any (the stream decrypts them); SAMPLE-AES and byte ranges (also an `EXT-X-MAP` with one) are
/// refused with their reason.
public struct HLSSession: Sendable {
    /// A step to carry out.
    public enum Step: Equatable, Sendable {
        /// Fetch this playlist (`playlistArrived` or `playlistFailed` follows).
        case fetchPlaylist(String)
        /// Fetch this segment and feed it to the decoder (`segmentDone` or `segmentFailed` follows).
        case fetchSegment(HLSSegment)
        /// Nothing to do before this time (monotonic seconds): then `tick`.
        case wait(until: Double)
        /// The stream is over: its end (on demand), or it gives up with this reason.
        case end(failure: String?)
    }

    /// Lines for the log and the status: the variant chosen, segments skipped and why.
    public private(set) var notes: [String] = []
    /// An on-demand playlist (ENDLIST) once its first media playlist came: its length (the sum
    /// of its segments' durations) and where the segment playing starts begins (the place asked
    /// for, `startAt`, lies in it: the audio before it is the decoder's to skip). Nil for live.
    public private(set) var onDemand: (duration: Double, segmentStart: Double)?
    /// Seconds into an on-demand playlist to start at (a seek, a resume); live ignores it.
    public let startAt: Double
    /// The settings.
    public let settings: HLSSettings

    private var playlistURL: String
    private var isMediaPlaylist = false
    private var media: HLSMediaPlaylist?
    /// The sequence number of the next segment to fetch (nil before the first media playlist).
    private var nextSequence: Int?
    private var reloadAt = 0.0
    private var lastNewSegmentAt = 0.0
    private var playlistFailures = 0
    private var segmentFailures = 0
    private var skipsInARow = 0
    private var segmentsDone = 0
    private var lastSkip: String?
    private var finished: String??

    /// A session for the playlist at `url` (a master or a media playlist), starting `startAt`
    /// seconds in when it is on demand.
    public init(url: String, settings: HLSSettings = HLSSettings(), startAt: Double = 0) {
        self.playlistURL = url
        self.settings = settings
        self.startAt = startAt.isFinite ? max(0, startAt) : 0
    }

    /// The first step.
    public func start() -> Step { .fetchPlaylist(playlistURL) }

    /// Takes the notes written since the last call.
    public mutating func takeNotes() -> [String] {
        defer { notes = [] }
        return notes
    }

    /// The playlist asked for arrived.
    public mutating func playlistArrived(_ bytes: some Collection<UInt8>, now: Double) -> Step {
        switch HLSPlaylist.parse(bytes, url: playlistURL, limits: settings.limits) {
        case .failure(.notHLS):
            return playlistFailed("not an HLS playlist (no #EXTM3U)", now: now, permanent: true)
        case .failure(.empty(let reason)):
            return playlistFailed(reason, now: now, permanent: !isMediaPlaylist)
        case .success(.master(let master)):
            guard !isMediaPlaylist else { return finish("a media playlist turned into a master playlist") }
            guard let (uri, why) = Self.chooseVariant(master, maxBandwidth: settings.maxBandwidth) else {
                return finish("the master playlist names no variant with audio jukebox decodes")
            }
            notes.append(why)
            playlistURL = uri
            isMediaPlaylist = true
            playlistFailures = 0
            return .fetchPlaylist(uri)
        case .success(.media(let playlist)):
            isMediaPlaylist = true
            playlistFailures = 0
            return mediaArrived(playlist, now: now)
        }
    }

    /// Fetching the playlist failed (`reason`: HTTP 404, a timeout…).
    public mutating func playlistFailed(_ reason: String, now: Double, permanent: Bool = false) -> Step {
        playlistFailures += 1
        if permanent || media == nil && !isMediaPlaylist || playlistFailures >= settings.playlistAttempts {
            return finish("the playlist failed: \(reason)")
        }
        notes.append("the playlist failed (\(reason)): trying again")
        reloadAt = now + retryDelay
        return .wait(until: reloadAt)
    }

    /// The segment handed out by the last step was fed to the decoder whole.
    public mutating func segmentDone(now: Double) -> Step {
        segmentFailures = 0
        skipsInARow = 0
        segmentsDone += 1
        if let sequence = nextSequence { nextSequence = sequence + 1 }
        return nextStep(now: now)
    }

    /// The segment handed out by the last step failed (`reason`): tried again, then skipped.
    public mutating func segmentFailed(_ reason: String, now: Double) -> Step {
        segmentFailures += 1
        guard let sequence = nextSequence else { return nextStep(now: now) }
        if segmentFailures < settings.segmentAttempts { return nextStep(now: now) }
        segmentFailures = 0
        skipsInARow += 1
        notes.append("segment \(sequence) skipped: \(reason)")
        lastSkip = reason
        if skipsInARow >= settings.maxSkipsInARow {
            return finish("\(skipsInARow) segments in a row failed (last: \(reason))")
        }
        nextSequence = sequence + 1
        return nextStep(now: now)
    }

    /// The time of a `wait` came.
    public mutating func tick(now: Double) -> Step { nextStep(now: now) }

    // MARK: deciding

    private var retryDelay: Double { Double(media?.targetDuration ?? 2) / 2 }

    private mutating func finish(_ reason: String?) -> Step {
        finished = .some(reason)
        return .end(failure: reason)
    }

    private mutating func mediaArrived(_ playlist: HLSMediaPlaylist, now: Double) -> Step {
        for segment in playlist.segments {
            if case .encrypted(let method) = segment.key { return finish("encrypted HLS segments (\(method)) are not supported") }
        }
        if playlist.byteRanges { return finish("HLS byte-range segments (EXT-X-BYTERANGE) are not supported") }
        if playlist.truncated || playlist.dropped > 0 {
            notes.append("the playlist is too long: \(playlist.dropped) segments left out")
        }
        let target = Double(playlist.targetDuration ?? 1)
        let previous = media
        media = playlist
        let changed = previous.map { $0.lastSequence != playlist.lastSequence || $0.ended != playlist.ended } ?? true
        if changed { lastNewSegmentAt = now }
        // 6.3.4: the last segment's duration after a change, half the target duration after none.
        reloadAt = now + (changed ? (playlist.segments.last?.duration ?? target) : target / 2)
        if let next = nextSequence {
            if let first = playlist.segments.first?.sequence, next < first {
                notes.append("fell behind the live window: segments \(next)–\(first - 1) skipped")
                nextSequence = first
            }
        } else if playlist.ended {
            let start = Self.onDemandStart(playlist, at: startAt)
            nextSequence = start?.sequence
            if let start { onDemand = (playlist.segments.reduce(0) { $0 + $1.duration }, start.segmentStart) }
        } else {
            nextSequence = Self.startSequence(playlist)
        }
        return nextStep(now: now)
    }

    private mutating func nextStep(now: Double) -> Step {
        if let finished { return .end(failure: finished) }
        guard let playlist = media, let next = nextSequence else {
            return now >= reloadAt ? .fetchPlaylist(playlistURL) : .wait(until: reloadAt)
        }
        if let segment = playlist.segments.first(where: { $0.sequence >= next }) {
            if segment.sequence > next { nextSequence = segment.sequence }
            return .fetchSegment(segment)
        }
        if playlist.ended {
            // A playlist none of whose segments came is a failure with its reason, not an end.
            return finish(segmentsDone == 0 ? lastSkip.map { "no segment of the playlist could be fetched (\($0))" } : nil)
        }
        let target = Double(playlist.targetDuration ?? 1)
        let stale = max(settings.staleTargetDurations * target, settings.minStaleSeconds)
        if now - lastNewSegmentAt >= stale {
            return finish("the live playlist stopped updating: no new segment for \(Int(stale)) s")
        }
        return now >= reloadAt ? .fetchPlaylist(playlistURL) : .wait(until: reloadAt)
    }

    /// Where playing starts: an on-demand playlist (ENDLIST) at its first segment; a live one at
    /// the last segment that starts at least three target durations before the end (RFC 8216
    /// 6.3.3), its first when it is shorter. Nil when it has no segment yet.
    static func startSequence(_ playlist: HLSMediaPlaylist) -> Int? {
        guard let first = playlist.segments.first else { return nil }
        if playlist.ended { return first.sequence }
        let edge = 3 * Double(playlist.targetDuration ?? 1)
        var fromEnd = 0.0
        for segment in playlist.segments.reversed() {
            fromEnd += segment.duration
            if fromEnd >= edge { return segment.sequence }
        }
        return first.sequence
    }

    /// Where an on-demand playlist starts for a place `seconds` in: the segment holding it (the
    /// last one when it is at or past the end) and that segment's start; nil without segments.
    static func onDemandStart(_ playlist: HLSMediaPlaylist, at seconds: Double) -> (sequence: Int, segmentStart: Double)? {
        guard let last = playlist.segments.last else { return nil }
        var start = 0.0
        for segment in playlist.segments {
            if seconds < start + segment.duration { return (segment.sequence, start) }
            start += segment.duration
        }
        return (last.sequence, start - last.duration)
    }

    /// The variant rule: among the variants whose codecs are all audio jukebox decodes (else those
    /// naming no codec or naming one such audio codec, beside video), the highest `BANDWIDTH` at
    /// or below `maxBandwidth`, else the lowest above it; a variant with no `BANDWIDTH` counts as 0.
    /// A variant with its audio in a rendition group plays that group's default (else first)
    /// rendition instead, which is audio only. Returns the playlist's URL and why it was chosen,
    /// or nil when no variant has audio to decode.
    public static func chooseVariant(_ master: HLSMaster, maxBandwidth: Int) -> (uri: String, why: String)? {
        let audioOnly = master.variants.filter(\.isAudioOnly)
        let withAudio = master.variants.filter { variant in
            variant.codecs.isEmpty || variant.codecs.contains(where: HLSVariant.isPlayableAudio)
        }
        let candidates = audioOnly.isEmpty ? withAudio : audioOnly
        let byBandwidth = candidates.sorted { ($0.bandwidth ?? 0) < ($1.bandwidth ?? 0) }
        guard let chosen = byBandwidth.last(where: { ($0.bandwidth ?? 0) <= maxBandwidth }) ?? byBandwidth.first else {
            if let rendition = master.audio.first(where: \.isDefault) ?? master.audio.first {
                return (rendition.uri, "HLS: audio rendition \(rendition.group) (no variant)")
            }
            return nil
        }
        let kbps = (chosen.bandwidth ?? 0) / 1000
        let kind = chosen.isAudioOnly ? "audio-only" : "with video"
        let fit = (chosen.bandwidth ?? 0) <= maxBandwidth ? "at or below" : "the lowest, none at or below"
        let why = "HLS: variant \(kbps) kbit/s \(kind) of \(master.variants.count) (\(fit) \(maxBandwidth / 1000) kbit/s)"
        if let group = chosen.audioGroup {
            let renditions = master.audio.filter { $0.group == group }
            if let rendition = renditions.first(where: \.isDefault) ?? renditions.first {
                return (rendition.uri, why + ", its audio rendition")
            }
        }
        return (chosen.uri, why)
    }
}

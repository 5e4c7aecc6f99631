// SPDX-License-Identifier: MIT
import JukeboxAudio

/// The stream parsers that read what a radio station's server sends.
enum StreamHarness {
    static let url = "http://radio.example/live/index.m3u8"

    /// A playlist: read within its bounds, and a session driven through it (arrived, every segment
    /// failed or done, ticks) always comes to a step, never loops without end.
    static func playlist(_ data: [UInt8]) -> Bool {
        var limits = HLSLimits()
        limits.maxSegments = 64
        switch HLSPlaylist.parse(data, url: url, limits: limits) {
        case .failure:
            return false
        case .success(.master(let master)):
            require(master.variants.count <= limits.maxVariants, "\(master.variants.count) variants kept")
            if let chosen = HLSSession.chooseVariant(master, maxBandwidth: 320_000) {
                let head = chosen.uri.prefix(8).lowercased()
                require(head.hasPrefix("http://") || head.hasPrefix("https://"), "variant URI \(chosen.uri.debugDescription)")
            }
        case .success(.media(let media)):
            require(media.segments.count <= limits.maxSegments, "\(media.segments.count) segments kept")
            require(media.segments.allSatisfy { $0.duration.isFinite && $0.duration >= 0 }, "a segment's duration")
            require(zip(media.segments, media.segments.dropFirst()).allSatisfy { $0.sequence + 1 == $1.sequence }, "sequence numbers")
        }
        var settings = HLSSettings()
        settings.limits = limits
        var session = HLSSession(url: url, settings: settings)
        var step = session.playlistArrived(data, now: 0)
        var now = 0.0
        for round in 0..<200 {
            switch step {
            case .end: return true
            case .fetchSegment(let segment):
                require(segment.duration.isFinite, "segment duration")
                step = round % 3 == 0 ? session.segmentFailed("fuzz", now: now) : session.segmentDone(now: now)
            case .fetchPlaylist:
                step = session.playlistArrived(data, now: now)
            case .wait(let until):
                require(until.isFinite && until >= now, "a wait until \(until) at \(now)")
                now = until
                step = session.tick(now: now)
            }
        }
        return true
    }

    /// A transport stream, whole and in two pieces: the same audio; never more out than in.
    static func transportStream(_ data: [UInt8]) -> Bool {
        var whole = TSDemuxer()
        let audio = whole.feed(data)
        require(audio.count <= data.count, "\(audio.count) bytes out of \(data.count)")
        whole.flushMetadata()
        for tag in whole.takeMetadata() { _ = ID3Title.title(tag) }
        var split = TSDemuxer()
        let cut = data.count / 2
        let pieces = split.feed(data[..<cut]) + split.feed(data[cut...])
        require(pieces == audio, "fed in two pieces, the audio differs")
        _ = ID3Title.title(data)
        return whole.audio != nil
    }
}

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

    /// A fragmented MP4 segment, read with an AAC-LC init section for track 1, and the same bytes
    /// as an init section: refused with a reason, or ADTS frames that chain exactly to the end,
    /// each holding at least one byte of the input (so never more than 8 bytes out per byte in).
    static func fragmentedMP4(_ data: [UInt8]) -> Bool {
        do throws(MP4Error) { _ = try FMP4Init.read(data) } catch {
            require(!error.reason.isEmpty, "an init section refused without a reason")
        }
        do throws(MP4Error) {
            let audio = try FMP4Fragment.adts(data, init: fuzzInit)
            require(audio.count <= 8 * data.count, "\(audio.count) bytes out of \(data.count)")
            var at = 0
            while at < audio.count {
                require(audio.count - at >= 8 && audio[at] == 0xFF && audio[at + 1] == 0xF1, "no ADTS header at \(at)")
                let length = Int(audio[at + 3] & 3) << 11 | Int(audio[at + 4]) << 3 | Int(audio[at + 5] >> 5)
                require(length > 7 && at + length <= audio.count, "ADTS frame of \(length) bytes at \(at) of \(audio.count)")
                at += length
            }
            return true
        } catch {
            require(!error.reason.isEmpty, "a fragment refused without a reason")
            return false
        }
    }

    /// The init section the fragments are read with (track 1, AAC-LC, 44.1 kHz stereo).
    static let fuzzInit: FMP4Init = {
        guard let setup = try? FMP4Init.read(FMP4Seed.initSection) else { fatalError("the seed init section does not read") }
        return setup
    }()

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

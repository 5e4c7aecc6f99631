// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import JukeboxService
import JukeboxSystem

extension AudioEngine: AudioPort {
    /// `play` with the gapless successor and no ReplayGain (the port's plain form).
    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
        play(id: id, path: path, from: seconds, paused: paused, next: next, gain: 1, nextGain: 1, speed: 1, nextSpeed: 1)
    }

    /// `setNext` without ReplayGain (the port's plain form).
    public func setNext(id: UInt64, path: String) { setNext(id: id, path: path, gain: 1, speed: 1) }

    /// `play` with ReplayGain, at speed 1 (the port's gain form).
    public func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
                     gain: Double, nextGain: Double) {
        play(id: id, path: path, from: seconds, paused: paused, next: next, gain: gain, nextGain: nextGain, speed: 1, nextSpeed: 1)
    }

    /// `setNext` with ReplayGain, at speed 1 (the port's gain form).
    public func setNext(id: UInt64, path: String, gain: Double) { setNext(id: id, path: path, gain: gain, speed: 1) }

    /// The engine's stream facts in the core's words: buffered percent of the start-up buffer,
    /// seconds reconnecting (by the stream thread's monotonic clock).
    public func streamStatus() -> (id: UInt64, status: StreamStatus)? {
        guard let live = streamFacts() else { return nil }
        let facts = live.facts
        let percent = live.target > 0 ? min(100, facts.bufferedBytes * 100 / live.target) : 100
        let lost = facts.reconnectingSince.map { max(0, monotonicNow() - $0) }
        return (live.id, StreamStatus(station: facts.station, title: facts.title, bufferedPercent: percent,
                                      reconnectingFor: lost, lastError: facts.lastError, reconnects: facts.reconnects,
                                      rebuffering: facts.rebuffering, notes: facts.notes, noteCount: facts.noteCount,
                                      onDemandDuration: facts.onDemand?.duration))
    }
}

/// Translates between the audio adapter's vocabulary and the core's.
public enum AudioWiring {
    /// The router's device for the core's route.
    public static func device(for route: OutputRoute) -> RoutedOutput.Device {
        switch route {
        case .card: return .card
        case .headphones: return .headphones
        case .bluetooth: return .bluetooth
        }
    }

    /// The event a report from the engine stands for (nil for reports the core needs not see).
    public static func event(for report: AudioEngine.Report) -> Event? {
        switch report {
        case .started(let id): return .trackStarted(playID: id)
        case .finished(let id, let next): return .trackFinished(playID: id, next: next)
        case .failed(let id, let reason): return .trackFailed(playID: id, reason: reason)
        case .deviceUnavailable(let error): return .deviceUnavailable(reason: describe(error), problem: problem(error.kind))
        case .deviceAvailable: return .deviceAvailable
        case .firstSample: return nil
        case .released(let token, let heard):
            return .deviceReleased(token: token, heard: heard.map { PlayPosition(playID: $0.id, seconds: $0.seconds) })
        }
    }

    /// What kind of device problem the core is told about.
    public static func problem(_ kind: OutputError.Kind) -> DeviceProblem {
        switch kind {
        case .busy: return .busy
        case .unsupported: return .unsupported
        case .lost, .other: return .lost
        }
    }

    /// A device problem as a person reads it: `busy (held by aplay, pid 4711)`.
    public static func describe(_ error: OutputError) -> String {
        var text = error.message
        if let holder = error.holder { text += " (held by \(holder))" }
        return text
    }

    /// The most bytes of an embedded picture served (as a cover file: `MPDCovers`).
    public static let pictureLimit = 8 << 20

    /// The picture embedded in the tags of the file at `path` (MPD's `readpicture`), as the
    /// service's `Runtime.readPicture` wants it. Call from the thread that reads tags.
    public static func picture(path: String) -> (type: String, bytes: [UInt8])? {
        TagReader.picture(path: path, limit: pictureLimit).map { ($0.mimeType, $0.bytes) }
    }

    /// The loudness worker's scan (`Runtime.measureLoudness`): libebur128 over the player's own
    /// decoders, as a track gain against ReplayGain's reference and the sample peak.
    public static let measureLoudness: LoudnessWorker.Measure = { path, stop in
        switch LoudnessScanner.measure(path: path, stop: stop) {
        case .success(let m): return .success(Loudness(trackGain: m.trackGain, trackPeak: m.peak > 0 ? m.peak : nil))
        case .failure(let error): return .failure(LoudnessFailure(reason: error.reason))
        }
    }

    /// Track info for the queue: tags from TagLib/libsndfile, the file name when untagged.
    /// Call from one thread only (TagLib's C API is not thread-safe).
    public static func trackInfo(path: String) -> TrackInfo {
        let tags = TagReader.read(path: path)
        return TrackInfo(path: path, title: tags.title, artist: tags.artist, album: tags.album,
                         trackNumber: tags.trackNumber, discNumber: tags.discNumber, duration: tags.durationSeconds,
                         chapters: tags.chapters.map { Chapter(start: $0.start, title: $0.title) }, loudness: tags.loudness.map {
                             Loudness(trackGain: $0.trackGain, trackPeak: $0.trackPeak, albumGain: $0.albumGain, albumPeak: $0.albumPeak)
                         })
    }
}

// SPDX-License-Identifier: MIT

/// The writer's record of what the device holds and has not played: runs of frames by device frame,
/// so a cut can name the track point where the sound stopped and, on a device that rewinds, rewrite
/// the first frames taken back as a fade-out.
///
/// Entries share the decoded chunks' storage (no copy); their bytes are kept only when asked
/// (`keepBytes`: an output that rewinds), so a device that only drops holds no audio here.
struct WriteHistory {
    private struct Entry {
        var deviceStart: Int64
        var chunk: PCMChunk
        var end: Int64 { deviceStart + Int64(chunk.frames) }
    }

    private var entries: [Entry] = []

    /// Notes `chunk` as written at device frame `deviceStart`, and forgets what ended before `heard`.
    mutating func remember(_ chunk: PCMChunk, at deviceStart: Int64, keepBytes: Bool, heard: Int64) {
        var kept = chunk
        if !keepBytes { kept.bytes = [] }
        entries.append(Entry(deviceStart: deviceStart, chunk: kept))
        let gone = entries.prefix { $0.end <= heard }.count
        if gone > 0 && gone < entries.count { entries.removeFirst(gone) }
    }

    /// Forgets everything (a new stream).
    mutating func reset() { entries.removeAll() }

    /// Forgets what lies at or after device frame `frame` (taken back from the device).
    mutating func truncate(at frame: Int64) {
        entries.removeAll { $0.deviceStart >= frame }
        if let last = entries.last, last.end > frame {
            let keep = Int(frame - last.deviceStart)
            entries[entries.count - 1].chunk = last.chunk.bytes.isEmpty
                ? last.chunk.withFrames(keep) : last.chunk.frames(0..<keep)
        }
    }

    /// The track point device frame `frame` belongs to (the end of the last run when past it).
    func point(atDeviceFrame frame: Int64) -> TrackPoint? {
        guard let entry = entries.last(where: { $0.deviceStart <= frame }) ?? entries.first else { return nil }
        let inChunk = min(max(0, frame - entry.deviceStart), Int64(entry.chunk.frames))
        let chunk = entry.chunk
        return chunk.point(atFrame: chunk.startFrame + inChunk)
    }

    /// Up to `count` frames from device frame `frame` on, within one opening of one track, with their
    /// bytes; nil when they are not held.
    func frames(from frame: Int64, count: Int) -> PCMChunk? {
        guard let index = entries.lastIndex(where: { $0.deviceStart <= frame }) else { return nil }
        let first = entries[index]
        let offset = Int(frame - first.deviceStart)
        guard offset < first.chunk.frames, !first.chunk.bytes.isEmpty else { return nil }
        var result = first.chunk.frames(offset..<min(first.chunk.frames, offset + count))
        var next = index + 1
        while result.frames < count, next < entries.count {
            let chunk = entries[next].chunk
            guard chunk.serial == result.serial, chunk.format == result.format, chunk.track == result.track, !chunk.bytes.isEmpty,
                  chunk.startFrame == result.startFrame + Int64(result.frames) else { break }
            let take = min(chunk.frames, count - result.frames)
            result.bytes += chunk.bytes[0..<take * chunk.format.bytesPerFrame]
            result.frames += take
            next += 1
        }
        return result
    }
}

extension PCMChunk {
    /// The first `count` frames' bookkeeping without bytes (a history entry that holds none).
    func withFrames(_ count: Int) -> PCMChunk {
        var part = self
        part.frames = count
        return part
    }
}

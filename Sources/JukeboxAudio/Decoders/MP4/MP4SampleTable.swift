// SPDX-License-Identifier: MIT

/// Where each coded sample (an AAC or ALAC frame) of a track is and how long it lasts, from the
/// track's `stbl`: `stts` (durations), `stsc` (samples per chunk), `stco`/`co64` (chunk offsets) in
/// memory (a few hundred KiB for 9 hours), the per-sample sizes (`stsz`/`stz2`: 5.6 MB for 9 hours
/// of AAC) read from the file a window at a time, so the player's memory stays small.
public struct MP4SampleTable: Equatable {
    /// Runs of samples of one duration (in the track's timescale).
    public var durations: [(count: UInt32, delta: UInt32)]
    /// From which chunk (0-based) how many samples a chunk holds.
    public var chunkRuns: [(firstChunk: Int, samplesPerChunk: Int)]
    /// Each chunk's file offset.
    public var chunkOffsets: [UInt64]
    /// The sizes: one for all, or a table in the file.
    public var sizes: Sizes
    /// Samples in the track.
    public var sampleCount: Int

    /// Sample sizes: all alike (`stsz` with a size), or per sample in the file at `offset`,
    /// `bits` wide (32 for `stsz`; 4, 8 or 16 for `stz2`).
    public enum Sizes: Equatable {
        case constant(UInt32)
        case table(offset: UInt64, bits: Int)
    }

    /// Most entries kept in memory per table: far beyond a 24-hour file (1.4 million AAC frames in
    /// 9 hours use a handful of `stts` entries and ~32,000 chunks), and it bounds what a crafted
    /// file makes the player allocate (12 MiB for `stsc`).
    static let maxEntries = 1 << 20

    public static func == (a: MP4SampleTable, b: MP4SampleTable) -> Bool {
        a.durations.elementsEqual(b.durations, by: { $0 == $1 }) && a.chunkRuns.elementsEqual(b.chunkRuns, by: { $0 == $1 })
            && a.chunkOffsets == b.chunkOffsets && a.sizes == b.sizes && a.sampleCount == b.sampleCount
    }

    /// Reads the table from an `stbl` box's children.
    static func read(_ stbl: [MP4Box], in source: MP4ByteSource) throws(MP4Error) -> MP4SampleTable {
        func need(_ type: String) throws(MP4Error) -> MP4Box {
            guard let box = stbl.first(type) else { throw MP4Error("damaged file: the audio track has no '\(type)' box") }
            return box
        }
        func entries(_ cursor: inout MP4Cursor, width: Int, _ box: MP4Box) throws(MP4Error) -> Int {
            let count = Int(try cursor.u32())
            guard count <= maxEntries, count * width <= cursor.remaining else {
                throw MP4Error("damaged file: box '\(box.type)' says it holds \(count) entries")
            }
            return count
        }
        let stts = try need("stts")
        var c = MP4Cursor(try stts.content(in: source, limit: maxEntries * 8 + 8), box: "stts")
        _ = try c.version()
        var durations: [(count: UInt32, delta: UInt32)] = []
        let sttsCount = try entries(&c, width: 8, stts)
        durations.reserveCapacity(sttsCount)
        for _ in 0..<sttsCount { durations.append((try c.u32(), try c.u32())) }

        let stsc = try need("stsc")
        c = MP4Cursor(try stsc.content(in: source, limit: maxEntries * 12 + 8), box: "stsc")
        _ = try c.version()
        var runs: [(firstChunk: Int, samplesPerChunk: Int)] = []
        for _ in 0..<(try entries(&c, width: 12, stsc)) {
            let first = Int(try c.u32())
            let perChunk = Int(try c.u32())
            try c.skip(4)  // the sample description: one is all an audio track here has
            guard first >= 1, first - 1 > (runs.last?.firstChunk ?? -1), perChunk >= 1 else {
                throw MP4Error("damaged file: box 'stsc' is out of order")
            }
            runs.append((first - 1, perChunk))
        }

        var offsets: [UInt64] = []
        if let stco = stbl.first("stco") ?? stbl.first("co64") {
            let width = stco.type == "co64" ? 8 : 4
            c = MP4Cursor(try stco.content(in: source, limit: maxEntries * width + 8), box: stco.type)
            _ = try c.version()
            let n = try entries(&c, width: width, stco)
            offsets.reserveCapacity(n)
            for _ in 0..<n { offsets.append(try c.uint(width)) }
        } else {
            throw MP4Error("damaged file: the audio track has no 'stco' box")
        }

        let sizes: Sizes
        let count: Int
        if let stsz = stbl.first("stsz") {
            c = MP4Cursor(try source.read(at: stsz.contentStart, count: min(12, Int(stsz.contentSize))), box: "stsz")
            _ = try c.version()
            let size = try c.u32()
            count = Int(try c.u32())
            if size != 0 {
                sizes = .constant(size)
            } else {
                guard UInt64(count) * 4 <= stsz.contentSize - 12 else { throw MP4Error("damaged file: box 'stsz' says it holds \(count) entries") }
                sizes = .table(offset: stsz.contentStart + 12, bits: 32)
            }
        } else if let stz2 = stbl.first("stz2") {
            c = MP4Cursor(try source.read(at: stz2.contentStart, count: min(12, Int(stz2.contentSize))), box: "stz2")
            _ = try c.version()
            try c.skip(3)
            let bits = Int(try c.u8())
            count = Int(try c.u32())
            guard [4, 8, 16].contains(bits), (UInt64(count) * UInt64(bits) + 7) / 8 <= stz2.contentSize - 12 else {
                throw MP4Error("damaged file: box 'stz2' is not a size table")
            }
            sizes = .table(offset: stz2.contentStart + 12, bits: bits)
        } else {
            throw MP4Error("damaged file: the audio track has no 'stsz' box")
        }
        guard count <= Int(UInt32.max) else { throw MP4Error("damaged file: too many samples") }
        let table = MP4SampleTable(durations: durations, chunkRuns: runs, chunkOffsets: offsets, sizes: sizes, sampleCount: count)
        guard table.samplesInChunks >= count else { throw MP4Error("damaged file: the chunks hold fewer samples than the track has") }
        return table
    }

    /// Samples the chunks can hold in all (at least `sampleCount` in a sound file).
    var samplesInChunks: Int {
        var total = 0
        for (i, run) in chunkRuns.enumerated() where run.firstChunk < chunkOffsets.count {
            let next = i + 1 < chunkRuns.count ? min(chunkRuns[i + 1].firstChunk, chunkOffsets.count) : chunkOffsets.count
            total += (next - run.firstChunk) * run.samplesPerChunk
            if total > Int(UInt32.max) { return total }
        }
        return total
    }

    /// The track's length in its timescale: the durations of its samples.
    public var duration: UInt64 {
        var total: UInt64 = 0
        var left = sampleCount
        for run in durations where left > 0 {
            let n = min(left, Int(run.count))
            total += UInt64(n) * UInt64(run.delta)
            left -= n
        }
        return total
    }

    /// The sample playing at `time` (in the timescale) and the time it starts; past the end, the
    /// sample count and the duration.
    public func sample(at time: UInt64) -> (index: Int, start: UInt64) {
        var index = 0
        var start: UInt64 = 0
        for run in durations where index < sampleCount {
            let n = min(sampleCount - index, Int(run.count))
            let span = UInt64(n) * UInt64(run.delta)
            if run.delta > 0, time < start + span {
                let k = Int((time - start) / UInt64(run.delta))
                return (index + k, start + UInt64(k) * UInt64(run.delta))
            }
            index += n
            start += span
        }
        return (sampleCount, start)
    }

    /// Where sample `index` begins: its chunk, the chunk's first sample and its `chunkRuns` entry.
    func chunk(of index: Int) -> (chunk: Int, first: Int, run: Int)? {
        var sample = 0
        for (i, run) in chunkRuns.enumerated() {
            guard run.firstChunk < chunkOffsets.count else { break }
            let next = i + 1 < chunkRuns.count ? min(chunkRuns[i + 1].firstChunk, chunkOffsets.count) : chunkOffsets.count
            let inRun = (next - run.firstChunk) * run.samplesPerChunk
            if index < sample + inRun {
                let k = (index - sample) / run.samplesPerChunk
                return (run.firstChunk + k, sample + k * run.samplesPerChunk, i)
            }
            sample += inRun
        }
        return nil
    }
}

/// Walks a track's samples in order, giving each one's place in the file; sizes are read from the
/// file a window at a time (4 KiB), so memory stays flat whatever the track's length.
public struct MP4SampleReader {
    public let table: MP4SampleTable
    private let source: MP4ByteSource
    /// The next sample `next()` gives, its file offset and its start time (the timescale's units).
    public private(set) var index = 0
    private var offset: UInt64 = 0
    private var time: UInt64 = 0
    /// Cursors into the tables, so that each sample costs the same whatever their length (a
    /// crafted file may have millions of runs: a walk from the start per sample would never end).
    private var chunk = 0, run = 0, leftInChunk = 0
    private var durationRun = 0, leftInDuration = 0
    private var window: [UInt32] = []
    private var windowStart = 0

    static let windowEntries = 1024

    /// A reader at the first sample.
    public init(_ table: MP4SampleTable, source: MP4ByteSource) throws(MP4Error) {
        self.table = table
        self.source = source
        try seek(toSample: 0)
    }

    /// Positions the reader at sample `index` (the count: at the end).
    public mutating func seek(toSample target: Int) throws(MP4Error) {
        index = max(0, min(target, table.sampleCount))
        // The start time and the duration run: one walk of the runs.
        time = 0
        durationRun = table.durations.count
        leftInDuration = 0
        var before = 0
        for (i, entry) in table.durations.enumerated() {
            let n = Int(entry.count)
            if index < before + n {
                durationRun = i
                leftInDuration = before + n - index
                time += UInt64(index - before) * UInt64(entry.delta)
                break
            }
            before += n
            time += UInt64(n) * UInt64(entry.delta)
        }
        guard index < table.sampleCount, let place = table.chunk(of: index) else { return }
        chunk = place.chunk
        run = place.run
        leftInChunk = table.chunkRuns[run].samplesPerChunk - (index - place.first)
        offset = table.chunkOffsets[chunk]
        for i in place.first..<index { offset += UInt64(try size(of: i)) }
    }

    /// The next sample's file offset, size and start time (the track's timescale), or nil after
    /// the last.
    public mutating func next() throws(MP4Error) -> (offset: UInt64, size: Int, start: UInt64)? {
        guard index < table.sampleCount else { return nil }
        let size = Int(try size(of: index))
        let here = (offset, size, time)
        index += 1
        if durationRun < table.durations.count {
            time += UInt64(table.durations[durationRun].delta)
            leftInDuration -= 1
            while leftInDuration <= 0, durationRun < table.durations.count {
                durationRun += 1
                leftInDuration = durationRun < table.durations.count ? Int(table.durations[durationRun].count) : 0
            }
        }
        leftInChunk -= 1
        if leftInChunk > 0 {
            offset += UInt64(size)
        } else {
            chunk += 1
            if run + 1 < table.chunkRuns.count, table.chunkRuns[run + 1].firstChunk <= chunk { run += 1 }
            leftInChunk = table.chunkRuns[run].samplesPerChunk
            offset = chunk < table.chunkOffsets.count ? table.chunkOffsets[chunk] : offset + UInt64(size)
        }
        return here
    }

    private mutating func size(of i: Int) throws(MP4Error) -> UInt32 {
        switch table.sizes {
        case .constant(let size): return size
        case .table(let at, let bits):
            if i < windowStart || i >= windowStart + window.count {
                windowStart = i
                let n = min(Self.windowEntries, table.sampleCount - i)
                let firstBit = UInt64(i) * UInt64(bits)
                let byteCount = Int((UInt64(i + n) * UInt64(bits) + 7) / 8 - firstBit / 8)
                let bytes = try source.read(at: at + firstBit / 8, count: byteCount)
                window = (0..<n).map { k in
                    switch bits {
                    case 32: return bytes[4 * k..<4 * k + 4].reduce(0) { $0 << 8 | UInt32($1) }
                    case 16: return UInt32(bytes[2 * k]) << 8 | UInt32(bytes[2 * k + 1])
                    case 8: return UInt32(bytes[k])
                    default:  // 4 bits: the high nibble first; `i` may start on either half
                        let bit = (Int(firstBit % 8) + 4 * k)
                        let byte = bytes[bit / 8]
                        return UInt32(bit % 8 == 0 ? byte >> 4 : byte & 0x0f)
                    }
                }
            }
            return window[i - windowStart]
        }
    }
}

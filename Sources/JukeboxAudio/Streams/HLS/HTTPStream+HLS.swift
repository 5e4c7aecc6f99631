// SPDX-License-Identifier: MIT
import CHTTP

/// HLS playback on the stream's own thread: `HLSSession` decides, this carries its steps out with
/// the same libcurl transfer as every stream (`perform`), and puts each segment's audio into the
/// same ring, in order: MPEG-TS through `TSDemuxer`, packed ADTS or MP3 as they are (their leading
/// ID3 tag taken off), fragmented MP4 (`EXT-X-MAP`) as ADTS frames (`FMP4Fragment`; the init
/// section read once per URL). The decoder sees one continuous AAC or MP3 stream. Titles come from ID3
/// tags (`ID3Title`): the packed segments' own, and TS timed metadata.
extension HTTPStream {
    /// Notes kept in `StreamFacts.notes`.
    static let maxNotes = 8
    /// A segment larger than this is failed (a 10 s segment at 320 kbit/s is 400 KB).
    static let maxSegmentBytes = 8 << 20

    /// Plays the HLS playlist at `target` until it ends, fails or the stream is closed.
    func runHLS() {
        var session = HLSSession(url: target, settings: settings.hls, startAt: startAt)
        var demuxer = TSDemuxer()
        /// The init section of fragmented MP4 segments last read, by its URL.
        var fragmented: (uri: String, setup: FMP4Init)?
        /// The AES-128 key last fetched, by its URL.
        var key: (uri: String, bytes: [UInt8])?
        var step = session.start()
        while true {
            let notes = session.takeNotes()
            let onDemand = session.onDemand.map { StreamFacts.OnDemand(duration: $0.duration, segmentStart: $0.segmentStart) }
            let stop = monitor.withLock { () -> Bool in
                if state.onDemand == nil { state.onDemand = onDemand }
                if !notes.isEmpty {
                    state.notes = Array((state.notes + notes).suffix(Self.maxNotes))
                    state.noteCount += notes.count
                }
                return stopping
            }
            if stop { step = .end(failure: nil) }
            switch step {
            case .fetchPlaylist(let url):
                switch fetchWhole(url, limit: settings.hls.limits.maxBytes) {
                case .success(let bytes): step = session.playlistArrived(bytes, now: clock())
                case .failure(let failed): step = session.playlistFailed(failed.reason, now: clock())
                }
            case .fetchSegment(let segment):
                var setup: FMP4Init?
                if let map = segment.map {
                    switch initSection(map, cached: &fragmented) {
                    case .success(let read): setup = read
                    case .failure(let failed):
                        step = session.segmentFailed(failed.reason, now: clock())
                        continue
                    }
                }
                switch fetchWhole(segment.uri, limit: Self.maxSegmentBytes).flatMap({ [self] bytes in
                    decrypted(bytes, segment: segment, key: &key)
                }) {
                case .success(let bytes):
                    if segment.discontinuity { demuxer.reset() }
                    let stored: Bool
                    if let setup {
                        do throws(MP4Error) {
                            stored = storeFragment(try FMP4Fragment.adts(bytes, init: setup))
                        } catch {
                            step = session.segmentFailed(error.reason, now: clock())
                            continue
                        }
                    } else {
                        stored = storeSegment(bytes, demuxer: &demuxer)
                    }
                    guard stored else { step = .end(failure: nil); continue }
                    step = session.segmentDone(now: clock())
                case .failure(let failed):
                    step = session.segmentFailed(failed.reason, now: clock())
                }
            case .wait(let until):
                monitor.withLock {
                    while !stopping {
                        let left = until - clock()
                        if left <= 0 { break }
                        monitor.wait(seconds: left)
                    }
                }
                step = session.tick(now: clock())
            case .end(let failure):
                monitor.withLock {
                    if let failure, !stopping { state.failure = failure } else { state.ended = true }
                    state.connected = false
                    monitor.broadcast()
                }
                return
            }
        }
    }

    struct TransferFailure: Error {
        var reason: String
    }

    /// A whole response body, at most `limit` bytes (more fails the transfer).
    private func fetchWhole(_ url: String, limit: Int) -> Result<[UInt8], TransferFailure> {
        let sink = BodySink(limit: limit, stop: { [self] in monitor.withLock { stopping } })
        var callbacks = jb_http_callbacks(
            context: Unmanaged.passUnretained(sink).toOpaque(),
            header: nil,
            body: { context, data, length in
                guard let context, let data else { return 0 }
                let sink = Unmanaged<BodySink>.fromOpaque(context).takeUnretainedValue()
                return sink.take(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
            },
            should_stop: { context in
                guard let context else { return 1 }
                return Unmanaged<BodySink>.fromOpaque(context).takeUnretainedValue().stop() ? 1 : 0
            })
        let result = withExtendedLifetime(sink) { perform(url, icy: false, &callbacks) }
        if sink.overflow { return .failure(TransferFailure(reason: "larger than \(limit >> 20) MiB")) }
        if let words = failure(result) { return .failure(TransferFailure(reason: words)) }
        if result.aborted != 0 { return .failure(TransferFailure(reason: "stopped")) }
        return .success(sink.bytes)
    }

    /// The init section (`EXT-X-MAP`) at `uri`: the one read before when it is the same, else
    /// fetched and read (a failure names it, and is the segment's).
    private func initSection(_ uri: String, cached: inout (uri: String, setup: FMP4Init)?) -> Result<FMP4Init, TransferFailure> {
        if let cached, cached.uri == uri { return .success(cached.setup) }
        switch fetchWhole(uri, limit: FMP4Init.maxBytes) {
        case .failure(let failed):
            return .failure(TransferFailure(reason: "its init section failed: \(failed.reason)"))
        case .success(let bytes):
            do throws(MP4Error) {
                let setup = try FMP4Init.read(bytes)
                cached = (uri, setup)
                return .success(setup)
            } catch {
                return .failure(TransferFailure(reason: "its init section: \(error.reason)"))
            }
        }
    }

    /// A segment's bytes in the clear: as they came, or AES-128 decrypted with its key (fetched
    /// once per URL, exactly 16 bytes) and its IV (the tag's, else its sequence number).
    private func decrypted(_ bytes: [UInt8], segment: HLSSegment, key: inout (uri: String, bytes: [UInt8])?) -> Result<[UInt8], TransferFailure> {
        guard case .aes128(let uri, let iv) = segment.key else { return .success(bytes) }
        if key?.uri != uri {
            switch fetchWhole(uri, limit: 1024) {
            case .failure(let failed): return .failure(TransferFailure(reason: "its key failed: \(failed.reason)"))
            case .success(let fetched):
                guard fetched.count == 16 else { return .failure(TransferFailure(reason: "its key is \(fetched.count) bytes, not 16")) }
                key = (uri, fetched)
            }
        }
        guard let secret = key?.bytes else { return .failure(TransferFailure(reason: "no key")) }
        let vector = iv ?? HLSKeyMethod.initialisationVector(sequence: segment.sequence)
        var plain = [UInt8](repeating: 0, count: bytes.count + 16)
        var error = [CChar](repeating: 0, count: 256)
        let length = plain.withUnsafeMutableBufferPointer { out in
            jb_aes128_cbc_decrypt(secret, vector, bytes, bytes.count, out.baseAddress, &error, error.count)
        }
        guard length >= 0 else {
            let words = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(TransferFailure(reason: "cannot decrypt it: \(words)"))
        }
        plain.removeLast(plain.count - length)
        return .success(plain)
    }

    /// Puts a fragmented MP4 segment's audio (as ADTS frames) into the ring; false when the
    /// stream is stopping.
    private func storeFragment(_ adts: [UInt8]) -> Bool {
        monitor.withLock {
            if state.contentType == nil { state.contentType = "audio/aac" }
            state.connected = true
            state.reconnecting = false
        }
        return adts.isEmpty || adts.withUnsafeBytes { store($0) }
    }

    /// Puts a segment's audio into the ring; false when the stream is stopping.
    private func storeSegment(_ bytes: [UInt8], demuxer: inout TSDemuxer) -> Bool {
        let audio: [UInt8]
        if bytes.first == 0x47 {
            audio = demuxer.feed(bytes)
            demuxer.flushMetadata()
            // Timed metadata: placed at the segment's start (its audio is seconds long at most).
            for tag in demuxer.takeMetadata() {
                if let title = ID3Title.title(tag) { titleArrived(title) }
            }
            // The codec is chosen by this type (ADTS and MP3 inside TS are named by the PMT).
            let type: String? = switch demuxer.audio {
            case .aac: "audio/aac"
            case .mp3: "audio/mpeg"
            case nil: nil
            }
            monitor.withLock { if state.contentType == nil { state.contentType = type } }
        } else {
            if let title = ID3Title.title(bytes) { titleArrived(title) }
            audio = Array(bytes.dropFirst(ID3Title.tagLength(bytes)))
        }
        monitor.withLock {
            state.connected = true
            state.reconnecting = false
        }
        return audio.isEmpty || audio.withUnsafeBytes { store($0) }
    }
}

/// One response body collected whole, bounded (HLS playlists and segments, podcast feeds).
final class BodySink {
    let limit: Int
    let stop: () -> Bool
    var bytes: [UInt8] = []
    var overflow = false

    init(limit: Int, stop: @escaping () -> Bool) {
        self.limit = limit
        self.stop = stop
    }

    func take(_ data: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + data.count <= limit else {
            overflow = true
            return false
        }
        bytes.append(contentsOf: data)
        return true
    }
}

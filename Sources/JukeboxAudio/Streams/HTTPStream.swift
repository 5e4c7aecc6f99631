// SPDX-License-Identifier: MIT
import CHTTP
import Glibc
import JukeboxSystem

/// The bounds and timings of one HTTP(S) stream (the config's `radio` section).
public struct StreamSettings: Sendable, Equatable {
    /// Seconds of audio buffered before playing starts, and the ring's size (at 320 kbit/s).
    public var bufferSeconds: Double
    /// Connecting (name lookup, TCP, TLS) may take this long.
    public var connectTimeoutSeconds: Double
    /// No byte for this long ends a connection (it is then reconnected).
    public var stallSeconds: Int
    /// Once connected, the response's headers must all come within this long (a server sending
    /// them a byte at a time is cut, and reconnected, with the reason said).
    public var headerSeconds: Int
    /// Once connected, the start-up buffer must fill within this long, else the stream gives up:
    /// a server that sends a byte a second is not waited for with "buffering 0 %" for ever. At
    /// least 4 × `bufferSeconds`.
    public var startSeconds: Double
    /// Redirects followed, at most.
    public var maxRedirects: Int
    /// Bytes of header one response may send.
    public var maxHeaderBytes: Int
    /// The first and the longest wait between reconnections (doubling in between).
    public var backoff: ClosedRange<Double>
    /// A PEM bundle of certificates trusted for HTTPS besides the system's (the config's
    /// `radio.caFile`: a station on a private network with its own CA); nil: the system's only.
    public var caFile: String?
    /// HLS playback's bounds and variant cap (`HLSSession`).
    public var hls = HLSSettings()

    /// Creates settings; the defaults are docs/RADIO.md's.
    public init(bufferSeconds: Double = 2, connectTimeoutSeconds: Double = 10, stallSeconds: Int = 10,
                maxRedirects: Int = 5, maxHeaderBytes: Int = 64 << 10, backoff: ClosedRange<Double> = 0.5...30,
                caFile: String? = nil, headerSeconds: Int = 10, startSeconds: Double = 30) {
        self.caFile = caFile
        self.headerSeconds = headerSeconds
        self.startSeconds = startSeconds
        self.bufferSeconds = bufferSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.stallSeconds = stallSeconds
        self.maxRedirects = maxRedirects
        self.maxHeaderBytes = maxHeaderBytes
        self.backoff = backoff
    }

    /// Bytes a second assumed when sizing the ring: 320 kbit/s, MP3's highest bitrate.
    public static let ringBytesPerSecond = 40_000
}

/// What a stream's thread has found, read by the decoder and (through the engine) the loop.
public struct StreamFacts: Sendable, Equatable {
    /// A response is being received.
    public var connected = false
    /// Bytes waiting in the ring for the decoder.
    public var bufferedBytes = 0
    /// The `icy-name` header (cleaned), when the server sent one.
    public var station: String?
    /// The latest `StreamTitle` (cleaned), when one came.
    public var title: String?
    /// The `icy-br` header (kbit/s), when sent.
    public var bitrate: Int?
    /// The bitrate (kbit/s) the stream's own header names (Ogg Vorbis' nominal bitrate), told by
    /// the decoder: sizes the buffer when no `icy-br` came.
    public var nominalBitrate: Int?
    /// The last response's `Content-Type` (lowercased, without parameters).
    public var contentType: String?
    /// The connection was lost after audio came and a new one is being tried.
    public var reconnecting = false
    /// Monotonic time the current reconnecting began (nil while not reconnecting).
    public var reconnectingSince: Double?
    /// Connections made again after audio had come.
    public var reconnects = 0
    /// Why the last connection ended, when it ended badly.
    public var lastError: String?
    /// Why the stream gave up for good (not audio, 404, a refused format, …): the track is skipped.
    public var failure: String?
    /// The server ended the stream cleanly and it is not live (a plain file) — or a stop.
    public var ended = false
    /// The decoder ran out of bytes and waits for the buffer to fill again (`StreamDecoder`).
    public var rebuffering = false
    /// What HLS playback said last (the variant chosen, segments skipped and why), newest last,
    /// at most `HTTPStream.maxNotes`.
    public var notes: [String] = []
    /// Notes said ever (`notes` keeps the latest).
    public var noteCount = 0
    /// The whole file's length in bytes when the response is a file (a Content-Length, or the
    /// total of a 206's Content-Range, without ICY metadata): a podcast episode, not a live
    /// stream. nil for a live stream, an HLS playlist, or before the body starts.
    public var length: Int?
    /// The byte of the file the current connection's bytes begin at: 0 for a whole response
    /// (a 200, also when a range was asked and ignored), N for a `206` from byte N. nil after
    /// `restart(atByte:)` until the new connection's body begins.
    public var startByte: Int?
    /// An on-demand HLS playlist: its length in seconds, and where the first segment fetched
    /// starts (`HLSSession.onDemand`); nil for anything live.
    public var onDemand: OnDemand?

    /// An on-demand stream's length and where its audio starts.
    public struct OnDemand: Sendable, Equatable {
        public var duration: Double
        public var segmentStart: Double
    }
}

/// One HTTP(S) audio stream fetched by libcurl on its own thread (`jukebox-http`) into a bounded ring.
///
/// The thread connects (redirects, header and time bounds: `StreamSettings`), asks for ICY metadata
/// and takes it out of the audio (`ICYDemuxer`), and after a lost connection reconnects as
/// `ReconnectPolicy` decides (a doubling back-off), only ever adding the new connection's bytes
/// (nothing is replayed: a file, one with a length, goes on from the byte after the last one
/// stored by a range request). It never blocks another thread: readers wait on its monitor with a
/// timeout. What it learns is in `facts`. Before any audio came, only the network's own failures
/// are retried (`transientCodes`, 5xx: no network yet at boot); a URL that is wrong (404, not
/// audio, TLS, a refused format) fails at once (`facts.failure`). How long to go on trying is the
/// core's decision (`radio.giveUpSeconds`).
public final class HTTPStream: @unchecked Sendable {
    /// The URL asked for.
    public let url: String
    /// The settings it runs with.
    public let settings: StreamSettings

    let monitor = Monitor()
    private var ring: [UInt8]
    private var ringStart = 0
    private var ringCount = 0
    /// Audio bytes put into the ring and taken out of it, ever (titles are placed on this count).
    private var totalStored = 0
    private var totalRead = 0
    /// Titles received but not yet reached by the reader: a title shows when its audio is read, not
    /// when it arrives seconds of buffer earlier. At most `maxPendingTitles` (older ones then apply at once).
    private var pendingTitles: [(at: Int, title: String?)] = []
    static let maxPendingTitles = 16
    var state = StreamFacts()
    var stopping = false
    private var gotAudio = false
    /// The thread has returned.
    private var finished = false
    private var thread: NativeThread?
    let clock: @Sendable () -> Double

    // Per connection, touched only by the stream's thread.
    private var demuxer = ICYDemuxer(metaInterval: 0)
    private var metaInterval = 0
    private var bodyStarted = false
    private var refusal: String?
    private var headerStation: String?
    private var headerType: String?
    private var headerBitrate: Int?
    private var headerLength: Int?
    private var headerEncoding: String?
    private var headerStatus = 0
    /// `Content-Range: bytes FIRST-LAST/TOTAL` of a 206 (TOTAL nil when `*`).
    private var headerRange: (first: Int, total: Int?)?
    /// The byte the next connection asks from (`restart(atByte:)`); 0: the whole body.
    private var rangeFrom = 0
    /// Asked by `restart(atByte:)` and not yet taken by the stream's thread (guarded by `monitor`).
    private var pendingRestart: Int?
    /// The URL fetched now: `url`, or the stream a playlist at `url` named (`StreamPlaylist`).
    var target: String
    /// Playlists followed to reach `target`.
    private var playlistDepth = 0
    /// The body of a playlist response, while it arrives (at most `StreamPlaylist.maxBytes`).
    private var playlistBody: [UInt8]?
    /// `target` is an HLS playlist: `runHLS` plays it.
    var isHLS = false
    /// Seconds into an on-demand HLS playlist to start at (`HLSSession.startAt`).
    let startAt: Double

    /// Starts fetching `url` at once; an on-demand HLS playlist from `startAt` seconds in (the
    /// segment holding that place: `StreamFacts.onDemand` says where it starts).
    public init(url: String, settings: StreamSettings = StreamSettings(), startAt: Double = 0,
                clock: @escaping @Sendable () -> Double = monotonicNow) {
        self.url = url
        self.startAt = startAt
        self.target = url
        self.settings = settings
        self.clock = clock
        capacity = max(16 << 10, Int(settings.bufferSeconds * Double(StreamSettings.ringBytesPerSecond)))
        ring = [UInt8](repeating: 0, count: capacity)
        // libcurl is loaded by the first transfer, on that thread (jb_http_fetch), not here on the decoder's.
        // The thread holds the stream until it ends: `close` need not wait for it.
        thread = NativeThread(name: "jukebox-http") { [self] in self.run() }
    }

    /// The ring's size in bytes. A constant of its own: `ring.count` read from another thread is a
    /// read of the array the HTTP thread is writing (ThreadSanitizer caught the engine's buffering
    /// figure doing it).
    public let capacity: Int

    /// What the thread has found so far.
    public var facts: StreamFacts {
        monitor.withLock {
            var copy = state
            copy.bufferedBytes = ringCount
            return copy
        }
    }

    /// The outcome of a `read`.
    public enum ReadResult: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// Nothing arrived within the timeout (buffering, reconnecting).
        case pending
        /// The stream ended (a plain file's end) or was closed.
        case ended
        /// The stream gave up, with the reason.
        case failed(String)
    }

    /// Copies up to `count` buffered bytes into `buffer`, waiting at most `timeout` seconds for some.
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, timeout: Double) -> ReadResult {
        monitor.lock()
        defer { monitor.unlock() }
        let deadline = clock() + timeout
        while ringCount == 0 {
            if let failure = state.failure { return .failed(failure) }
            if state.ended || stopping { return .ended }
            let left = deadline - clock()
            if left <= 0 { return .pending }
            monitor.wait(seconds: left)
        }
        let take = min(count, ringCount)
        let first = min(take, ring.count - ringStart)
        ring.withUnsafeBytes { raw in
            buffer.copyMemory(from: raw.baseAddress! + ringStart, byteCount: first)
            if take > first { (buffer + first).copyMemory(from: raw.baseAddress!, byteCount: take - first) }
        }
        ringStart = (ringStart + take) % ring.count
        ringCount -= take
        totalRead += take
        while let first = pendingTitles.first, first.at <= totalRead {
            state.title = first.title
            pendingTitles.removeFirst()
        }
        monitor.broadcast()
        return .bytes(take)
    }

    /// Marks the reader as waiting for the buffer to fill again (shown as buffering).
    public func setRebuffering(_ on: Bool) {
        monitor.withLock { state.rebuffering = on }
    }

    /// Shows `title` as the stream's title (one the codec read from the stream itself, an Ogg
    /// link's comment header, when the decoder reached it). ICY titles still apply as their audio
    /// is read: the latest of either wins.
    public func setTitle(_ title: String) {
        monitor.withLock { state.title = title }
    }

    /// Records the bitrate the stream's own header names (`StreamFacts.nominalBitrate`).
    public func setNominalBitrate(_ kbps: Int?) {
        monitor.withLock { state.nominalBitrate = kbps }
    }

    /// Waits at most `timeout` seconds until `bytes` are buffered or the stream ends or fails.
    /// Returns the bytes buffered then.
    public func waitForBuffered(_ bytes: Int, timeout: Double) -> Int {
        monitor.lock()
        defer { monitor.unlock() }
        let deadline = clock() + timeout
        let wanted = min(bytes, ring.count)
        while ringCount < wanted && state.failure == nil && !state.ended && !stopping {
            let left = deadline - clock()
            if left <= 0 { break }
            monitor.wait(seconds: left)
        }
        return ringCount
    }

    /// Drops what is buffered and fetches the file again from byte `byte` (`Range: bytes=N-`): a
    /// podcast episode started at its place. Returns at once; `facts.startByte` is nil until the
    /// new connection's body begins, then says where its bytes really start (0 when the server
    /// ignored the range). Bytes the old connection still delivers are dropped. Nothing when closed.
    public func restart(atByte byte: Int) {
        monitor.withLock {
            guard !stopping else { return }
            pendingRestart = max(0, byte)
            ringStart = 0
            ringCount = 0
            totalRead = totalStored
            pendingTitles = []
            state.startByte = nil
            state.ended = false
            state.rebuffering = false
            if finished && state.failure == nil {
                // The whole file had come (smaller than the ring) and the thread ended: it runs
                // again. It set `finished` last, under this lock: the join is immediate.
                self.thread?.join()
                finished = false
                thread = NativeThread(name: "jukebox-http") { [self] in self.run() }
            }
            monitor.broadcast()
        }
    }

    /// Tells the thread to stop and returns at once: the engine calls it with its own lock held, and
    /// libcurl notices only at its next progress poll (about a second at most). The thread then
    /// ends by itself (detached) and frees the connection. Safe to call more than once.
    public func close() {
        let thread = monitor.withLock { () -> NativeThread? in
            stopping = true
            monitor.broadcast()
            defer { self.thread = nil }
            return self.thread
        }
        thread?.detach()
    }

    /// Waits at most `timeout` seconds for the thread to end after `close`; whether it did.
    /// (Tests: the connection is closed and nothing of the stream is left running.)
    public func waitUntilFinished(timeout: Double) -> Bool {
        monitor.withLock {
            let deadline = clock() + timeout
            while !finished {
                let left = deadline - clock()
                if left <= 0 { break }
                monitor.wait(seconds: left)
            }
            return finished
        }
    }

    // MARK: the stream's thread

    private func run() {
        defer {
            monitor.withLock {
                finished = true
                monitor.broadcast()
            }
        }
        // Again when a restart was asked as the file ended (it was smaller than the ring).
        while connections() {}
    }

    /// Connects, and again as the policy says, until the stream ends or gives up. Returns true
    /// to run again for a `restart(atByte:)` that came as the file ended.
    private func connections() -> Bool {
        var policy = ReconnectPolicy(backoff: settings.backoff)
        connecting: while !monitor.withLock({ stopping }) {
            takeRestart()
            let end = fetchOnce()
            if isHLS {
                runHLS()
                return false
            }
            // Ended for `restart(atByte:)`: fetch again from there, at once.
            if monitor.withLock({ pendingRestart != nil && !stopping }) { continue }
            let (stop, hadAudio) = monitor.withLock { (stopping, gotAudio) }
            switch policy.connectionEnded(end, hadAudio: hadAudio, stopping: stop) {
            case .follow(let next):
                // A playlist named its stream: fetch that at once.
                target = next
                playlistDepth += 1
            case .end:
                break connecting
            case .giveUp(let reason, let disconnect):
                monitor.withLock {
                    state.failure = reason
                    if disconnect { state.connected = false }
                    monitor.broadcast()
                }
                return false
            case .reconnect(let seconds, let lastError):
                let now = clock()
                // A file goes on from the byte after the last one stored (a live stream joins what
                // is on air): an episode that lost its connection does not start over.
                if monitor.withLock({ state.length != nil }) { rangeFrom += storedThisConnection }
                monitor.withLock {
                    state.connected = false
                    state.reconnecting = true
                    if state.reconnectingSince == nil { state.reconnectingSince = now }
                    state.lastError = lastError
                    monitor.broadcast()
                }
                // The back-off: woken early only by close() or restart(atByte:).
                monitor.withLock {
                    let deadline = clock() + seconds
                    while !stopping && pendingRestart == nil {
                        let left = deadline - clock()
                        if left <= 0 { break }
                        monitor.wait(seconds: left)
                    }
                }
            }
        }
        return monitor.withLock {
            if pendingRestart != nil && !stopping { return true }
            state.ended = true
            state.connected = false
            monitor.broadcast()
            return false
        }
    }

    /// Takes a pending `restart(atByte:)`: the next connection asks from that byte.
    private func takeRestart() {
        monitor.withLock {
            guard let byte = pendingRestart else { return }
            pendingRestart = nil
            rangeFrom = byte
            state.connected = false
        }
    }

    private var deliveredThisConnection = false
    /// Bytes of a whole response still to drop before the range asked (a server that ignored it).
    private var skipBytes = 0
    /// Audio bytes stored from this connection: a file's reconnection asks from after them.
    private var storedThisConnection = 0

    private func fetchOnce() -> ConnectionEnd {
        demuxer = ICYDemuxer(metaInterval: 0)
        metaInterval = 0
        bodyStarted = false
        refusal = nil
        headerStation = nil
        headerType = nil
        headerBitrate = nil
        headerLength = nil
        headerEncoding = nil
        headerStatus = 0
        headerRange = nil
        skipBytes = 0
        storedThisConnection = 0
        playlistBody = nil
        deliveredThisConnection = false
        let context = Unmanaged.passUnretained(self).toOpaque()
        var callbacks = jb_http_callbacks(
            context: context,
            header: { context, line, length in
                guard let context, let line else { return }
                let me = Unmanaged<HTTPStream>.fromOpaque(context).takeUnretainedValue()
                me.header(UnsafeRawBufferPointer(start: line, count: length))
            },
            body: { context, data, length in
                guard let context, let data else { return 0 }
                let me = Unmanaged<HTTPStream>.fromOpaque(context).takeUnretainedValue()
                return me.body(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
            },
            should_stop: { context in
                guard let context else { return 1 }
                let me = Unmanaged<HTTPStream>.fromOpaque(context).takeUnretainedValue()
                return me.monitor.withLock { me.stopping || me.pendingRestart != nil } ? 1 : 0
            })
        let result = perform(target, icy: true, rangeFrom: rangeFrom, &callbacks)
        var outcome = ConnectionEnd(deliveredAudio: deliveredThisConnection)
        if let body = playlistBody, refusal == nil {
            // A playlist: whole (the server ended it) or cut at the cap; either way read what came.
            switch StreamPlaylist.read(body) {
            case .stream(let next) where playlistDepth < StreamPlaylist.maxDepth:
                outcome.follow = next
                return outcome
            case .stream:
                outcome.fatal = "playlists nested more than \(StreamPlaylist.maxDepth) deep"
            case .hls:
                // Played by `runHLS`, which fetches the playlist again whole (this is cut at 64 KiB).
                isHLS = true
                return outcome
            case .empty:
                outcome.fatal = "the playlist names no http or https stream"
            }
            outcome.alwaysFatal = true
            return outcome
        }
        outcome.fileEnded = result.code == 0 && result.aborted == 0 && headerLength != nil && bodyStarted
        if result.header_overflow != 0 {
            outcome.fatal = headerTooLong
            outcome.alwaysFatal = true
        } else if let refusal {
            outcome.fatal = refusal
            outcome.alwaysFatal = true
        } else if let words = failure(result) {
            outcome.fatal = words
            outcome.transient = result.status >= 500 || Self.transientCodes.contains(result.code)
        }
        return outcome
    }

    private var headerTooLong: String { "the server's header is longer than \(settings.maxHeaderBytes / 1024) KiB" }

    /// Runs one libcurl transfer of `url` on this thread with the stream's settings.
    func perform(_ url: String, icy: Bool, rangeFrom: Int = 0, _ callbacks: inout jb_http_callbacks) -> jb_http_result {
        var result = jb_http_result()
        url.withCString { urlText in
            "jukebox".withCString { agent in
                (settings.caFile ?? "").withCString { caFile in
                    var options = jb_http_options(
                        url: urlText,
                        connect_timeout_ms: Int(settings.connectTimeoutSeconds * 1000),
                        stall_seconds: settings.stallSeconds,
                        header_seconds: settings.headerSeconds,
                        max_redirects: settings.maxRedirects,
                        max_header_bytes: settings.maxHeaderBytes,
                        want_icy_metadata: icy ? 1 : 0,
                        user_agent: agent,
                        ca_file: caFile,
                        range_from: Int64(rangeFrom), if_range: nil)
                    jb_http_fetch(&options, &callbacks, &result)
                }
            }
        }
        return result
    }

    /// Why a transfer failed, in words (`HTTP 404 not found`, libcurl's), or nil when it did not
    /// (ended cleanly, or ended by the caller).
    func failure(_ result: jb_http_result) -> String? {
        if result.header_overflow != 0 { return headerTooLong }
        guard result.code != 0 && result.aborted == 0 else { return nil }
        if result.status >= 400 { return "HTTP \(result.status)" + Self.reasonPhrase(result.status) }
        return withUnsafeBytes(of: result.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// libcurl's codes for a network that failed rather than a URL that is wrong: could not resolve
    /// the host (6), could not connect (7), timed out (28), nothing came back (52), sending or
    /// receiving failed (55, 56).
    static let transientCodes: Set<Int32> = [6, 7, 28, 52, 55, 56]

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 401: return " unauthorized"
        case 403: return " forbidden"
        case 404: return " not found"
        case 410: return " gone"
        case 500: return " server error"
        case 503: return " service unavailable"
        default: return ""
        }
    }

    private func header(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("HTTP/") || text.hasPrefix("ICY ") {
            // A new response (a redirect's next hop): forget the previous one's headers.
            headerStatus = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            headerRange = nil
            metaInterval = 0
            headerStation = nil
            headerType = nil
            headerBitrate = nil
            headerLength = nil
            headerEncoding = nil
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: " \t")
        switch name {
        case "icy-metaint": metaInterval = min(Int(value) ?? 0, 1 << 20)
        case "icy-name":
            // From the raw bytes: an old server's Latin-1 name is read as Latin-1, not as U+FFFD.
            let bytes = Array(line)
            let start = (bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count - 1) + 1
            headerStation = ICYDemuxer.cleanText(Array(bytes[start...]))
        case "content-length": headerLength = Int(value)
        case "content-range": headerRange = Self.contentRange(value)
        case "content-encoding": headerEncoding = value.lowercased()
        case "icy-br": headerBitrate = Int(value.split(separator: ",").first ?? "")
        case "content-type":
            headerType = value.split(separator: ";").first.map { $0.trimmingCharacters(in: " \t").lowercased() }
        default: break
        }
    }

    /// `Content-Range: bytes FIRST-LAST/TOTAL`'s first byte and total (nil for `*`); nil when it does not read.
    static func contentRange(_ value: String) -> (first: Int, total: Int?)? {
        guard value.hasPrefix("bytes ") else { return nil }
        let parts = value.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let first = Int(parts[0][..<dash]), first >= 0 else { return nil }
        let total = Int(parts[1])
        guard parts[1] == "*" || (total ?? -1) > first else { return nil }
        return (first, total)
    }

    /// Returns false to end the transfer.
    private func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let body = playlistBody {
            let room = StreamPlaylist.maxBytes - body.count
            playlistBody = body + bytes.prefix(max(0, room))
            return room > bytes.count
        }
        if !bodyStarted {
            bodyStarted = true
            if StreamPlaylist.isPlaylist(contentType: headerType, url: target) {
                playlistBody = Array(bytes.prefix(StreamPlaylist.maxBytes))
                return bytes.count < StreamPlaylist.maxBytes
            }
            if let reason = Self.refusal(contentType: headerType) ?? Self.refusal(contentEncoding: headerEncoding) {
                refusal = reason
                return false
            }
            demuxer = ICYDemuxer(metaInterval: metaInterval)
            let station = headerStation.flatMap { $0.isEmpty ? nil : $0 }
            let type = headerType, bitrate = headerBitrate
            // A file (not ICY): its length, and where these bytes start. A server that ignored
            // the range sends the whole file: the bytes before the one asked are dropped here.
            let partial = headerStatus == 206 ? headerRange : nil
            let length: Int? = metaInterval > 0 ? nil : partial.map { $0.total } ?? headerLength
            var note: String?
            if headerStatus == 206 && partial == nil {
                // Bytes from somewhere unknown are never decoded as if from where they were asked.
                refusal = "the server's partial answer has no Content-Range that reads"
                return false
            } else if let partial, partial.first != rangeFrom {
                refusal = "the server answered a range from byte \(partial.first), not \(rangeFrom)"
                return false
            } else if rangeFrom > 0 && partial == nil {
                skipBytes = rangeFrom
                note = "the server ignores byte ranges: \(rangeFrom >> 10) KiB are read to reach the place"
            }
            monitor.withLock {
                state.length = length
                state.startByte = rangeFrom
                if let note {
                    state.notes = Array((state.notes + [note]).suffix(Self.maxNotes))
                    state.noteCount += 1
                }
                state.connected = true
                if state.reconnecting { state.reconnects += 1 }
                state.reconnecting = false
                state.reconnectingSince = nil
                if station != nil { state.station = station }
                state.contentType = type
                state.bitrate = bitrate
                monitor.broadcast()
            }
        }
        var bytes = bytes
        if skipBytes > 0 {
            let drop = min(skipBytes, bytes.count)
            skipBytes -= drop
            bytes = UnsafeRawBufferPointer(rebasing: bytes[drop...])
            if bytes.isEmpty { return !monitor.withLock { stopping || pendingRestart != nil } }
        }
        var keepGoing = true
        demuxer.feed(bytes, audio: { run in
            if keepGoing { keepGoing = self.store(run) }
        }, metadata: { block in
            guard let title = ICYDemuxer.streamTitle(block) else { return }
            self.titleArrived(title)
        })
        return keepGoing
    }

    /// A title that belongs with the audio stored next: shown when the reader reaches it.
    func titleArrived(_ title: String) {
        monitor.withLock {
            if pendingTitles.count >= Self.maxPendingTitles {
                state.title = pendingTitles.removeFirst().title
            }
            if totalStored <= totalRead && pendingTitles.isEmpty {
                state.title = title.isEmpty ? nil : title
            } else {
                pendingTitles.append((totalStored, title.isEmpty ? nil : title))
            }
        }
    }

    /// Copies audio into the ring, waiting while it is full; false when stopping.
    func store(_ run: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        monitor.lock()
        defer { monitor.unlock() }
        while offset < run.count {
            while ringCount == ring.count && !stopping && pendingRestart == nil { monitor.wait(seconds: 0.5) }
            // A restart drops what the old connection still brings.
            if stopping || pendingRestart != nil { return false }
            let end = (ringStart + ringCount) % ring.count
            let room = min(ring.count - ringCount, ring.count - end, run.count - offset)
            ring.withUnsafeMutableBytes { raw in
                (raw.baseAddress! + end).copyMemory(from: run.baseAddress! + offset, byteCount: room)
            }
            ringCount += room
            totalStored += room
            storedThisConnection += room
            offset += room
            gotAudio = true
            deliveredThisConnection = true
            monitor.broadcast()
        }
        return true
    }

    /// Why a response in this Content-Encoding is not played (gzip, br, …: it was asked for
    /// `identity`, and compressed audio would only be decoded as garbage), or nil for none or identity.
    public static func refusal(contentEncoding: String?) -> String? {
        guard let encoding = contentEncoding?.trimmingCharacters(in: " \t"), !encoding.isEmpty, encoding != "identity" else { return nil }
        return "the server compressed the stream (Content-Encoding: \(TagText.clean(encoding.prefix(40))))"
    }

    /// Why a response of this type is not played, or nil when it is (a format with a codec, an
    /// octet stream, or no type given: then the first bytes decide).
    public static func refusal(contentType: String?) -> String? {
        guard let type = contentType, !type.isEmpty else { return nil }
        if StreamCodecKind.named(contentType: type) != nil || type == "application/octet-stream" || type == "binary/octet-stream" {
            return nil
        }
        if !StreamCodecKind.knownUnsupported.contains(type)
            && (type.hasPrefix("text/") || type.contains("html") || type.hasPrefix("image/") || type.hasPrefix("application/json")) {
            return "not audio (the server sent \(type))"
        }
        return "stream format \(type) is not supported yet (streams: \(StreamCodecKind.supported))"
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}

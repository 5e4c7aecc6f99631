// SPDX-License-Identifier: MIT
import CHTTP
import Glibc
import JukeboxSystem

/// How a feed is fetched: the network's bounds (libcurl through `CHTTP`, as the radio's streams).
public struct FeedFetchSettings: Equatable, Sendable {
    /// Name lookup, TCP and TLS may take this long.
    public var connectTimeoutSeconds = 15.0
    /// No byte for this long ends the fetch.
    public var stallSeconds = 30
    /// The whole fetch may take this long (a server that drips a byte a second is cut off).
    public var totalSeconds = 120.0
    public var maxRedirects = 5
    /// A PEM bundle HTTPS also trusts (`radio.caFile`), nil for the system's store only.
    public var caFile: String?

    public init() {}
}

/// One GET of a feed, on the calling thread (a worker's: never the loop's), into memory bounded by
/// `FeedLimits.maxBytes`, then `FeedParser`. Facts only: the document, or why not in words.
public enum FeedFetch {
    /// `url`'s body, or why not: `HTTP 404 not found`, libcurl's words, "the feed is larger than
    /// 8 MiB", "no answer within 120 s". `shouldStop` is asked about once a second (the player
    /// quitting).
    public static func get(_ url: String, settings: FeedFetchSettings = FeedFetchSettings(), maxBytes: Int,
                           shouldStop: @escaping () -> Bool = { false }) -> Result<[UInt8], FeedFetchError> {
        let transfer = FeedTransfer(maxBytes: maxBytes, deadline: monotonicNow() + settings.totalSeconds, shouldStop: shouldStop)
        let result = FeedHTTP.run(url, settings: settings, sink: transfer)
        if transfer.tooLarge { return .failure(.tooLarge(limit: maxBytes)) }
        if transfer.timedOut { return .failure(.failed("no whole answer within \(Int(settings.totalSeconds)) s")) }
        if transfer.stopped { return .failure(.stopped) }
        if result.header_overflow != 0 { return .failure(.failed("the server's header is longer than 64 KiB")) }
        if let words = FeedHTTP.failure(result) { return .failure(.failed(words)) }
        return .success(transfer.body)
    }

    /// `get` then `FeedParser.parse`: the document, or why not in words.
    public static func fetch(_ url: String, settings: FeedFetchSettings = FeedFetchSettings(), limits: FeedLimits = FeedLimits(),
                             shouldStop: @escaping () -> Bool = { false }) -> Result<FeedDocument, FeedFetchError> {
        switch get(url, settings: settings, maxBytes: limits.maxBytes, shouldStop: shouldStop) {
        case .failure(let error): return .failure(error)
        case .success(let body):
            switch FeedParser.parse(body, url: url, limits: limits) {
            case .success(let document): return .success(document)
            case .failure(let failure): return .failure(.refused(failure))
            }
        }
    }
}

/// Where a transfer's body goes, and whether to stop it (polled about once a second).
protocol TransferSink: AnyObject {
    /// Takes body bytes; false ends the transfer.
    func take(_ bytes: UnsafeRawBufferPointer) -> Bool
    func stops() -> Bool
    /// A header line (status lines included), before the body it heads.
    func header(_ line: String)
}

extension TransferSink {
    func header(_ line: String) {}
}

/// One GET through `CHTTP` (libcurl) on this thread, its body handed to `sink`: the feeds' and the
/// episodes' one transfer (the radio's `HTTPStream` has its own, with ICY and reconnections).
enum FeedHTTP {
    private final class Box {
        let sink: TransferSink
        init(_ sink: TransferSink) { self.sink = sink }
    }

    /// `rangeFrom` > 0 asks `Range: bytes=N-`, with `If-Range: ifRange` when given.
    static func run(_ url: String, settings: FeedFetchSettings, sink: TransferSink,
                    rangeFrom: Int64 = 0, ifRange: String? = nil) -> jb_http_result {
        let box = Box(sink)
        let context = Unmanaged.passUnretained(box).toOpaque()
        var callbacks = jb_http_callbacks(
            context: context,
            header: { context, line, length in
                guard let context, let line else { return }
                let text = String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(line), count: min(length, 1024)), as: UTF8.self)
                Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().sink.header(text)
            },
            body: { context, data, length in
                guard let context, let data else { return 0 }
                let sink = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().sink
                return sink.take(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
            },
            should_stop: { context in
                guard let context else { return 1 }
                return Unmanaged<Box>.fromOpaque(context).takeUnretainedValue().sink.stops() ? 1 : 0
            })
        var result = jb_http_result()
        withExtendedLifetime(box) {
            url.withCString { urlText in
                "jukebox".withCString { agent in
                    (settings.caFile ?? "").withCString { caFile in
                        (ifRange ?? "").withCString { validator in
                            var options = jb_http_options(
                                url: urlText, connect_timeout_ms: Int(settings.connectTimeoutSeconds * 1000),
                                stall_seconds: settings.stallSeconds, header_seconds: 0, max_redirects: settings.maxRedirects,
                                max_header_bytes: 64 * 1024, want_icy_metadata: 0, user_agent: agent, ca_file: caFile,
                                range_from: rangeFrom, if_range: validator)
                            jb_http_fetch(&options, &callbacks, &result)
                        }
                    }
                }
            }
        }
        return result
    }

    /// libcurl's failure in words: `HTTP 404`, its own message, or nil when the server ended it.
    static func failure(_ result: jb_http_result) -> String? {
        guard result.code != 0 else { return nil }
        if result.status >= 400 { return "HTTP \(result.status)" }
        let words = withUnsafeBytes(of: result.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return FeedText.clean(words.isEmpty ? "libcurl error \(result.code)" : words, maxBytes: 200)
    }
}

/// Why a fetch brought no document; `description` is the reason shown.
public enum FeedFetchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The network or the server (`HTTP 500`, libcurl's words, a timeout).
    case failed(String)
    /// More than the bound came.
    case tooLarge(limit: Int)
    /// The bytes came but are not a feed the parser takes.
    case refused(FeedFailure)
    /// The caller stopped it.
    case stopped

    public var description: String {
        switch self {
        case .failed(let words): return words
        case .tooLarge(let limit): return FeedFailure.tooLarge(limit: limit).description
        case .refused(let failure): return failure.description
        case .stopped: return "stopped"
        }
    }
}

/// One transfer's body so far (a `BodySink`) and why it ended; touched by libcurl's callbacks on
/// the fetching thread only.
final class FeedTransfer: TransferSink {
    let sink: BodySink
    let deadline: Double
    var timedOut = false
    var stopped = false

    init(maxBytes: Int, deadline: Double, shouldStop: @escaping () -> Bool) {
        sink = BodySink(limit: maxBytes, stop: shouldStop)
        self.deadline = deadline
    }

    var body: [UInt8] { sink.bytes }
    var tooLarge: Bool { sink.overflow }

    /// Appends `bytes`; false (the transfer ends) past the bound.
    func take(_ bytes: UnsafeRawBufferPointer) -> Bool { sink.take(bytes) }

    func stops() -> Bool {
        if sink.stop() { stopped = true }
        if monotonicNow() > deadline { timedOut = true }
        return stopped || timedOut
    }
}

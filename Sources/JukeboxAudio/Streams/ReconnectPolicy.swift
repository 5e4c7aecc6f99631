// SPDX-License-Identifier: MIT

/// How one connection of an `HTTPStream` ended, as its thread saw it.
struct ConnectionEnd: Equatable {
    /// Why it ended badly (an HTTP status, libcurl's words, a refusal), nil when it ended cleanly.
    var fatal: String?
    /// Not worth retrying even after audio came (a refused format, an endless header, a playlist
    /// that names no stream).
    var alwaysFatal = false
    /// This connection put audio into the ring.
    var deliveredAudio = false
    /// A response with a length arrived whole: a file, not a live stream, so its end is the end.
    var fileEnded = false
    /// The network failed, not the URL: no name resolution, no connection, no answer in time, a
    /// connection cut, a 5xx. Tried again even before any audio came.
    var transient = false
    /// The response was a playlist naming this stream.
    var follow: String?
}

/// The stream thread's retry decisions, pure: after each connection, whether to follow a
/// playlist, end, give up (and why) or reconnect after a doubling back-off. The thread only
/// carries the action out (`HTTPStream.run`). Before any audio came, only the network's own
/// failures are retried (no network yet at boot, a station's server restarting); a 404, not audio,
/// TLS, a refused format are final. After audio came every loss is retried, the back-off starting
/// again from its lower bound after a connection that delivered audio. How long to go on trying
/// is the core's decision (`radio.giveUpSeconds`), not this one's.
struct ReconnectPolicy: Equatable {
    /// The first and the longest wait (`StreamSettings.backoff`).
    let backoff: ClosedRange<Double>
    /// The wait before the next reconnection.
    private(set) var delay: Double

    init(backoff: ClosedRange<Double>) {
        self.backoff = backoff
        delay = backoff.lowerBound
    }

    enum Action: Equatable {
        /// Fetch the stream a playlist named, at once (no back-off, not a reconnection).
        case follow(String)
        /// The stream is over (a stop, or a file's end after audio): `facts.ended`.
        case end
        /// Give up for good with this reason (`facts.failure`); `disconnect`: also mark it no longer connected.
        case giveUp(String, disconnect: Bool)
        /// Show the stream as reconnecting (with this last error), wait `seconds` (only a stop
        /// wakes it early), then connect again.
        case reconnect(after: Double, lastError: String)
    }

    /// Decides what follows a connection's end. `hadAudio`: any connection of this stream put
    /// audio into the ring; `stopping`: `close()` was called.
    mutating func connectionEnded(_ end: ConnectionEnd, hadAudio: Bool, stopping: Bool) -> Action {
        if let next = end.follow { return .follow(next) }
        if stopping || (end.fileEnded && hadAudio) { return .end }
        if let fatal = end.fatal, (!hadAudio && !end.transient) || end.alwaysFatal {
            return .giveUp(fatal, disconnect: true)
        }
        if !hadAudio && !end.transient {
            // Ended cleanly before any audio: an empty body, nothing to retry.
            return .giveUp(end.fatal ?? "the server sent no audio", disconnect: false)
        }
        if end.deliveredAudio { delay = backoff.lowerBound }
        let wait = delay
        delay = min(backoff.upperBound, delay * 2)
        return .reconnect(after: wait, lastError: end.fatal ?? "the server ended the stream")
    }
}

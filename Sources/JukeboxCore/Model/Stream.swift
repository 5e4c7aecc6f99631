// SPDX-License-Identifier: MIT

/// What the stream adapter found about the HTTP(S) stream being played: facts only. The core decides
/// what to show and when to give up (`Reduce+Stream.swift`).
public struct StreamStatus: Equatable, Sendable {
    /// The station's name (`icy-name`), cleaned by the adapter; nil when the server sent none.
    public var station: String?
    /// What is on air (the ICY `StreamTitle`), cleaned; nil when none came.
    public var title: String?
    /// How full the start-up buffer is, 0–100 (100 once it is full).
    public var bufferedPercent: Int
    /// Seconds since the connection was lost and reconnecting began; nil while connected.
    public var reconnectingFor: Double?
    /// Why the last connection ended, when it ended badly.
    public var lastError: String?
    /// Connections made again since the stream started (each after audio had come).
    public var reconnects: Int
    /// The stream ran dry while playing and is filling its buffer again.
    public var rebuffering: Bool
    /// What the adapter said about the stream as it went (an HLS station's variant, segments
    /// skipped and why), the latest few, newest last.
    public var notes: [String]
    /// Notes said since the stream started: the ones past the last status's count are new.
    public var noteCount: Int
    /// The stream is on demand (an HLS playlist with ENDLIST) and lasts this many seconds: it can
    /// seek and pause at a place (`State.onDemandStream`). Nil for a live stream.
    public var onDemandDuration: Double?

    /// Creates a status.
    public init(station: String? = nil, title: String? = nil, bufferedPercent: Int = 0,
                reconnectingFor: Double? = nil, lastError: String? = nil, reconnects: Int = 0,
                rebuffering: Bool = false, notes: [String] = [], noteCount: Int = 0, onDemandDuration: Double? = nil) {
        self.onDemandDuration = onDemandDuration
        self.notes = notes
        self.noteCount = noteCount
        self.reconnects = reconnects
        self.rebuffering = rebuffering
        self.station = station
        self.title = title
        self.bufferedPercent = bufferedPercent
        self.reconnectingFor = reconnectingFor
        self.lastError = lastError
    }
}

/// A queue entry's stream that said it is on demand, and its length: kept past the play that said
/// it (a pause disconnects), so a seek or a resume while paused starts at the place.
public struct OnDemandStream: Equatable, Sendable {
    /// The queue entry (`Track.id`).
    public var trackID: UInt64
    /// Seconds.
    public var duration: Double

    /// Creates one.
    public init(trackID: UInt64, duration: Double) {
        self.trackID = trackID
        self.duration = duration
    }
}

/// A stream status and the play it is of.
public struct PlayStreamStatus: Equatable, Sendable {
    /// The play (`Command.startTrack`'s id) the status is of.
    public var playID: UInt64
    /// The facts.
    public var status: StreamStatus

    /// Creates one.
    public init(playID: UInt64, status: StreamStatus) {
        self.playID = playID
        self.status = status
    }
}

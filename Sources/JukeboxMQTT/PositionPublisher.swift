// SPDX-License-Identifier: MIT

/// When the MQTT face publishes the position, a pure state machine beside the bridge: at most
/// every `interval` seconds while it runs as expected, and at once after a jump (a seek, another
/// track, a stop or a start), which is what Home Assistant needs to draw a moving position
/// without a message a second. Tested by a table (`PositionPublisherTests`).
struct PositionPublisher: Equatable {
    /// Seconds between two publications of a position that runs as expected.
    let interval: Double
    /// A position this far (seconds) from the one expected is a jump: published at once.
    static let jumpThreshold = 1.5

    /// What was seen last: the position, when, when it was last published, the file and whether
    /// it was running (playing).
    struct Seen: Equatable {
        var value: Double
        var at: Double
        var published: Double
        var file: String
        var phase: String
        var running: Bool
    }
    private var last: Seen?
    /// The position published last (nil: none, or none since `forget`).
    private(set) var published: Double?

    init(interval: Double) {
        self.interval = interval
    }


    /// A status read at `now`: the position (nil: none), its file, the phase, and whether the
    /// position runs (playing). Returns whether the position is to be published now; when not,
    /// the published value stays what it was.
    mutating func observe(_ position: Double?, file: String, phase: String, running: Bool, now: Double) -> Bool {
        if let p = position, let seen = last,
           !Self.publishes(p, file: file, phase: phase, running: running, now: now, after: seen, interval: interval) {
            last = Seen(value: p, at: now, published: seen.published, file: file, phase: phase, running: running)
            return false
        }
        last = position.map { Seen(value: $0, at: now, published: now, file: file, phase: phase, running: running) }
        published = position
        return true
    }

    /// The rule, pure: whether a position read at `now` is published after `seen` (what was read
    /// before, and when it was last published). A jump is published at once: more than
    /// `jumpThreshold` seconds from where the last one would be by now (it runs only while it was
    /// running), another file or another phase; a position that runs as expected, every
    /// `interval` seconds. (No position, or none seen before, is always published.)
    static func publishes(_ position: Double, file: String, phase: String, running: Bool, now: Double,
                          after seen: Seen, interval: Double) -> Bool {
        let expected = seen.running ? seen.value + (now - seen.at) : seen.value
        let jumped = abs(position - expected) > jumpThreshold || file != seen.file || phase != seen.phase
        return jumped || (running && now - seen.published >= interval)
    }

    /// Forgets what was published (a new connection to the broker publishes everything again).
    mutating func forget() {
        last = nil
        published = nil
    }
}

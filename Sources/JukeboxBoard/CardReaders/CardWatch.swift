// SPDX-License-Identifier: MIT

/// A reader that can look for a card on demand (`MFRC522`, `PN532`): it sees a card lying on it,
/// so it can tell when it is taken away.
public protocol CardLooker: AnyObject {
    /// Brings the chip up (reset, configuration); throws when it is absent or answers nonsense.
    func start() throws(DeviceError)
    /// Looks once for a card (a few ms). Throws only for the chip itself (then `start` again).
    func look() throws(DeviceError) -> CardLook
}

extension MFRC522: CardLooker {}

/// Turns looks into placements and removals. A card is placed when a look finds it (a
/// different card replaces the one there, as a removal then a placement); it is removed after
/// `missesToRemove` looks in a row without it (nothing, an error, or another failure), so one
/// look spoiled by a card held at the edge of the field or by noise does not count as a
/// removal. Pure: the caller looks and feeds.
public struct CardPresence: Sendable, Equatable {
    /// What changed.
    public enum Change: Equatable, Sendable {
        /// A card (its UID in hex) came into the field.
        case placed(String)
        /// The card left the field.
        case removed(String)
    }

    /// Looks in a row without the card before it counts as removed (3 at 100 ms: 0.3 s).
    public var missesToRemove: Int
    /// The card in the field, as far as is known.
    public private(set) var present: String?
    private var misses = 0

    /// Nothing in the field.
    public init(missesToRemove: Int = 3) {
        self.missesToRemove = max(1, missesToRemove)
    }

    /// One look's result.
    public mutating func feed(_ look: CardLook) -> [Change] {
        if case .card(let uid) = look {
            let id = ISO14443A.hex(uid)
            misses = 0
            guard id != present else { return [] }
            let out: [Change] = present.map { [.removed($0), .placed(id)] } ?? [.placed(id)]
            present = id
            return out
        }
        guard let card = present else { return [] }
        misses += 1
        guard misses >= missesToRemove else { return [] }
        present = nil
        misses = 0
        return [.removed(card)]
    }

    /// The chip was lost: whatever was there is no longer seen.
    public mutating func lost() -> [Change] {
        defer { present = nil; misses = 0 }
        return present.map { [.removed($0)] } ?? []
    }
}

/// One reader polled: the chip started (again after a failure), a look, and what it means.
/// Problems are reported once each, and their end once. Not thread-safe: the polling thread owns it.
public final class CardWatch {
    /// What one poll produced.
    public enum Output: Equatable, Sendable {
        case placed(String)
        case removed(String)
        /// A new problem with the chip or a card read (one line, for the log).
        case problem(String)
        /// The chip answers again after a problem.
        case recovered(String)
    }

    private let reader: any CardLooker
    /// The presence rule.
    public private(set) var presence: CardPresence
    private var started = false
    private var chipProblem: String?
    private var lastFailure: String?

    /// Watches `reader`; nothing is sent before the first `poll()`.
    public init(_ reader: any CardLooker, missesToRemove: Int = 3) {
        self.reader = reader
        self.presence = CardPresence(missesToRemove: missesToRemove)
    }

    /// Starts the chip if it is not, looks once, and says what changed.
    public func poll() -> [Output] {
        var out: [Output] = []
        do throws(DeviceError) {
            if !started {
                try reader.start()
                started = true
                if let was = chipProblem { out.append(.recovered("reader answers again (after: \(was))")) }
                chipProblem = nil
            }
            let look = try reader.look()
            if case .failed(let why) = look {
                if why != lastFailure { out.append(.problem("card read failed: " + why)) }
                lastFailure = why
            } else {
                lastFailure = nil
            }
            out += presence.feed(look).map(Self.output)
        } catch {
            started = false
            // One report per outage: the failed look and the failed restarts after it say
            // different words about the same thing.
            if chipProblem == nil { out.append(.problem(error.message)) }
            chipProblem = chipProblem ?? error.message
            out += presence.lost().map(Self.output)
        }
        return out
    }

    private static func output(_ change: CardPresence.Change) -> Output {
        switch change {
        case .placed(let id): return .placed(id)
        case .removed(let id): return .removed(id)
        }
    }
}

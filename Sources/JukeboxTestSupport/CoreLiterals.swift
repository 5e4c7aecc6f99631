// SPDX-License-Identifier: MIT
import JukeboxCore

// Literal builders for expected values. A test states what it expects in numbers and words, not
// through the core's own helpers (`StatusView.init`, `State.snapshot`, `State.saveMark`): an
// expectation computed by the code under test cannot catch that code's mistakes.

/// A tagged track at `/music/N.flac` titled "Song N" by "Band", lasting 100 s.
public func info(_ n: Int, duration: Double? = 100) -> TrackInfo {
    TrackInfo(path: "/music/\(n).flac", title: "Song \(n)", artist: "Band", duration: duration)
}

/// A status, every field given: what `render` should carry.
public func status(_ phase: String, title: String = "", artist: String? = nil, elapsed: String = "--:--",
                   duration: String = "--:--", index: Int = 0, of count: Int = 0, volume: Int = 100,
                   shuffle: Bool = false, repeat repeatMode: RepeatMode = .off, message: String? = nil,
                   sleep: String? = nil, speed: String? = nil, download: String? = nil, output: String? = nil) -> StatusView {
    // StatusView has no memberwise initializer; every field is overwritten below, so nothing of
    // the empty state's view survives.
    var v = StatusView(State())
    guard let shown = ShownPhase(rawValue: phase) else { preconditionFailure("not a shown phase: \(phase)") }
    v.phase = shown
    v.title = title
    v.artist = artist
    v.elapsed = elapsed
    v.duration = duration
    v.index = index
    v.count = count
    v.volume = volume
    v.shuffle = shuffle
    v.repeatMode = repeatMode
    v.message = message
    v.sleep = sleep
    v.speed = speed
    v.download = download
    v.output = output
    return v
}

/// The status of `info(song)` (title "Song N" by "Band", 1:40 long) at `index` of `count`.
public func status(_ phase: String, song: Int, index: Int, of count: Int, elapsed: String = "0:00",
                   duration: String = "1:40", volume: Int = 100, shuffle: Bool = false,
                   repeat repeatMode: RepeatMode = .off, message: String? = nil, sleep: String? = nil,
                   speed: String? = nil, output: String? = nil) -> StatusView {
    status(phase, title: "Song \(song)", artist: "Band", elapsed: elapsed, duration: duration, index: index,
           of: count, volume: volume, shuffle: shuffle, repeat: repeatMode, message: message, sleep: sleep, speed: speed,
           output: output)
}

/// What was saved last, every field given.
public func mark(revision: Int, current: UInt64?, phase: SavedPhase, shuffle: Bool = false,
                 repeat repeatMode: RepeatMode = .off, volume: Int = 100, speed: Double? = nil,
                 bookmarkReset: BookmarkReset? = nil) -> SaveMark {
    // SaveMark's initializer is internal; every field is overwritten below.
    var m = State().saveMark
    (m.queueRevision, m.currentTrackID, m.phase) = (revision, current, phase)
    (m.shuffle, m.repeatMode, m.volume, m.speed) = (shuffle, repeatMode, volume, speed)
    m.bookmarkReset = bookmarkReset
    return m
}

/// A button's state: `pressed` as accepted, `level` as last seen (by default the same).
public func button(_ pressed: Bool, level: Bool? = nil, settling: Bool = false, longFired: Bool = false,
                   consumed: Bool = false, tapPending: Bool = false, readAt: Double? = nil) -> ButtonState {
    var b = ButtonState()
    b.pressed = pressed
    b.level = level ?? pressed
    b.settling = settling
    b.longFired = longFired
    b.consumed = consumed
    b.tapPending = tapPending
    b.readAt = readAt
    return b
}

/// The rotary encoder's decoder state.
public func encoder(ab: UInt8 = 0, steps: Int = 0, lastDetentAt: Double = -1) -> EncoderState {
    var e = EncoderState()
    e.ab = ab
    e.steps = steps
    e.lastDetentAt = lastDetentAt
    return e
}

/// Swift source for core values, in the vocabulary above: what a failing `send` prints so the
/// expectation can be read (and, after checking it, pasted) as literals.
public enum CoreSource {
    /// `value` as a Swift expression.
    public static func of(_ value: Any) -> String {
        switch value {
        case let v as String: return v.debugDescription
        case let v as Double: return number(v)
        case let v as Int: return String(v)
        case let v as Int32: return String(v)
        case let v as UInt64: return String(v)
        case let v as UInt8: return String(v)
        case let v as Bool: return String(v)
        case let v as TrackInfo: return trackInfo(v)
        case let v as StatusView: return statusView(v)
        case let v as SaveMark:
            var args = ["revision: \(v.queueRevision)", "current: \(of(v.currentTrackID as Any))", "phase: .\(v.phase.rawValue)"]
            if v.shuffle { args.append("shuffle: true") }
            if v.repeatMode != .off { args.append("repeat: .\(v.repeatMode)") }
            if v.volume != 100 { args.append("volume: \(v.volume)") }
            if let s = v.speed { args.append("speed: \(number(s))") }
            if let r = v.bookmarkReset { args.append("bookmarkReset: \(of(r))") }
            return "mark(\(args.joined(separator: ", ")))"
        case let v as ButtonState:
            var args = [String(v.pressed)]
            if v.level != v.pressed { args.append("level: \(v.level)") }
            if v.settling { args.append("settling: true") }
            if v.longFired { args.append("longFired: true") }
            if v.consumed { args.append("consumed: true") }
            if v.tapPending { args.append("tapPending: true") }
            if let r = v.readAt { args.append("readAt: \(number(r))") }
            return "button(\(args.joined(separator: ", ")))"
        case let v as EncoderState:
            var args: [String] = []
            if v.ab != 0 { args.append("ab: \(v.ab)") }
            if v.steps != 0 { args.append("steps: \(v.steps)") }
            if v.lastDetentAt != -1 { args.append("lastDetentAt: \(number(v.lastDetentAt))") }
            return "encoder(\(args.joined(separator: ", ")))"
        case let v as Snapshot: return snapshot(v)
        case let v as DisplayFrame:
            var args = ["rows: \(of(v.rows))"]
            if let p = v.progress { args.append("progress: \(number(p))") }
            if let r = v.progressRow { args.append("progressRow: \(r)") }
            return "DisplayFrame(\(args.joined(separator: ", ")))"
        case let v as [Button: ButtonState]:
            if v.isEmpty { return "[:]" }
            return "[" + v.sorted { $0.key.rawValue < $1.key.rawValue }.map { ".\($0.key): \(of($0.value))" }
                .joined(separator: ", ") + "]"
        default: return reflected(value)
        }
    }

    /// The statements that turn `before` into `after`, one `$0.field = value` a changed field.
    public static func change(from before: State, to after: State) -> [String] {
        var lines: [String] = []
        let b = Array(Mirror(reflecting: before).children), a = Array(Mirror(reflecting: after).children)
        for (i, child) in a.enumerated() {
            guard let label = child.label, String(reflecting: b[i].value) != String(reflecting: child.value) else { continue }
            if label == "buttons", let old = b[i].value as? [Button: ButtonState],
               let new = child.value as? [Button: ButtonState] {
                for key in Set(old.keys).union(new.keys).sorted(by: { $0.rawValue < $1.rawValue }) where old[key] != new[key] {
                    lines.append("$0.buttons[.\(key)] = " + (new[key].map { of($0) } ?? "nil"))
                }
            } else if label == "settings" {
                // Settings has too many fields to spell out: only the changed ones.
                let old = Array(Mirror(reflecting: b[i].value).children)
                for (j, field) in Mirror(reflecting: child.value).children.enumerated()
                where String(reflecting: old[j].value) != String(reflecting: field.value) {
                    lines.append("$0.settings.\(field.label ?? "?") = \(of(field.value))")
                }
            } else {
                lines.append("$0.\(label) = \(of(child.value))")
            }
        }
        return lines
    }

    static func number(_ v: Double) -> String {
        if v.isNaN { return ".nan" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
        return String(v)
    }

    static func trackInfo(_ v: TrackInfo) -> String {
        let stem = v.path.dropFirst("/music/".count).dropLast(".flac".count)
        if v.path.hasPrefix("/music/"), v.path.hasSuffix(".flac"), let n = Int(stem), v.title == "Song \(n)",
           v.artist == "Band", v.album == nil, v.trackNumber == nil, v.discNumber == nil, v.loudness == nil {
            if v.duration == 100 { return "info(\(n))" }
            return "info(\(n), duration: \(of(v.duration as Any)))"
        }
        return reflected(v)
    }

    static func statusView(_ v: StatusView) -> String {
        var args = [of(v.phase.rawValue)]
        if v.artist == "Band", v.title.hasPrefix("Song "), let n = Int(v.title.dropFirst(5)) {
            args += ["song: \(n)", "index: \(v.index)", "of: \(v.count)"]
            if v.elapsed != "0:00" { args.append("elapsed: \(of(v.elapsed))") }
            if v.duration != "1:40" { args.append("duration: \(of(v.duration))") }
        } else {
            if v.title != "" { args.append("title: \(of(v.title))") }
            if let a = v.artist { args.append("artist: \(of(a))") }
            if v.elapsed != "--:--" { args.append("elapsed: \(of(v.elapsed))") }
            if v.duration != "--:--" { args.append("duration: \(of(v.duration))") }
            if v.index != 0 { args.append("index: \(v.index)") }
            if v.count != 0 { args.append("of: \(v.count)") }
        }
        if v.volume != 100 { args.append("volume: \(v.volume)") }
        if v.shuffle { args.append("shuffle: true") }
        if v.repeatMode != .off { args.append("repeat: .\(v.repeatMode)") }
        if let m = v.message { args.append("message: \(of(m))") }
        if let s = v.sleep { args.append("sleep: \(of(s))") }
        if let s = v.speed { args.append("speed: \(of(s))") }
        if let o = v.output { args.append("output: \(of(o))") }
        return "status(\(args.joined(separator: ", ")))"
    }

    static func snapshot(_ v: Snapshot) -> String {
        var args: [String] = []
        if v.version != Snapshot.currentVersion { args.append("version: \(v.version)") }
        if !v.tracks.isEmpty { args.append("tracks: \(of(v.tracks))") }
        if let o = v.order { args.append("order: \(of(o))") }
        if let c = v.current { args.append("current: \(c)") }
        if v.position != 0 { args.append("position: \(number(v.position))") }
        if v.phase != .stopped { args.append("phase: .\(v.phase.rawValue)") }
        if v.shuffle { args.append("shuffle: true") }
        if v.shuffleSeed != 0 { args.append("shuffleSeed: \(v.shuffleSeed)") }
        if v.repeatMode != .off { args.append("repeatMode: .\(v.repeatMode)") }
        if v.volume != 100 { args.append("volume: \(v.volume)") }
        if let source = v.source { args.append("source: \(of(source))") }
        if let s = v.speed { args.append("speed: \(number(s))") }
        if let l = v.listening { args.append("listening: \(of(l))") }
        if let r = v.bookmarkReset { args.append("bookmarkReset: \(of(r))") }
        return "Snapshot(\(args.joined(separator: ", ")))"
    }

    /// Optionals, arrays, enums and structs through `Mirror`.
    static func reflected(_ value: Any) -> String {
        let m = Mirror(reflecting: value)
        switch m.displayStyle {
        case .optional:
            guard let some = m.children.first else { return "nil" }
            return of(some.value)
        case .collection, .set:
            return "[" + m.children.map { of($0.value) }.joined(separator: ", ") + "]"
        case .enum:
            guard let payload = m.children.first, let name = payload.label else { return ".\(value)" }
            let inner = Mirror(reflecting: payload.value)
            if inner.displayStyle == .tuple {
                let args = inner.children.map { c -> String in
                    let label = c.label.flatMap { $0.hasPrefix(".") ? nil : $0 }
                    return (label.map { "\($0): " } ?? "") + of(c.value)
                }
                return ".\(name)(\(args.joined(separator: ", ")))"
            }
            // A single payload loses its label in the mirror; the default description keeps it.
            let described = String(describing: value)
            let rest = described.dropFirst(name.count + 1)
            if let colon = rest.firstIndex(of: ":"), rest[rest.startIndex..<colon].allSatisfy({ $0.isLetter || $0.isNumber }),
               !rest[rest.startIndex..<colon].isEmpty {
                return ".\(name)(\(rest[rest.startIndex..<colon]): \(of(payload.value)))"
            }
            return ".\(name)(\(of(payload.value)))"
        case .struct, .class:
            let args = m.children.map { "\($0.label ?? "_"): \(of($0.value))" }
            return "\(type(of: value))(\(args.joined(separator: ", ")))"
        case .tuple:
            return "(" + m.children.map { of($0.value) }.joined(separator: ", ") + ")"
        default:
            return String(describing: value)
        }
    }
}

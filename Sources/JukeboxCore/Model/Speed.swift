// SPDX-License-Identifier: MIT

/// Playback speed with the pitch kept, for spoken word (an audiobook at 1.25×, music at 1×).
/// Which speed a play gets is decided here; the audio adapter only stretches (libSoundTouch).
public enum Speed {
    /// The speeds accepted, from config, a card or `speed X`.
    public static let range: ClosedRange<Double> = 0.75...2

    /// `text` as a speed: a decimal number within `range` (`1.25`, also `1.25x`); nil otherwise.
    public static func parse(_ text: String) -> Double? {
        var word = Substring(text)
        if word.hasSuffix("x") || word.hasSuffix("×") { word = word.dropLast() }
        guard word.utf8.count <= 8, word.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E }),
              let value = Double(word), range.contains(value) else { return nil }
        return value
    }

    /// How a speed is shown: `1.25`, `1` (at most two decimals).
    public static func text(_ speed: Double) -> String {
        let hundredths = Int((speed * 100).rounded())
        let whole = hundredths / 100
        let rest = hundredths % 100
        if rest == 0 { return String(whole) }
        return rest % 10 == 0 ? "\(whole).\(rest / 10)" : "\(whole).\(rest < 10 ? "0" : "")\(rest)"
    }
}

extension State {
    /// The speed a play of `path` gets: the queue's own (a card's, or `speed X`), else that of the
    /// innermost folder of `settings.speeds` holding it, else 1. A podcast episode played from its
    /// URL is a file on a server: it gets the queue's speed (folders name no URL); any other
    /// stream plays at 1 (a live stream cannot be played faster than it arrives).
    public func speed(for path: String) -> Double {
        if Library.isStreamURL(path) { return isPodcastEpisode(path) ? queueSpeed ?? 1 : 1 }
        if let queueSpeed { return queueSpeed }
        var best: (length: Int, speed: Double)?
        for (folder, speed) in settings.speeds where Paths.isInside(path, folder: folder) {
            let length = folder.utf8.count
            if best == nil || length > best!.length { best = (length, speed) }
        }
        return best?.speed ?? 1
    }

    /// The panel's mark for the current track's speed (`1.25x`), nil at 1: ASCII, which every
    /// panel's character set has.
    var playingSpeedMark: String? {
        cursor.flatMap { playSpeed(at: $0) }.map { Speed.text($0) + "x" }
    }

    /// The speed for the track at order index `index`, as `startTrack`/`setNext` carry it: nil at
    /// 1, so the engine puts no stretcher in the path and samples pass bit-exact.
    public func playSpeed(at index: Int) -> Double? {
        guard order.indices.contains(index), let track = track(id: order[index]) else { return nil }
        let speed = speed(for: track.info.path)
        return speed == 1 ? nil : speed
    }

    /// `speed X` (nil: back to the folders' speeds) for the queue loaded. The track playing or
    /// paused changes speed in place (`followSpeeds`).
    mutating func setSpeed(_ speed: Double?, _ step: inout Step) {
        guard speed.map({ Speed.range.contains($0) }) ?? true else { return }
        let was = playingSpeeds
        queueSpeed = speed
        followSpeeds(from: was, &step)
    }

    /// The speeds the play loaded and the successor auto-advance would play get now (nil: 1),
    /// to compare after `queueSpeed` or `settings.speeds` changed.
    var playingSpeeds: (current: Double?, next: Double?) {
        (cursor.flatMap { playSpeed(at: $0) }, autoAdvanceTarget().flatMap { playSpeed(at: $0) })
    }

    /// After the speeds changed (`speed X`, a config reload): the track playing or paused
    /// changes speed in place (`Command.setSpeed`: no reopen, no new buffering; the place heard
    /// does not move), and a successor already handed at another speed is handed again.
    mutating func followSpeeds(from was: (current: Double?, next: Double?), _ step: inout Step) {
        guard let loaded else { return }
        let now = playingSpeeds
        if was.current != now.current, phase == .playing || phase == .paused {
            step.commands.append(.setSpeed(playID: loaded.playID, speed: now.current))
        }
        // `finish` hands it again (`syncNext`) at its new speed.
        if handedNext != nil, was.next != now.next { handNextAgain() }
    }
}

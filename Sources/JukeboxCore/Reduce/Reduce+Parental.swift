// SPDX-License-Identifier: MIT

// Parental rules (config `parental`): quiet hours, a daily listening limit, volume caps by time of
// day and output. The shell reports facts only: the local time and whether the kernel holds the
// wall clock synchronised (`Event.wallClock`), and monotonic time (ticks). Everything else is here.
//
// The wall clock is trusted only while synchronised. Before that (a board without a real-time clock
// boots with a stale time) the time of day is unknown: quiet hours neither refuse nor allow by
// time — what is asked plays — but every volume cap that could apply at some time of day applies
// (the quiet hours' and every cap of the output), and the limit's day does not change.
// The limit counts monotonic seconds while playing, so no jump of the wall clock adds or removes
// listening; the wall clock only says when a new listening day begins.
extension State {
    /// Whether the player wants sound now, an interruption's end included.
    var soundWanted: Bool {
        if case .interrupted = phase { return afterInterruption == .playing }
        return wantsSound
    }

    /// The local time, while the wall clock is synchronised; nil: not known.
    public var wallTime: LocalTime? { parental.clockSynchronized ? parental.clock : nil }

    /// Whether it is quiet hours now: nil when quiet hours are configured but the time is not
    /// known, false without quiet hours.
    public var quietNow: Bool? {
        guard let quiet = settings.parental.quietHours else { return false }
        return wallTime.map { quiet.window.contains($0.minute) }
    }

    /// Seconds of listening left today; nil without a daily limit.
    public var listeningLeft: Double? {
        settings.parental.dailyLimit.map { max(0, $0 - parental.listening.seconds) }
    }

    /// The panel's mark of the day's listening left (`L4`: whole minutes, rounded up, at most
    /// 99), shown from the warning's time on (`warnBefore`) and once the limit is reached (`L0`);
    /// nil without a daily limit or before then.
    var listeningPanelMark: String? {
        guard let left = listeningLeft, left <= settings.parental.warnBefore else { return nil }
        return "L\(min(99, Int((left / 60).rounded(.up))))"
    }

    /// Why a track at `path` may not start or go on now; nil: it may.
    func parentalRefusal(path: String) -> String? {
        let rules = settings.parental
        if let left = listeningLeft, left <= 0 {
            return "daily listening limit reached: plays again after " + LocalTime.text(rules.resetAt)
        }
        if quietNow == true, let quiet = rules.quietHours,
           !quiet.folders.contains(where: { path == $0 || path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }) {
            return "quiet hours until " + LocalTime.text(quiet.window.to)
        }
        return nil
    }

    /// The lowest volume cap of the parental rules that holds now, nil: none. With the time not
    /// known, every cap of the output that could hold at some time of day.
    var parentalVolumeCap: Int? {
        let rules = settings.parental
        let minute = wallTime?.minute
        var caps: [Int] = []
        if let quiet = rules.quietHours, let max = quiet.volumeMax, quietNow != false { caps.append(max) }
        let output: CapOutput = headphonesIn == true ? .headphones : .speaker
        for cap in rules.caps where cap.output == nil || cap.output == output {
            if minute.map({ cap.window.contains($0) }) ?? true { caps.append(cap.volumeMax) }
        }
        return caps.min()
    }

    /// `Event.wallClock`: the time and whether to trust it. A new listening day starts the count
    /// again; a cap that now holds turns the volume down.
    mutating func wallClock(_ time: LocalTime, synchronized: Bool, _ step: inout Step) {
        let was = parental.clockSynchronized
        parental.clock = time
        parental.clockSynchronized = synchronized
        if synchronized != was, !settings.parental.isEmpty {
            step.commands.append(.report(synchronized ? "wall clock synchronised: parental rules follow the time of day"
                                                      : "wall clock not synchronised: parental rules hold every volume cap"))
        }
        followListeningDay(&step)
        if synchronized, let held = parental.heldVolume {
            // The time is known: what only an unknown time held back comes back, within the caps
            // that hold now.
            parental.heldVolume = nil
            setVolume(held, &step)
        } else if clampVolume(volume) != volume {
            setVolume(cappedVolume(wanting: volume), &step)
        }
    }

    /// The listening day that `time` falls in: the date, or the date before until `resetAt`.
    func listeningDay(_ time: LocalTime) -> Int {
        time.minute >= settings.parental.resetAt ? time.day : time.day - 1
    }

    /// Starts the count again when a later listening day began by a synchronised clock. A clock
    /// that went back by more than a day (a correction) keeps the count and takes the earlier day,
    /// so it gives no listening back and locks nothing out beyond the next reset; one day back
    /// (DST's repeated hour around a reset time, a small step) changes nothing, so the same reset
    /// is not had twice. Unsynchronised: nothing changes (the count goes on into its day).
    mutating func followListeningDay(_ step: inout Step) {
        guard let limit = settings.parental.dailyLimit, let time = wallTime else { return }
        let today = listeningDay(time)
        guard let day = parental.listening.day else {
            parental.listening.day = today
            return
        }
        guard today > day else {
            if today < day - 1 { parental.listening.day = today }
            return
        }
        parental.listening = Listening(seconds: 0, day: today)
        parental.warned = false
        step.commands.append(.report("a new listening day: \(TimeFormat.minutes(limit)) of listening"))
    }

    /// `Event.tick`: counts the monotonic time since the last tick while playing.
    mutating func countListening(now: Double) {
        guard settings.parental.dailyLimit != nil, phase == .playing else { return }
        if let since = parental.countedAt, now > since { parental.listening.seconds += now - since }
        parental.countedAt = now
    }

    /// After every event (from `finish`): the warning before the limit's end, and no sound the
    /// rules refuse (the limit reached, quiet hours begun).
    mutating func followParental(_ step: inout Step) {
        guard !settings.parental.isEmpty else { return }
        if phase != .playing { parental.countedAt = nil }
        if let left = listeningLeft, left > 0, left <= settings.parental.warnBefore, !parental.warned, phase == .playing {
            parental.warned = true
            message = "\(TimeFormat.minutes(left.rounded(.up))) of listening left today"
            step.commands.append(.report("daily listening limit: " + message!))
            warningChime(&step)
        }
        guard soundWanted, let track = currentTrack, let why = parentalRefusal(path: track.info.path) else { return }
        intent(.pause, &step)
        parental.countedAt = nil
        message = why
        step.commands.append(.report(why + ": paused"))
    }
}

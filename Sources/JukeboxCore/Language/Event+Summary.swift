// SPDX-License-Identifier: MIT

extension Event {
    /// The event in a few words for people watching `events` (`button next down`,
    /// `track started (play 3)`, `seek +0:10`): no Swift dump, no track list. Text from outside
    /// (reasons) is included as it is; whoever shows the line makes it inert.
    public var summary: String {
        switch self {
        case .play: return "play"
        case .pause: return "pause"
        case .togglePlayPause: return "toggle"
        case .stop: return "stop"
        case .next: return "next"
        case .previous: return "previous"
        case .nextFile: return "next --file"
        case .previousFile: return "previous --file"
        case .seek(let to): return "seek to " + TimeFormat.clock(to)
        case .seekBy(let by): return "seek " + (by < 0 ? "-" : "+") + TimeFormat.clock(abs(by))
        case .playEntry(let at): return "play entry \(at + 1)"
        case .seekEntry(let at, let to): return "seek entry \(at + 1) to \(TimeFormat.clock(to))"
        case .setVolume(let v): return "volume \(v)"
        case .changeVolume(let by): return "volume " + (by < 0 ? "\(by)" : "+\(by)")
        case .setShuffle(let on, _): return "shuffle " + (on ? "on" : "off")
        case .toggleShuffle: return "shuffle toggle"
        case .setRepeat(let mode): return "repeat \(mode.rawValue)"
        case .cycleRepeat: return "repeat cycle"
        case .add(let tracks): return "add " + Self.count(tracks.count)
        case .replaceQueue(let tracks): return "load " + Self.count(tracks.count)
        case .remove(let at): return "remove \(at + 1)"
        case .move(let from, let to): return "move \(from + 1) to \(to + 1)"
        case .moveRange(let range, let to): return "move \(range.lowerBound + 1)-\(range.upperBound) to \(to + 1)"
        case .insert(let tracks, let at): return "insert " + Self.count(tracks.count) + " at \(at + 1)"
        case .shuffleEntries(let range, _): return "shuffle entries \(range.lowerBound + 1)-\(range.upperBound)"
        case .sleepTimer(let request):
            switch request {
            case .after(let seconds)?: return "sleep in " + TimeFormat.minutes(seconds)
            case .end(let end)?: return "sleep at the end of the " + end.rawValue
            case nil: return "sleep off"
            }
        case .setSpeed(let speed): return "speed " + (speed.map(Speed.text) ?? "default")
        case .clear: return "clear"
        case .interruptBegan(let id, let reason): return "interrupt begin \(id): \(reason)"
        case .interruptEnded(let id): return "interrupt end \(id)"
        case .sourceBegan(let name, let sender): return "source begin \(name): " + OtherSource.shown(name, sender: sender)
        case .sourceSender(let name, let sender): return "source sender \(name): " + OtherSource.shown(name, sender: sender)
        case .restore(let snapshot): return "restore " + Self.count(snapshot.tracks.count)
        case .quit: return "quit"
        case .saveRequested: return "save"
        case .started: return "started"
        case .musicMissing(let folder): return "music missing: \(folder)"
        case .musicAppeared: return "music appeared"
        case .musicAwaited(let folders): return "music awaited in " + folders.joined(separator: ", ")
        case .musicFound(let folders, let tracks, _): return "music found in " + folders.joined(separator: ", ") + ": " + Self.count(tracks.count)
        case .stateFileUnreadable(let reason): return reason.map { "state file unreadable: \($0)" } ?? "state file readable"
        case .reconfigured: return "configuration reloaded"
        case .buttonEdge(let button, let pressed, _): return "button \(button.rawValue) " + (pressed ? "down" : "up")
        case .buttonLevel(let button, let pressed, _):
            return "button \(button.rawValue) level " + (pressed.map { $0 ? "down" : "up" } ?? "unknown")
        case .encoderEdge(let a, let b, _): return "encoder a=\(a ? 1 : 0) b=\(b ? 1 : 0)"
        case .mediaKey(let code, let value, _): return "key \(code) " + (value == 0 ? "up" : value == 2 ? "repeat" : "down")
        case .cardRead(let id, _): return "card " + DisplayText.inert(String(id.prefix(Cards.maxIDLength + 1)))
        case .cardRemoved(let id, _): return "card removed " + DisplayText.inert(String(id.prefix(Cards.maxIDLength + 1)))
        case .cardsLoaded(let map): return "cards map: \(map.entries.count) cards"
        case .setupProblems(let lines): return "setup problems: \(lines.count)"
        case .podcastsReading: return "podcasts file being read"
        case .podcastsLoaded(let feeds): return "podcasts: " + (feeds.map { String($0.count) } ?? "unreadable")
        case .podcastFetched(let name, _, let episodes): return "podcast \(DisplayText.inert(name)): \(episodes.count) episodes"
        case .podcastFailed(let name, let reason): return "podcast \(DisplayText.inert(name)) failed: \(DisplayText.inert(reason, maxBytes: 200))"
        case .playPodcast(let name): return "podcast " + DisplayText.inert(name)
        case .queuePodcast(let name): return "add podcast " + DisplayText.inert(name)
        case .episodeDownloaded(let name, let id, _, let bytes):
            return "podcast \(DisplayText.inert(name)): episode \(DisplayText.inert(id, maxBytes: 80)) downloaded (\(bytes) bytes)"
        case .episodeDownloadFailed(let name, let id, let reason):
            return "podcast \(DisplayText.inert(name)): episode \(DisplayText.inert(id, maxBytes: 80)) not downloaded: \(DisplayText.inert(reason, maxBytes: 200))"
        case .episodeDownloadProgress(let name, _, let bytes, let total):
            return "podcast \(DisplayText.inert(name)): \(bytes) of \(total.map(String.init) ?? "?") bytes downloaded"
        case .cardTracks(let card, let tracks, _, _): return "card \(card): " + Self.count(tracks.count)
        case .loadSource(_, let tracks): return "load " + Self.count(tracks.count)
        case .headphones(let plugged):
            return plugged ? "headphones in" : "headphones out"
        case .bluetoothSpeaker(let connected):
            return connected ? "bluetooth speaker connected" : "bluetooth speaker gone"
        case .bluetoothVolume(let level, let muted):
            return "bluetooth speaker volume \(level)/127" + (muted ? " muted" : "")
        case .bluetoothVolumeControl(let taken, let reason):
            return taken ? "bluetooth speaker volume taken" : "bluetooth speaker volume refused: " + reason
        case .bluetoothPhone(let streaming, let sender, _):
            return streaming ? "bluetooth phone playing: " + OtherSource.shown("bluetooth", sender: sender) : "bluetooth phone stopped"
        case .batteryPin(let low):
            return "battery pin " + (low ? "low" : "released")
        case .battery(let r):
            return "battery " + (r.percent.map { "\(Int($0.rounded())) %" } ?? "?") + (r.charging == true ? ", charging" : "") + (r.low ? ", low pin" : "")
        case .usbInserted(let path): return "USB stick inserted: " + DisplayText.inert(path)
        case .usbRemoved(let path): return "USB stick removed: " + DisplayText.inert(path)
        case .usbTracks(let path, let tracks, _, let more): return "USB stick " + DisplayText.inert(path) + ": " + Self.count(tracks.count) + (more ? ", more to come" : "")
        case .usbMoreTracks(let path, let tracks, _): return "USB stick " + DisplayText.inert(path) + ": " + Self.count(tracks.count) + " more"
        case .bookmarksLoaded(let marks): return "bookmarks: \(marks.count)"
        case .cardAssignNext(let value): return value.map { "card assign next: " + DisplayText.inert(String($0.prefix(80))) } ?? "card assign cancelled"
        case .cardAssigned(let card, _, let error): return "card \(card) assigned" + (error == nil ? "" : ", not written")
        case .resetBookmarks(let path): return path.map { "bookmark reset: " + DisplayText.inert(String($0.prefix(200))) } ?? "bookmarks reset"
        case .trackStarted(let id): return "track started (play \(id))"
        case .trackFinished(let id, let next): return "track finished (play \(id))" + (next.map { ", play \($0) follows" } ?? "")
        case .trackFailed(let id, let reason, let missing):
            if let path = missing?.goneStick { return "track failed (play \(id)): \(reason); its USB stick is gone: " + DisplayText.inert(path) }
            if let folder = missing?.goneFolder { return "track failed (play \(id)): \(reason); its folder is not there: \(folder)" }
            return "track failed (play \(id)): \(reason)"
        case .deviceUnavailable(let reason, let problem): return "device \(problem.rawValue): \(reason)"
        case .deviceAvailable: return "device available"
        case .soundDevicesChanged: return "sound devices changed"
        case .deviceReleased: return "device released"
        case .saved(let error): return error.map { "save failed: \($0)" } ?? "saved"
        case .loudnessMeasured(let path, let loudness):
            let gain = loudness?.trackGain.map { "\(($0 * 100).rounded() / 100) dB" } ?? "no gain"
            return "loudness measured: " + DisplayText.inert(String(path.prefix(200))) + ": " + gain
        case .timerFired(let id, _): return "timer " + Self.name(id)
        case .tick: return "tick"
        case .wallClock(let time, let synchronized):
            let sync: String = synchronized ? "" : ", not synchronised"
            return "wall clock day \(time.day) " + LocalTime.text(time.minute) + sync
        case .heard(let id, let seconds): return "heard " + TimeFormat.clock(seconds) + " (play \(id))"
        case .streamStatus(let id, let status):
            return "stream (play \(id)): buffered \(status.bufferedPercent) %"
                + (status.reconnectingFor.map { ", reconnecting for \(Int($0)) s" } ?? "")
        }
    }

    private static func count(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

    private static func name(_ timer: TimerID) -> String {
        switch timer {
        case .deviceRetry: return "device retry"
        case .releaseDevice: return "release device"
        case .saveVolume: return "save volume"
        case .saveRetry: return "save retry"
        case .idlePowerOff: return "idle power-off"
        case .sleep: return "sleep"
        case .cardAssign: return "card assignment"
        case .podcastRefresh: return "podcast refresh"
        case .debounce(let b): return "debounce \(b.rawValue)"
        case .gesture(let b): return "gesture \(b.rawValue)"
        case .doubleTap(let b): return "double tap \(b.rawValue)"
        }
    }
}

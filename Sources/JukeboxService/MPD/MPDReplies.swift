// SPDX-License-Identifier: MIT
import JukeboxCore

/// MPD's `state` (`play`, `pause`, `stop`); the raw value is the reply's text.
enum MPDPlayState: String, Equatable {
    case play, pause, stop

    /// Waiting for a device or for the music counts as `play` (it wants to play and will), an
    /// interruption as `pause` (nothing sounds until it ends).
    init(_ phase: PlayerPhase) {
        switch phase {
        case .playing, .waitingForDevice, .waitingForMusic: self = .play
        case .paused, .interrupted: self = .pause
        case .stopped: self = .stop
        }
    }
}

/// The MPD face's replies, made from the core's `State`: pure functions, so every field is
/// tested without a socket. Song ids are the core's queue-entry ids (`Track.id`): stable while
/// the entry is in the queue, never reused in one run.
public enum MPDReplies {
    /// MPD's `state` for a phase: waiting for a device or for the music counts as `play` (it
    /// wants to play and will), an interruption as `pause` (nothing sounds until it ends).
    public static func playState(_ phase: PlayerPhase) -> String { MPDPlayState(phase).rawValue }

    /// jukebox's repeat mode as MPD's `repeat` and `single` flags (`RepeatMode.flags`).
    public static func flags(_ mode: RepeatMode) -> (repeat: Bool, single: Bool) { mode.flags }

    /// The `status` reply's lines.
    public static func status(_ state: State) -> [String] {
        let (rep, single) = flags(state.repeatMode)
        var lines = ["volume: \(state.volume)", "repeat: \(rep ? 1 : 0)", "random: \(state.shuffle ? 1 : 0)",
                     "single: \(single ? 1 : 0)", "consume: 0", "playlist: \(playlistVersion(state))",
                     "playlistlength: \(state.queue.count)", "state: \(playState(state.phase))"]
        if let track = state.currentTrack, let pos = state.queue.firstIndex(where: { $0.id == track.id }) {
            lines += ["song: \(pos)", "songid: \(track.id)"]
            if state.phase != .stopped {
                let elapsed = max(0, state.position)
                let duration = track.info.duration
                lines.append("time: \(Int(elapsed.rounded())):\(Int((duration ?? 0).rounded()))")
                lines.append("elapsed: \(fixed3(elapsed))")
                if let duration { lines.append("duration: \(fixed3(duration))") }
                // Not MPD's (clients ignore a key they do not know): the speed when it is not 1.
                if let speed = state.cursor.flatMap({ state.playSpeed(at: $0) }) { lines.append("speed: \(Speed.text(speed))") }
            }
            if let cursor = state.cursor, cursor + 1 < state.order.count {
                let next = state.order[cursor + 1]
                if let nextPos = state.queue.firstIndex(where: { $0.id == next }) {
                    lines += ["nextsong: \(nextPos)", "nextsongid: \(next)"]
                }
            }
        }
        if let message = StatusView(state).message { lines.append("error: \(message)") }
        return lines
    }

    /// MPD's queue version (`status`'s `playlist`, what `plchanges` compares): the core's queue
    /// revision plus one, so that an empty new player is at 1 and a client's 0 means "all".
    public static func playlistVersion(_ state: State) -> Int { state.queueRevision + 1 }

    /// The `stats` reply over `songs` (the library's; the queue's where there is none): artists,
    /// albums, songs and `db_playtime` count them. `uptime` and `playtime` (seconds playing) are
    /// since the listener opened.
    public static func stats(_ songs: [(artist: String?, album: String?, duration: Double?)], uptime: Double,
                             playtime: Double) -> [String] {
        let total = songs.reduce(0.0) { $0 + ($1.duration ?? 0) }
        return ["artists: \(Set(songs.compactMap(\.artist)).count)", "albums: \(Set(songs.compactMap(\.album)).count)",
                "songs: \(songs.count)", "uptime: \(Int(max(0, uptime)))", "playtime: \(Int(max(0, playtime)))",
                "db_playtime: \(Int(total.rounded()))"]
    }

    /// One queue entry as MPD's song block (`file`, tags, `Time`/`duration`, `Pos`, `Id`).
    public static func song(_ track: Track, pos: Int, roots: [String]) -> [String] {
        songInfo(track.info, roots: roots) + ["Pos: \(pos)", "Id: \(track.id)"]
    }

    /// `currentsong`'s lines for the chapter playing in a file with chapters (an audiobook), after
    /// the song's: `Chapter` (its title), `ChapterNumber` (from 1) and `ChapterCount`. jukebox's
    /// own keys (MPD has no chapters; clients skip keys they do not know): `Title` stays the
    /// file's, as in `playlistinfo`, so a client's queue and its "now playing" name one song.
    public static func chapter(_ state: State) -> [String] {
        guard let (index, count, chapter) = state.currentChapter else { return [] }
        return ["Chapter: \(DisplayText.inert(chapter.title))", "ChapterNumber: \(index + 1)", "ChapterCount: \(count)"]
    }

    /// A song block without a queue place (`file`, tags, `Time`/`duration`): a stored playlist's entry.
    public static func songInfo(_ info: TrackInfo, roots: [String]) -> [String] {
        var lines = ["file: \(uri(info.path, roots: roots))", "Title: \(info.title)"]
        if let v = info.artist { lines.append("Artist: \(v)") }
        if let v = info.album { lines.append("Album: \(v)") }
        if let v = info.trackNumber { lines.append("Track: \(v)") }
        if let v = info.discNumber { lines.append("Disc: \(v)") }
        if let d = info.duration {
            lines += ["Time: \(Int(d.rounded()))", "duration: \(fixed3(d))"]
        }
        return lines
    }

    /// The song blocks of the queue entries `range` (queue order).
    public static func songs(_ state: State, _ range: Range<Int>, roots: [String]) -> [String] {
        range.clamped(to: state.queue.indices).flatMap { song(state.queue[$0], pos: $0, roots: roots) }
    }

    /// A path as MPD's clients see it: relative to the first music folder that holds it, else
    /// absolute (MPD gives local files outside its database as absolute paths too).
    public static func uri(_ path: String, roots: [String]) -> String {
        for root in roots {
            let base = root.hasSuffix("/") ? root : root + "/"
            if path.hasPrefix(base), path.count > base.count { return String(path.dropFirst(base.count)) }
        }
        return path
    }

    /// What `add` was given, as a path to load: `file:///x` and absolute paths as they are,
    /// relative ones inside the first music folder where they exist (`exists` checks). Other URL
    /// schemes are refused: jukebox plays no streams yet.
    public static func path(for uri: String, roots: [String], allowURLs: Bool, exists: (String) -> Bool) -> Result<String, MPDError> {
        if uri.hasPrefix("file://") { return .success(String(uri.dropFirst("file://".count))) }
        // An internet radio stream (Home Assistant's media browser hands one over): queued as it
        // is, when the config lets MPD clients name URLs at all (else the box would connect to any
        // host and port a client on the network names).
        if Library.isStreamURL(uri) {
            return allowURLs ? .success(uri) : .failure(MPDError(.permission, urlsRefused))
        }
        if let colon = uri.firstIndex(of: ":"), uri[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
           uri[colon...].hasPrefix("://") {
            return .failure(MPDError(.noExist, "jukebox plays http and https streams only (not \(uri[..<colon]) URLs)"))
        }
        if uri.hasPrefix("/") { return .success(uri) }
        let trimmed = uri.hasSuffix("/") ? String(uri.dropLast()) : uri
        // A relative name stays inside the music folders.
        if trimmed.split(separator: "/").contains("..") { return .failure(MPDError(.arg, "Malformed URI")) }
        for root in roots {
            let candidate = trimmed.isEmpty ? root : Paths.resolve(trimmed, against: root)
            if exists(candidate) { return .success(candidate) }
        }
        return .failure(MPDError(.noExist, "No such directory"))
    }

    /// Why an MPD client's URL is refused while `mpd.allowURLs` is off.
    public static let urlsRefused = "URLs from MPD clients are off (the config's mpd.allowURLs; jukebox ctl add takes them)"

    /// Parses MPD's `START:END` (END may be left out: to the end) or a single position.
    public static func range(_ text: String, count: Int) -> Range<Int>? {
        if let colon = text.firstIndex(of: ":") {
            guard let start = Int(text[..<colon]), start >= 0 else { return nil }
            let endText = text[text.index(after: colon)...]
            guard let end = endText.isEmpty ? max(start, count) : Int(endText), end >= start else { return nil }
            return start..<end
        }
        guard let pos = Int(text), pos >= 0 else { return nil }
        return pos..<(pos + 1)
    }

    /// `x` with three decimals, as MPD writes `elapsed` and `duration`.
    static func fixed3(_ x: Double) -> String {
        let millis = Int((x * 1000).rounded())
        let frac = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
    }
}

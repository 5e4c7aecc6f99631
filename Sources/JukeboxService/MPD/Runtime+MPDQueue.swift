// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxSystem

// MPD's queue-ordering commands (`addid`, `move`, `moveid`, `shuffle`) and the change feed
// (`plchanges`, `plchangesposid`, the old `playlist`). Each becomes one core event (`insert`,
// `moveRange`, `shuffleEntries`); what the order then is, is the core's.
extension Runtime {
    /// The queue commands of this file (listed in `mpdCommands`).
    static let mpdQueueCommands = ["addid", "move", "moveid", "playlist", "plchanges", "plchangesposid", "shuffle"]

    /// Carries out `r` when it is one of `mpdQueueCommands`; false when it is not.
    func mpdQueue(_ r: MPDRequest, _ reply: @escaping (Result<[String], MPDError>) -> Void) -> Bool {
        func fail(_ code: MPDError.Code, _ message: String) { reply(.failure(MPDError(code, message))) }
        func args(_ counts: ClosedRange<Int>) -> Bool {
            if counts.contains(r.args.count) { return true }
            fail(.arg, "wrong number of arguments for \"\(r.name)\"")
            return false
        }
        let count = state.queue.count
        switch r.name {
        case "addid":
            guard args(1...2) else { return true }
            var at: Int?
            if r.args.count == 2 {
                switch MPDQueueArgs.target(r.args[1], current: currentPosition, count: count, room: 0) {
                case .failure(let e):
                    reply(.failure(e))
                    return true
                case .success(let p): at = p
                }
            }
            addID(r.args[0], at: at, reply)
        case "move", "moveid":
            guard args(2...2) else { return true }
            let range: Range<Int>
            if r.name == "move" {
                guard let given = MPDReplies.range(r.args[0], count: count), !given.isEmpty, given.upperBound <= count else {
                    fail(.arg, "Bad song index")
                    return true
                }
                range = given
            } else {
                guard let id = UInt64(r.args[0]), let p = state.queue.firstIndex(where: { $0.id == id }) else {
                    fail(.noExist, "No such song")
                    return true
                }
                range = p..<(p + 1)
            }
            switch MPDQueueArgs.target(r.args[1], current: currentPosition, count: count, room: range.count) {
            case .failure(let e): reply(.failure(e))
            case .success(let to): mpdIntents([.moveRange(range, to: to)], reply)
            }
        case "shuffle":
            guard args(0...1) else { return true }
            // A range's end is clipped to the queue, as MPD does; its start must lie inside.
            guard let range = r.args.first.map({ MPDReplies.range($0, count: count) }) ?? 0..<count,
                  range.lowerBound <= count else {
                fail(.arg, "Bad song index")
                return true
            }
            mpdIntents([.shuffleEntries(range.clamped(to: 0..<count), seed: nextSeed())], reply)
        case "plchanges", "plchangesposid":
            guard args(1...2) else { return true }
            guard let version = Int(r.args[0]) else {
                fail(.arg, "Number expected: \(r.args[0])")
                return true
            }
            guard let range = r.args.count == 2 ? MPDReplies.range(r.args[1], count: count) : 0..<count else {
                fail(.arg, "Bad song index")
                return true
            }
            let changed = range.clamped(to: state.queue.indices).filter { (mpdFace?.changedAt[state.queue[$0].id] ?? Int.max) > version }
            if r.name == "plchanges" {
                reply(.success(changed.flatMap { MPDReplies.song(state.queue[$0], pos: $0, roots: mpdMusicFolders) }))
            } else {
                reply(.success(changed.flatMap { ["cpos: \($0)", "Id: \(state.queue[$0].id)"] }))
            }
        case "playlist":
            guard args(0...0) else { return true }
            reply(.success(state.queue.indices.map { "\($0):file: \(MPDReplies.uri(state.queue[$0].info.path, roots: mpdMusicFolders))" }))
        default:
            return false
        }
        return true
    }

    /// The current track's queue position, if there is one.
    var currentPosition: Int? {
        state.currentTrack.flatMap { track in state.queue.firstIndex { $0.id == track.id } }
    }

    /// After every change of the queue: the entries that are new or at a new position get the
    /// new version (what `plchanges` compares against). One pass over the queue per change.
    func noteMPDQueueVersion() {
        guard let face = mpdFace else { return }
        let version = MPDReplies.playlistVersion(state)
        var positions: [UInt64: Int] = [:]
        positions.reserveCapacity(state.queue.count)
        for (pos, track) in state.queue.enumerated() {
            positions[track.id] = pos
            if face.positions[track.id] != pos { face.changedAt[track.id] = version }
        }
        for id in face.changedAt.keys where positions[id] == nil { face.changedAt[id] = nil }
        face.positions = positions
    }

    // `addid URI [POS]`: one song, read by the tag reader, inserted (or appended) and its id
    // given back. A folder or playlist is refused: MPD's `addid` takes one song.
    private func addID(_ uri: String, at: Int?, _ reply: @escaping (Result<[String], MPDError>) -> Void) {
        let path: String
        switch MPDReplies.path(for: uri, roots: mpdMusicFolders, allowURLs: mpd?.settings.allowURLs ?? false, exists: fileExists) {
        case .failure(let e): return reply(.failure(e))
        case .success(let p): path = p
        }
        let started = readTracks([path]) { [weak self] tracks, messages in
            guard let self else { return }
            guard tracks.count == 1 else {
                return reply(.failure(tracks.isEmpty ? MPDError(.noExist, messages.first ?? "No such song")
                                                     : MPDError(.arg, "addid takes one song, not a folder or playlist")))
            }
            let id = state.nextTrackID
            let before = saveNumber
            feedHeard()
            dispatch(at.map { .insert(tracks, at: $0) } ?? .add(tracks))
            // The queue may have shrunk while the tags were read: the core then refuses.
            guard state.queue.contains(where: { $0.id == id }) else {
                return reply(.failure(MPDError(.arg, state.message ?? "Bad song index")))
            }
            afterSaves(since: before) { _ in reply(.success(["Id: \(id)"])) }
        }
        if !started { reply(.failure(MPDError(.system, "this player cannot load files"))) }
    }
}

/// Parsing of MPD's queue positions, pure (tested in `MPDProtocolTests`).
public enum MPDQueueArgs {
    /// Where `text` puts `room` entries (0 for an insert) in a queue of `count`: an absolute
    /// position, or (MPD 0.23) `+N`/`-N` relative to the current song (`+0` right after it, `-0`
    /// right before it).
    public static func target(_ text: String, current: Int?, count: Int, room: Int) -> Result<Int, MPDError> {
        let limit = room == 0 ? count : count - room
        if let sign = text.first, sign == "+" || sign == "-" {
            guard let n = Int(text.dropFirst()), n >= 0, text.count > 1, text.dropFirst().allSatisfy(\.isNumber) else {
                return .failure(MPDError(.arg, "Integer expected: \(text)"))
            }
            guard let current else { return .failure(MPDError(.playerSync, "No current song")) }
            let p = sign == "+" ? current + 1 + n : current - n
            guard (0...limit).contains(p) else { return .failure(MPDError(.arg, "Bad song index")) }
            return .success(p)
        }
        guard let p = Int(text), (0...limit).contains(p), text.allSatisfy(\.isNumber) else {
            return .failure(MPDError(.arg, "Bad song index"))
        }
        return .success(p)
    }
}

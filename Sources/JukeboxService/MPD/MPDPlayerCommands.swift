// SPDX-License-Identifier: MIT
import JukeboxCore

// MPD's playback commands: status, transport, seeks, volume and modes. Each becomes the core's
// intents (`MPDFace.intents`, answered once saved) or a reply read from the state.
extension MPDFace {
    static let playerCommands: [MPDCommand] = [
        MPDCommand("status", 0...0) { face, loop, _, reply in
            loop.feedHeard()
            // `updating_db` while a library update runs.
            let job = face.library?.updating.first?.job
            reply(.success(MPDReplies.status(loop.state) + (job.map { ["updating_db: \($0)"] } ?? [])))
        },
        MPDCommand("currentsong", 0...0) { face, loop, _, reply in
            if loop.state.currentTrack?.info.chapters != nil { loop.feedHeard() }
            let state = loop.state
            guard let track = state.currentTrack, let pos = state.queue.firstIndex(where: { $0.id == track.id }) else {
                return reply(.success([]))
            }
            reply(.success(MPDReplies.song(track, pos: pos, roots: face.musicFolders) + MPDReplies.chapter(state)))
        },
        MPDCommand("play", 0...1) { face, loop, r, reply in
            if r.args.isEmpty || r.args[0] == "-1" { return face.intents([.play], loop, reply) }
            guard let p = face.position(r.args[0], loop, reply) else { return }
            face.intents([.playEntry(at: p)], loop, reply)
        },
        MPDCommand("playid", 0...1) { face, loop, r, reply in
            if r.args.isEmpty || r.args[0] == "-1" { return face.intents([.play], loop, reply) }
            guard let p = face.entry(id: r.args[0], loop, reply) else { return }
            face.intents([.playEntry(at: p)], loop, reply)
        },
        MPDCommand("pause", 0...1) { face, loop, r, reply in
            if r.args.isEmpty { return face.intents([.togglePlayPause], loop, reply) }
            switch r.args[0] {
            case "0": face.intents([.play], loop, reply)
            case "1": face.intents([.pause], loop, reply)
            default: reply(.failure(MPDError(.arg, "Boolean (0/1) expected: \(r.args[0])")))
            }
        },
        MPDCommand("stop", 0...0) { face, loop, _, reply in face.intents([.stop], loop, reply) },
        // By song whatever its chapters: an MPD client's playlist is songs.
        MPDCommand("next", 0...0) { face, loop, _, reply in face.intents([.nextFile], loop, reply) },
        MPDCommand("previous", 0...0) { face, loop, _, reply in face.intents([.previousFile], loop, reply) },
        MPDCommand("seekcur", 1...1) { face, loop, r, reply in
            let text = r.args[0]
            guard let t = face.seconds(text, reply) else { return }
            loop.feedHeard()
            face.intents([text.hasPrefix("+") || text.hasPrefix("-") ? .seekBy(t) : .seek(to: t)], loop, reply)
        },
        MPDCommand("seek", 2...2) { face, loop, r, reply in
            guard let p = face.position(r.args[0], loop, reply), let t = face.seconds(r.args[1], reply) else { return }
            face.seek(p, to: t, loop, reply)
        },
        MPDCommand("seekid", 2...2) { face, loop, r, reply in
            guard let p = face.entry(id: r.args[0], loop, reply), let t = face.seconds(r.args[1], reply) else { return }
            face.seek(p, to: t, loop, reply)
        },
        MPDCommand("setvol", 1...1) { face, loop, r, reply in
            guard let v = Int(r.args[0]), (0...100).contains(v) else { return reply(.failure(MPDError(.arg, "Invalid volume value"))) }
            face.intents([.setVolume(v)], loop, reply)
        },
        MPDCommand("volume", 1...1) { face, loop, r, reply in
            guard let v = Int(r.args[0]), (-100...100).contains(v) else { return reply(.failure(MPDError(.arg, "Invalid volume value"))) }
            face.intents([.changeVolume(by: v)], loop, reply)
        },
        MPDCommand("getvol", 0...0) { _, loop, _, reply in reply(.success(["volume: \(loop.state.volume)"])) },
        MPDCommand("repeat", 1...1) { face, loop, r, reply in face.mode(r, loop, reply) },
        MPDCommand("random", 1...1) { face, loop, r, reply in face.mode(r, loop, reply) },
        MPDCommand("single", 1...1) { face, loop, r, reply in face.mode(r, loop, reply) },
        MPDCommand("consume", 1...1) { face, loop, r, reply in face.mode(r, loop, reply) },
        MPDCommand("replay_gain_status", 0...0) { _, _, _, reply in reply(.success(["replay_gain_mode: off"])) },
        MPDCommand("replay_gain_mode", 1...1) { _, _, r, reply in
            if r.args[0] == "off" { return reply(.success([])) }
            guard ["track", "album", "auto"].contains(r.args[0]) else { return reply(.failure(MPDError(.arg, "Unrecognized replay gain mode"))) }
            reply(.failure(MPDError(.arg, "jukebox does not apply replay gain")))
        },
        // jukebox joins tracks gaplessly, bit-exact; 0 is what it does already.
        MPDCommand("crossfade", 1...1) { _, _, r, reply in
            guard let n = Int(r.args[0]), n >= 0 else { return reply(.failure(MPDError(.arg, "Integer expected: \(r.args[0])"))) }
            if n == 0 { return reply(.success([])) }
            reply(.failure(MPDError(.arg, "jukebox has no crossfade: tracks join gaplessly")))
        },
        // MixRamp only shapes a crossfade, and with crossfade 0 (always, here) MPD ignores both
        // values too: accepted when well-formed, as MPD does, and nothing changes.
        MPDCommand("mixrampdb", 1...1) { face, _, r, reply in face.mixramp(r, reply) },
        MPDCommand("mixrampdelay", 1...1) { face, _, r, reply in face.mixramp(r, reply) },
    ]

    // A seek in the current track, or a play of another entry from that point: the core's choice.
    private func seek(_ pos: Int, to t: Double, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        intents([.seekEntry(at: pos, to: t)], loop, reply)
    }

    private func mixramp(_ r: MPDRequest, _ reply: @escaping MPDLinesReply) {
        guard r.args[0] == "nan" || seconds(r.args[0], reply) != nil else { return }
        reply(.success([]))
    }

    // MPD's repeat/random/single/consume over jukebox's shuffle and repeat off/all/one: the face
    // parses the value; what a flag does to the repeat mode is the core's `RepeatMode.setting`.
    private func mode(_ r: MPDRequest, _ loop: MPDLoop, _ reply: @escaping MPDLinesReply) {
        let name = r.name, value = r.args[0]
        guard value == "0" || value == "1" || (value == "oneshot" && (name == "single" || name == "consume")) else {
            return reply(.failure(MPDError(.arg, "Boolean (0/1) expected: \(value)")))
        }
        let asked: RepeatFlagValue = value == "1" ? .on : value == "0" ? .off : .oneshot
        let flag: RepeatFlag
        switch name {
        case "random": return intents([.setShuffle(asked == .on, seed: loop.nextSeed())], loop, reply)
        case "repeat": flag = .repeat
        case "single": flag = .single
        default: flag = .consume
        }
        switch loop.state.repeatMode.setting(flag, to: asked) {
        case .set(let mode): intents([.setRepeat(mode)], loop, reply)
        case .unchanged: reply(.success([]))
        case .refused(let what): reply(.failure(MPDError(.arg, "jukebox has no \(what) mode")))
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

// What MPD clients ask about the server: tags, outputs, decoders, statistics, URL schemes.
extension MPDFace {
    static let serverCommands: [MPDCommand] = [
        // `clear`/`all`/`enable`/`disable` (mpc sends them) are accepted; every tag jukebox
        // knows is still sent (clients ignore what they did not ask for).
        MPDCommand("tagtypes", MPDCommand.anyCount) { _, _, r, reply in
            if let sub = r.args.first {
                guard ["clear", "all", "enable", "disable"].contains(sub) else { return reply(.failure(MPDError(.arg, "Unknown sub command"))) }
                return reply(.success([]))
            }
            reply(.success(tags.map { "tagtype: \($0)" }))
        },
        MPDCommand("outputs", 0...0) { _, _, _, reply in
            reply(.success(["outputid: 0", "outputname: jukebox", "plugin: alsa", "outputenabled: 1"]))
        },
        MPDCommand("decoders", 0...0) { _, _, _, reply in
            reply(.success(["plugin: sndfile"] + ["wav", "flac", "ogg", "oga", "opus", "mp3", "aiff", "aif"].map { "suffix: \($0)" }
                           + ["plugin: mp4"] + ["m4a", "m4b", "mp4"].map { "suffix: \($0)" }))
        },
        MPDCommand("stats", 0...0) { face, loop, _, reply in
            let now = loop.clock()
            let played = face.playedBefore + (face.playingSince.map { now - $0 } ?? 0)
            // The library's songs once there is a library (MPD on builds it at start), else the queue's.
            let songs = face.library.map { $0.index.songs.map { ($0.artist, $0.album, $0.duration) } }
                ?? loop.state.queue.map { ($0.info.artist, $0.info.album, $0.info.duration) }
            reply(.success(MPDReplies.stats(songs, uptime: now - face.started, playtime: played)))
        },
        // The stream schemes (local files are added by path), when clients may add URLs; podcasts
        // when the config names any.
        MPDCommand("urlhandlers", 0...0) { face, loop, _, reply in
            let streams = face.settings.allowURLs ? ["handler: http://", "handler: https://"] : []
            reply(.success(streams + (loop.state.podcasts.isEmpty ? [] : ["handler: " + MPDFace.podcastScheme])))
        },
    ]
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// The loop's once-a-second look at the music the core waits for: the folder a play waits for
/// (a stick pulled, a share gone: `State.awaitedMusicFolder`, answered by `Event.musicAppeared`)
/// and the folders a start with nothing to play waits for (`State.awaitedMusicFolders`: their
/// marks in `MusicArrival`, a read of them answered by `Event.musicFound`). None of it runs on the
/// loop: each look is a job on the tag reader's thread, since a stat on a hard-mounted share whose
/// server is down waits until it comes back, and the loop must never wait on a disk or a network
/// (a look given up after `Runtime.jobLimit` reads nothing; `JobRunner` bounds the workers left
/// hanging). One look of each kind at a time; what a look found reaches the core only while the
/// core still waits for it. The core decides what the music means; this only looks.
final class MusicWatch {
    /// stat(2) of a path, after links; nil where there is nothing (a test holds it to see the loop
    /// go on meanwhile).
    typealias Stat = @Sendable (String) -> MusicArrival.Mark?

    private unowned let core: LoopCore
    private let jobs: OffLoopJobs
    private let log: Log
    var stat: Stat
    private var arrival = MusicArrival()
    /// A look for the awaited folder is under way.
    private var lookingForFolder = false
    /// The last reason a look could not be made, logged once (a dead share fails every look).
    private var lastProblem: String?

    init(core: LoopCore, jobs: OffLoopJobs, log: Log, stat: @escaping Stat = { MusicArrival.mark($0) }) {
        self.core = core
        self.jobs = jobs
        self.log = log
        self.stat = stat
    }

    /// Whether the core waits for music: the loop then calls `look` about once a second.
    var isNeeded: Bool { core.state.awaitedMusicFolder != nil || core.state.awaitedMusicFolders != nil }

    /// Hands the looks the core's waits ask for to the tag reader; their answers come back
    /// through the mailbox (`OffLoopJobs.workDone`).
    func look() {
        if let folder = core.state.awaitedMusicFolder, !lookingForFolder { lookFor(folder) }
        if let folders = core.state.awaitedMusicFolders, let paths = arrival.lookStarted(folders) { look(at: folders, paths) }
    }

    private func lookFor(_ folder: String) {
        let found = Found(), stat = self.stat
        lookingForFolder = start({ found.there = stat(folder)?.directory == true }, then: { [weak self] looked in
            guard let self else { return }
            lookingForFolder = false
            if looked, found.there, core.state.awaitedMusicFolder == folder { core.dispatch(.musicAppeared) }
        })
    }

    private func look(at folders: [String], _ paths: [String]) {
        let found = Found(), stat = self.stat
        let started = start({ found.marks = paths.map { ($0, stat($0)) } }, then: { [weak self] looked in
            guard let self else { return }
            guard arrival.looked(looked ? found.marks : nil) else { return }
            if core.state.awaitedMusicFolders == folders { read(folders) } else { arrival.finished() }
        })
        // A player that cannot load files never looks: it stays "looking", so it never tries again.
        if !started { log.warning("cannot read \(folders.joined(separator: ", ")): this player cannot load files") }
    }

    // The folders changed: read them as `add` would; nothing playable there, the folders inside
    // are listed too (an album's, its files to come), to be looked at from the next look on.
    private func read(_ folders: [String]) {
        let found = Found()
        let started = jobs.perform({ load in
            let read = load(folders)
            if read.tracks.isEmpty { found.inside = MusicArrival.subfolders(of: folders) }
            return .success(FileWorkOutput(tracks: read.tracks, lines: read.messages))
        }, then: { [weak self] result in
            guard let self else { return }
            var output = FileWorkOutput(), gaveUp = false
            switch result {
            case .success(let done): output = done
            case .failure(let error):
                // Given up (a dead share): nothing read; the next look that gets through reads again.
                log.warning("cannot read \(folders.joined(separator: ", ")): \(error.message)")
                gaveUp = true
            }
            arrival.finished(inside: found.inside, gaveUp: gaveUp)
            core.dispatch(.musicFound(folders: folders, tracks: output.tracks, messages: output.lines))
        })
        if !started { log.warning("cannot read \(folders.joined(separator: ", ")): this player cannot load files") }
    }

    /// Runs `work` on the tag reader; `then` gets, on the loop, whether it ran (false: given up,
    /// its reason logged once). False when this player has no tag reader.
    private func start(_ work: @escaping @Sendable () -> Void, then: @escaping (Bool) -> Void) -> Bool {
        jobs.perform({ _ in
            work()
            return .success(FileWorkOutput())
        }, then: { [weak self] result in
            if case .failure(let error) = result, let self {
                if error.message != lastProblem { log.warning("looking for music: \(error.message)") }
                lastProblem = error.message
            }
            then((try? result.get()) != nil)
        })
    }
}

/// What a look or a read found, handed from the tag reader's thread to the loop with the job's
/// result (the mailbox orders the two; nothing else touches it).
private final class Found: @unchecked Sendable {
    var there = false
    var marks: [(path: String, mark: MusicArrival.Mark?)] = []
    var inside: [String] = []
}

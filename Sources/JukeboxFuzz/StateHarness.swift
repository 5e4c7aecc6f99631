// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
import JukeboxService
import Glibc

/// The state file loader: any file gives a snapshot the core can restore, or an empty start with
/// a message naming the problem; a loaded snapshot re-encodes and reloads equal.
enum StateHarness {
    /// A private folder (in RAM where there is one) for the file under test, inside
    /// $JUKEBOX_FUZZ_TMP when set (board/fuzz.sh removes that afterwards: a crash skips `atexit`).
    static let folder: String = {
        let base = getenv("JUKEBOX_FUZZ_TMP").map { String(cString: $0) } ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")
        mkdir(base, 0o700)
        let path = "\(base)/jukebox-fuzz-\(getpid())"
        mkdir(path, 0o700)
        atexit { StateHarness.removeFolder() }
        return path
    }()

    static func removeFolder() {
        for name in ["state.json", "state.json.damaged-1", "profile.json", "control", "runtime.json", "runtime.json.tmp"] {
            unlink("\(folder)/\(name)")
        }
        rmdir(folder)
    }

    static func run(_ data: [UInt8]) -> Bool {
        let path = folder + "/state.json"
        write(data, to: path)
        let loaded = StateStore(path: path).load()
        defer {
            unlink(path)
            unlink(path + ".damaged-1")
        }
        for message in loaded.messages { require(!message.isEmpty, "an empty message") }
        guard let snapshot = loaded.snapshot else {
            require(loaded.messages.count == 1, "a refused file gives \(loaded.messages.count) messages")
            let message = loaded.messages[0]
            require(message.contains(path) && message.contains("damaged (") && !message.contains("()"),
                    "the message does not name the file and the problem: \(message.debugDescription)")
            require(access(path + ".damaged-1", F_OK) == 0, "a damaged file was not moved aside")
            return false
        }
        checkSnapshot(snapshot)
        if loaded.messages.contains(where: { $0.contains("cannot use") }) {
            require(access(path + ".damaged-1", F_OK) == 0, "a file with wrong values was not copied aside")
        }
        // Saved and read again, it is the same snapshot (normalising twice changes nothing).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let encoded: Data
        do { encoded = try encoder.encode(snapshot) } catch {
            fatalError("property failed: a loaded snapshot cannot be saved: \(error)")
        }
        do {
            let again = try JSONDecoder().decode(Snapshot.self, from: encoded)
            require(again == snapshot, "snapshot does not reload equal:\n\(snapshot)\n\(again)")
        } catch {
            fatalError("property failed: a saved snapshot does not load: \(error)")
        }
        // The core restores it and shows it.
        var settings = Settings()
        settings.display = .lcd20x4
        var state = State(settings: settings)
        _ = reduce(&state, .restore(snapshot))
        checkCoreInvariants(state, after: "restore")
        // Then a listener's first moves, each of which reads the restored tracks and times.
        let moves: [Event] = [.play, .seekBy(-5), .seek(to: 1e9), .tick(now: 1), .next, .seekBy(30), .previous, .tick(now: 2)]
        for (i, move) in moves.enumerated() {
            _ = reduce(&state, move)
            checkCoreInvariants(state, after: "restore, then \(moves[...i])")
        }
        return true
    }

    /// What `Snapshot.normalise` promises: no index out of range, values in range.
    static func checkSnapshot(_ s: Snapshot) {
        if let order = s.order {
            require(order.sorted() == Array(s.tracks.indices), "order \(order.prefix(20)) is not a permutation of \(s.tracks.count) tracks")
        }
        if let current = s.current { require(s.tracks.indices.contains(current), "current \(current) of \(s.tracks.count)") }
        require(s.position.isFinite && s.position >= 0, "position \(s.position)")
        // The phase is a `SavedPhase`: the type holds no other (the decoder's table: SavedPhaseTextTests).
        require((0...100).contains(s.volume), "volume \(s.volume)")
    }

    static func write(_ data: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        require(fd >= 0, "cannot create \(path): \(errno)")
        defer { close(fd) }
        var offset = 0
        while offset < data.count {
            let n = data[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            require(n > 0, "cannot write \(path): \(errno)")
            offset += n
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxSystem

/// Which read of the setup problems file is the newest (`Runtime.readSetupProblems`): a reload
/// starts a read while an older one may still hang on a stuck disk, and the older one's lines,
/// older than the newer's, must not reach the core after them.
final class SetupProblemsReads: @unchecked Sendable {
    private let monitor = Monitor()
    private var newest = 0

    /// The generation of a read that starts now (every older one is no longer heard).
    func next() -> Int { monitor.withLock { newest += 1; return newest } }

    /// Runs `post` if `generation` is still the newest, under the lock, so that a newer read
    /// cannot be started and posted between the check and the post.
    func ifNewest(_ generation: Int, _ post: () -> Void) {
        monitor.withLock { if generation == newest { post() } }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore

/// A tagged track at `/music/NN.flac` lasting 100 s.
func info(_ n: Int, duration: Double? = 100) -> TrackInfo {
    TrackInfo(path: "/music/\(n).flac", title: "Song \(n)", artist: "Band", duration: duration)
}

/// A state holding tracks 1...n in queue order, stopped, as `add` would leave it
/// (ids 1...n, one queue revision), with that state already saved and rendered.
func queued(_ n: Int, settings: Settings = Settings()) -> State {
    var s = State(settings: settings)
    _ = reduce(&s, .add((1...n).map { info($0) }))
    return s
}

/// Playing track `k` of `n` from the start, with the engine holding play id 1 and its
/// successor handed as play id 2 (what `play` from a fresh queue produces).
func playing(_ n: Int, settings: Settings = Settings()) -> State {
    var s = queued(n, settings: settings)
    _ = reduce(&s, .play)
    return s
}

extension State {
    /// The view `finish` would render for this state.
    var view: StatusView { StatusView(self) }
}

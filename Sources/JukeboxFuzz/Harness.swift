// SPDX-License-Identifier: MIT
import JukeboxCore
import Glibc

/// One parser under test. `run` feeds it one input and stops the process (so a fuzzer keeps the
/// input as a crasher) when the parser crashes or breaks one of its properties.
enum Harness: String, CaseIterable, Sendable {
    /// Control lines as the socket frames them and as the serial console's line editor takes raw
    /// bytes, parsed, rendered back and applied to the core.
    case command
    /// The configuration loader (`Config.parse`, board profiles).
    case config
    /// The state file loader (`StateStore.load`), re-encoding and restoring into the core.
    case state
    /// The running player (`Runtime`) answering arbitrary bytes on its control socket.
    case runtime
    /// HLS playlists (`HLSPlaylist`) and the session's decisions on them (`HLSSession`).
    case hls
    /// MPEG transport streams (`TSDemuxer`) and the ID3 titles in them.
    case ts
    /// Fragmented MP4 HLS segments (`FMP4Fragment`) and init sections (`FMP4Init`).
    case fmp4
    /// Podcast feeds, RSS and Atom (`FeedParser`).
    case feed

    /// Runs one input; returns whether the parser accepted it (for the statistics).
    @discardableResult
    func run(_ data: [UInt8]) -> Bool {
        switch self {
        case .command: return CommandHarness.run(data)
        case .config: return ConfigHarness.run(data)
        case .state: return StateHarness.run(data)
        case .runtime: return RuntimeHarness.run(data)
        case .hls: return StreamHarness.playlist(data)
        case .ts: return StreamHarness.transportStream(data)
        case .fmp4: return StreamHarness.fragmentedMP4(data)
        case .feed: return FeedHarness.run(data)
        }
    }

    /// Longest input worth trying: the parsers bound what they read far below this, and longer
    /// inputs only slow the search down.
    var maxLength: Int {
        switch self {
        case .command, .runtime: return 4096
        case .config, .state, .hls: return 8192
        case .feed, .fmp4: return 16384
        case .ts: return 188 * 64
        }
    }
}

/// Stops the process when a property does not hold; the message says which one.
func require(_ ok: Bool, _ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !ok { fatalError("property failed: \(what())", file: file, line: line) }
}

/// Invariants of the core state that every parser's output must leave intact.
func checkCoreInvariants(_ state: State, after: @autoclosure () -> String) {
    require((0...100).contains(state.volume), "volume \(state.volume) out of 0...100 after \(after())")
    require(state.position.isFinite && state.position >= 0, "position \(state.position) after \(after())")
    if let cursor = state.cursor {
        require(state.order.indices.contains(cursor), "cursor \(cursor) outside order (\(state.order.count)) after \(after())")
    }
    require(state.order.count <= state.queue.count, "order longer than the queue after \(after())")
    // What every front end shows must render: the status line, the clock, the JSON numbers.
    _ = StatusView(state).line
    _ = TimeFormat.clock(state.position)
    for track in state.queue.prefix(50) { _ = TimeFormat.clock(track.info.duration) }
}

/// Writes a line to standard error (unbuffered, so it is there even when a crash follows).
func printError(_ text: String) {
    let line = text.hasSuffix("\n") ? text : text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress!, $0.count - 1) }
}

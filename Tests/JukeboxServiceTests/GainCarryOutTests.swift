// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The core's ReplayGain reaches the audio port: `startTrack`'s and its successor's gains, and
/// `setNext`'s; nil (no gain) as 1, untouched.
final class GainCarryOutTests: XCTestCase {
    private final class GainPort: AudioPort {
        var plays: [(id: UInt64, gain: Double, nextGain: Double)] = []
        var nexts: [(id: UInt64, gain: Double)] = []
        func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
            XCTFail("the gainless form was called")
        }
        func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
                  gain: Double, nextGain: Double) {
            plays.append((id, gain, nextGain))
        }
        func setNext(id: UInt64, path: String) { XCTFail("the gainless form was called") }
        func setNext(id: UInt64, path: String, gain: Double) { nexts.append((id, gain)) }
        func clearNext() {}
        func pause() {}
        func resume() {}
        func stop() {}
        func release(token: UInt64) {}
        func probe() {}
        func seek(to seconds: Double) {}
        func setVolume(_ percent: Int) {}
        func position() -> (id: UInt64, seconds: Double)? { nil }
        func shutdown() {}
    }

    func testGainsReachThePort() {
        let port = GainPort()
        port.carryOut(.startTrack(playID: 1, path: "/m/a.flac", at: 0, paused: false,
                                  next: NextPlay(playID: 2, path: "/m/b.flac", gain: 0.25), gain: 0.5))
        port.carryOut(.startTrack(playID: 3, path: "/m/a.flac", at: 0, paused: false))
        port.carryOut(.setNext(playID: 4, path: "/m/b.flac", gain: 2))
        port.carryOut(.setNext(playID: 5, path: "/m/b.flac"))
        XCTAssertEqual(port.plays.map(\.id), [1, 3])
        XCTAssertEqual(port.plays.map(\.gain), [0.5, 1])
        XCTAssertEqual(port.plays.map(\.nextGain), [0.25, 1])
        XCTAssertEqual(port.nexts.map(\.id), [4, 5])
        XCTAssertEqual(port.nexts.map(\.gain), [2, 1])
    }
}

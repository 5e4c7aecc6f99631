// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The core's ReplayGain and playback speed reach the audio port: `startTrack`'s and its
/// successor's, `setNext`'s and `setSpeed`'s; nil (no gain, no speed) as 1, untouched.
final class PlayCarryOutTests: XCTestCase {
    private final class GainPort: AudioPort {
        var plays: [(id: UInt64, gain: Double, nextGain: Double, speed: Double, nextSpeed: Double)] = []
        var nexts: [(id: UInt64, gain: Double, speed: Double)] = []
        var speeds: [(id: UInt64, speed: Double)] = []
        func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?) {
            XCTFail("the gainless form was called")
        }
        func play(id: UInt64, path: String, from seconds: Double, paused: Bool, next: (id: UInt64, path: String)?,
                  gain: Double, nextGain: Double, speed: Double, nextSpeed: Double) {
            plays.append((id, gain, nextGain, speed, nextSpeed))
        }
        func setNext(id: UInt64, path: String) { XCTFail("the gainless form was called") }
        func setNext(id: UInt64, path: String, gain: Double, speed: Double) { nexts.append((id, gain, speed)) }
        func setSpeed(id: UInt64, speed: Double) { speeds.append((id, speed)) }
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

    func testGainsAndSpeedsReachThePort() {
        let port = GainPort()
        port.carryOut(.startTrack(playID: 1, path: "/m/a.flac", at: 0, paused: false,
                                  next: NextPlay(playID: 2, path: "/m/b.flac", gain: 0.25, speed: 1.5), gain: 0.5, speed: 1.25))
        port.carryOut(.startTrack(playID: 3, path: "/m/a.flac", at: 0, paused: false))
        port.carryOut(.setNext(playID: 4, path: "/m/b.flac", gain: 2, speed: 0.75))
        port.carryOut(.setNext(playID: 5, path: "/m/b.flac"))
        XCTAssertEqual(port.plays.map(\.id), [1, 3])
        XCTAssertEqual(port.plays.map(\.gain), [0.5, 1])
        XCTAssertEqual(port.plays.map(\.nextGain), [0.25, 1])
        XCTAssertEqual(port.nexts.map(\.id), [4, 5])
        XCTAssertEqual(port.nexts.map(\.gain), [2, 1])
        XCTAssertEqual(port.plays.map(\.speed), [1.25, 1])
        XCTAssertEqual(port.plays.map(\.nextSpeed), [1.5, 1])
        XCTAssertEqual(port.nexts.map(\.speed), [0.75, 1])
        // A speed changed in place; nil is 1 (the stretcher taken out).
        port.carryOut(.setSpeed(playID: 3, speed: 1.5))
        port.carryOut(.setSpeed(playID: 3, speed: nil))
        XCTAssertEqual(port.speeds.map(\.id), [3, 3])
        XCTAssertEqual(port.speeds.map(\.speed), [1.5, 1])
    }
}

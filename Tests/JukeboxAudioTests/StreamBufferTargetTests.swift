// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `StreamDecoder.bufferTarget`: the start-up buffer from the server's `icy-br`, whatever it says.
final class StreamBufferTargetTests: XCTestCase {
    func testTheBufferTargetFollowsIcyBrAndSurvivesAnyValue() {
        var settings = StreamSettings()
        settings.bufferSeconds = 2
        var facts = StreamFacts()
        let capacity = 1 << 20
        XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), 32_000)
        facts.bitrate = 64
        XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), 16_000)
        // What a hostile or broken server may send: the ring's size at most, the default for nonsense.
        let cases: [(Int, Int)] = [(Int.max, capacity), (Int.max / 125 + 1, capacity), (0, 32_000), (-5, 32_000), (Int.min, 32_000)]
        for (bitrate, expected) in cases {
            facts.bitrate = bitrate
            XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), expected, "icy-br \(bitrate)")
        }
    }

    func testWithoutIcyBrTheStreamHeadersNominalBitrateCounts() {
        var settings = StreamSettings()
        settings.bufferSeconds = 2
        var facts = StreamFacts()
        let capacity = 1 << 20
        facts.nominalBitrate = 32
        XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), 8_000)
        // icy-br, when sent, is the server's word and wins.
        facts.bitrate = 64
        XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), 16_000)
        facts.bitrate = nil
        let cases: [(Int, Int)] = [(Int.max, capacity), (0, 32_000), (-5, 32_000), (Int.min, 32_000)]
        for (bitrate, expected) in cases {
            facts.nominalBitrate = bitrate
            XCTAssertEqual(StreamDecoder.bufferTarget(facts: facts, settings: settings, capacity: capacity), expected, "nominal \(bitrate)")
        }
    }
}

// SPDX-License-Identifier: MIT
import JukeboxService
import XCTest

/// The config's `"output"`: where the sound goes (ALSA, nowhere, a Snapcast pipe).
final class OutputConfigTests: XCTestCase {
    func parse(_ text: String) throws -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func problem(_ text: String) -> String {
        do {
            _ = try parse(text)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    func testSnapcastReadsItsPipeAndSampleFormatWithDefaults() throws {
        XCTAssertNil(try parse("{}").config.snapcast)
        let plain = try parse(#"{"output": {"type": "snapcast"}}"#)
        XCTAssertEqual(plain.warnings, [])
        XCTAssertEqual(plain.config.audio, .snapcast)
        XCTAssertEqual(plain.config.snapcast, SnapcastSettings())
        XCTAssertEqual(plain.config.snapcast?.pipe, "/run/snapserver/jukebox")
        XCTAssertEqual(plain.config.snapcast?.sampleFormat, "44100:16:2")
        let (c, w) = try parse(#"{"output": {"type": "snapcast", "pipe": "/run/snap/x", "sampleFormat": "48000:24:2", "codec": "flac"}}"#)
        XCTAssertEqual(c.snapcast?.pipe, "/run/snap/x")
        XCTAssertEqual([c.snapcast?.rate, c.snapcast?.bits, c.snapcast?.channels], [48000, 24, 2])
        XCTAssertEqual(w, ["c.json: unknown key \"output.codec\" ignored"])
        XCTAssertEqual(try parse(#"{"output": {"type": "null"}}"#).config.audio, .null)
        XCTAssertEqual(try parse(#"{"output": {"type": "alsa"}}"#).config.audio, .alsa)
        XCTAssertNil(try parse(#"{"output": {"type": "alsa"}}"#).config.snapcast)
    }

    func testMistakesNameTheirKey() {
        XCTAssertTrue(problem(#"{"output": {"type": "pulse"}}"#).contains("output.type: must be \"alsa\", \"null\" or \"snapcast\""))
        XCTAssertTrue(problem(#"{"output": {}}"#).contains("output.type"))
        XCTAssertTrue(problem(#"{"output": {"type": "snapcast", "pipe": "relative/fifo"}}"#).contains("output.pipe"))
        XCTAssertTrue(problem(#"{"output": {"type": "snapcast", "pipe": 3}}"#).contains("output.pipe"))
        for format in ["44100:16", "44100:20:2", "44100:16:0", "44100:16:9", "100:16:2", "x:16:2", "44100:16:2:1", ""] {
            XCTAssertTrue(problem(#"{"output": {"type": "snapcast", "sampleFormat": "\#(format)"}}"#).contains("output.sampleFormat"), format)
        }
        XCTAssertTrue(problem(#"{"output": {"type": "alsa", "pipe": "/x"}}"#).contains("output.pipe"))
        // One key says where the sound goes.
        XCTAssertTrue(problem(#"{"audio": "null", "output": {"type": "snapcast"}}"#).contains("output: must be"))
        XCTAssertTrue(problem(#"{"audio": "snapcast"}"#).contains("audio: must be \"alsa\" or \"null\""))
        XCTAssertTrue(problem(#"{"output": "snapcast"}"#).contains("output: must be an object"))
    }
}

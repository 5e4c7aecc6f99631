// SPDX-License-Identifier: MIT
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The config's `loudness` section: read into the core's `LoudnessSettings`, checked with one clear error.
final class LoudnessConfigTests: XCTestCase {
    private func parse(_ text: String) throws(Config.Problem) -> (config: Config, warnings: [String]) {
        try Config.parse(Array(text.utf8), source: "c.json")
    }

    func testTheSectionIsReadAndChecked() throws {
        XCTAssertEqual(try parse("{}").config.settings.loudness, LoudnessSettings(mode: .off))
        let (c, w) = try parse(#"{"loudness": {"mode": "auto", "preamp": -2.5, "untaggedPreamp": -6, "preventClipping": false, "scan": false, "level": 1}}"#)
        XCTAssertEqual(c.settings.loudness, LoudnessSettings(mode: .auto, preamp: -2.5, untaggedPreamp: -6, preventClipping: false, scan: false))
        XCTAssertEqual(w, [#"c.json: unknown key "loudness.level" ignored"#])
        // Scanning is on unless turned off (it does nothing while the mode is off).
        XCTAssertTrue(try parse(#"{"loudness": {"mode": "track"}}"#).config.settings.loudness.scan)
        XCTAssertEqual(try parse(#"{"loudness": {"mode": "album"}}"#).config.settings.loudness, LoudnessSettings(mode: .album))
        let expectation = #"c.json: loudness: must be {"mode": "off", "track", "album" or "auto", "preamp": dB from -30 to 15, "#
            + #""untaggedPreamp": dB from -30 to 15, "preventClipping": true or false, "scan": true or false}"#
        let bad: [String] = [#"{"loudness": {"mode": "loud"}}"#, #"{"loudness": {"mode": "Track"}}"#, #"{"loudness": {"preamp": 16}}"#,
                             #"{"loudness": {"untaggedPreamp": -31}}"#, #"{"loudness": {"preamp": "+3 dB"}}"#,
                             #"{"loudness": {"preventClipping": "yes"}}"#, #"{"loudness": "track"}"#,
                             #"{"loudness": {"scan": "yes"}}"#]
        for text in bad {
            XCTAssertThrowsError(try parse(text), text) { XCTAssertEqual("\($0)", expectation, text) }
        }
    }
}

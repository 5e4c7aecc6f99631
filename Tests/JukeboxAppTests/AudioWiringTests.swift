// SPDX-License-Identifier: MIT
import Foundation
import JukeboxApp
import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// The engine's reports as the core's events: the one translation between the two vocabularies.
final class AudioWiringTests: XCTestCase {
    func testEveryReportBecomesItsEventAndTheFirstSampleNone() {
        XCTAssertEqual(AudioWiring.event(for: .started(id: 3)), .trackStarted(playID: 3))
        XCTAssertEqual(AudioWiring.event(for: .finished(id: 3, next: 4)), .trackFinished(playID: 3, next: 4))
        XCTAssertEqual(AudioWiring.event(for: .finished(id: 3)), .trackFinished(playID: 3, next: nil))
        XCTAssertEqual(AudioWiring.event(for: .failed(id: 5, reason: "not audio")), .trackFailed(playID: 5, reason: "not audio"))
        XCTAssertEqual(AudioWiring.event(for: .deviceAvailable), .deviceAvailable)
        XCTAssertNil(AudioWiring.event(for: .firstSample))
        XCTAssertEqual(AudioWiring.event(for: .released(token: 7, heard: HeardPoint(id: 3, seconds: 12.5))),
                       .deviceReleased(token: 7, heard: PlayPosition(playID: 3, seconds: 12.5)))
        XCTAssertEqual(AudioWiring.event(for: .released(token: 8, heard: nil)), .deviceReleased(token: 8, heard: nil))
    }

    func testADeviceProblemNamesItsHolderAndKeepsItsKind() {
        let busy = OutputError(kind: .busy, message: "hw:0: device is busy", holder: "aplay (pid 4711)")
        XCTAssertEqual(AudioWiring.event(for: .deviceUnavailable(busy)),
                       .deviceUnavailable(reason: "hw:0: device is busy (held by aplay (pid 4711))", problem: .busy))
        XCTAssertEqual(AudioWiring.describe(OutputError(kind: .lost, message: "hw:0: unplugged")), "hw:0: unplugged")
        XCTAssertEqual(AudioWiring.problem(.busy), .busy)
        XCTAssertEqual(AudioWiring.problem(.unsupported), .unsupported)
        // The core retries both: a device that went away and one that failed for another reason.
        XCTAssertEqual(AudioWiring.problem(.lost), .lost)
        XCTAssertEqual(AudioWiring.problem(.other), .lost)
    }
}

/// A file's ReplayGain tags reach the core's `TrackInfo` (and none: nil, as before).
final class LoudnessWiringTests: XCTestCase {
    func testTagsBecomeTheTrackInfosLoudness() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jukebox-loudness-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.flac").path
        try TestAudio.write(path: path, kind: .flac, frames: 4410)
        XCTAssertNil(AudioWiring.trackInfo(path: path).loudness)
        try metaflac(["--set-tag=REPLAYGAIN_ALBUM_GAIN=-3.5 dB", "--set-tag=REPLAYGAIN_ALBUM_PEAK=0.25", path])
        XCTAssertEqual(AudioWiring.trackInfo(path: path).loudness, Loudness(albumGain: -3.5, albumPeak: 0.25))
    }
}

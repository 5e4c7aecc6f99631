// SPDX-License-Identifier: MIT
import Foundation
import JukeboxCore
@testable import JukeboxService
import XCTest

/// The saved phase's text forms, where it is text: the state file's `phase` and the place
/// sidecar's. Inside the program it is a `SavedPhase` (`Snapshot.phase`, `SaveMark.phase`); the
/// files on disk stay exactly as they were, and an old or hand-edited file still loads.
final class SavedPhaseTextTests: XCTestCase {
    let tracks = (1...2).map { TrackInfo(path: "/m/\($0).flac", title: "T\($0)", duration: 200) }

    /// A state file whose `phase` is `json`: the phase read and the problems said.
    private func read(_ json: String) throws -> (SavedPhase, [String]) {
        let text = #"{"version":1,"tracks":[{"path":"/m/1.flac","title":"a"}],"current":0,"position":3"# + (json.isEmpty ? "" : ",\"phase\":" + json) + "}"
        let file = try JSONDecoder().decode(SnapshotFile.self, from: Data(text.utf8))
        return (file.snapshot.phase, file.problems)
    }

    func testTheStateFilesPhaseTextReadsAsTheTypeOrStoppedWithAProblem() throws {
        let noted = ["phase: not playing, paused or stopped"]
        // the JSON of `phase` (empty: absent), the phase read, the problems
        let rows: [(String, SavedPhase, [String])] = [
            (#""playing""#, .playing, []), (#""paused""#, .paused, []), (#""stopped""#, .stopped, []),
            ("", .stopped, []), ("null", .stopped, []),
            (#""waiting""#, .stopped, noted), (#""interrupted""#, .stopped, noted), (#""Playing""#, .stopped, noted),
            (#"" playing""#, .stopped, noted), (#""""#, .stopped, noted), ("1", .stopped, noted), ("true", .stopped, noted),
        ]
        for (json, phase, problems) in rows {
            let (read, said) = try read(json)
            XCTAssertEqual(read, phase, json)
            XCTAssertEqual(said, problems, json)
        }
    }

    func testEachPhaseIsWrittenAsItsTextInBothFiles() throws {
        XCTAssertEqual(SavedPhase.allCases.map(\.rawValue), ["playing", "paused", "stopped"])
        for phase in SavedPhase.allCases {
            let snapshot = Snapshot(tracks: tracks, current: 1, position: 7, phase: phase)
            let json = String(decoding: try JSONEncoder().encode(snapshot), as: UTF8.self)
            XCTAssertTrue(json.contains(#""phase":"\#(phase.rawValue)""#), json)
            let place = PlaceFile(snapshot, queueHash: 42)
            XCTAssertEqual(place.phase, phase.rawValue)
            XCTAssertTrue(String(decoding: place.bytes(), as: UTF8.self).contains(#""phase":"\#(phase.rawValue)""#))
            var back = Snapshot(tracks: tracks)
            place.apply(to: &back)
            XCTAssertEqual(back.phase, phase)
        }
    }

    func testASidecarWithAnotherPhaseTextDoesNotFit() {
        var place = PlaceFile(Snapshot(tracks: tracks, current: 1, position: 7, phase: .paused), queueHash: 42)
        for text in ["playing", "paused", "stopped"] {
            place.phase = text
            XCTAssertTrue(place.fits(tracks: 2), text)
        }
        for text in ["waiting", "", "PAUSED", "paused\n"] {
            place.phase = text
            XCTAssertFalse(place.fits(tracks: 2), text)
        }
    }
}

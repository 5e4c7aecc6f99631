// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `WriterPhase`, the writer thread's explicit state, as a table: every phase × every transition →
/// the next phase (and, for a resume, what is done with the device).
final class WriterPhaseTests: XCTestCase {
    private typealias Phase = WriterPhase

    private static let phases: [Phase] = [
        .writing, .ending,
        .paused(drained: false, ending: false), .paused(drained: true, ending: false),
        .paused(drained: false, ending: true), .paused(drained: true, ending: true),
        .lingering(until: 7),
    ]

    private struct Column: Sendable {
        var name: String
        var apply: @Sendable (inout Phase) -> Void
    }

    private static let columns: [Column] = [
        Column(name: "wroteEnd") { $0.wroteEnd() },
        Column(name: "sentReports") { $0.sentReports() },
        Column(name: "paused(drained: false)") { $0.paused(drained: false) },
        Column(name: "paused(drained: true)") { $0.paused(drained: true) },
        Column(name: "openedDevice") { $0.openedDevice() },
        Column(name: "forgotStream") { $0.forgotStream() },
        Column(name: "linger(until: 9)") { $0.linger(until: 9) },
        Column(name: "linger(until: nil)") { $0.linger(until: nil) },
        Column(name: "stopLingering") { $0.stopLingering() },
    ]

    func testEveryPhaseTimesEveryTransition() {
        let w = Phase.writing, e = Phase.ending, l = Phase.lingering(until: 7), l9 = Phase.lingering(until: 9)
        func p(_ drained: Bool, _ ending: Bool) -> Phase { .paused(drained: drained, ending: ending) }
        // Rows: `phases`; columns: `columns`.
        let table: [[Phase]] = [
            // wroteEnd sentReports paused(f) paused(t) opened forgot linger(9) linger(nil) stopLinger
            [e, w, p(false, false), p(true, false), w, w, l9, w, w],                                         // writing
            [e, w, p(false, true), p(true, true), e, w, l9, w, e],                                           // ending
            [p(false, true), p(false, false), p(false, false), p(true, false), w, w, l9, w, p(false, false)], // paused
            [p(true, true), p(true, false), p(false, false), p(true, false), w, w, l9, w, p(true, false)],    // paused, drained
            [p(false, true), p(false, false), p(false, true), p(true, true), e, w, l9, w, p(false, true)],     // paused, ending
            [p(true, true), p(true, false), p(false, true), p(true, true), e, w, l9, w, p(true, true)],        // drained, ending
            [e, l, p(false, false), p(true, false), l, l, l9, w, w],                                         // lingering
        ]
        XCTAssertEqual(table.count, Self.phases.count)
        for (phase, row) in zip(Self.phases, table) {
            XCTAssertEqual(row.count, Self.columns.count)
            for (column, expected) in zip(Self.columns, row) {
                var next = phase
                column.apply(&next)
                XCTAssertEqual(next, expected, "\(phase) \(column.name)")
            }
        }
    }

    func testResumingWritesOnAndSaysWhatToDoWithTheDevice() {
        let rows: [(Phase, Phase, Phase.Resume)] = [
            (.writing, .writing, .none),
            (.ending, .ending, .none),
            (.paused(drained: false, ending: false), .writing, .resumeDevice),
            (.paused(drained: true, ending: false), .writing, .fadeIn),
            (.paused(drained: false, ending: true), .ending, .resumeDevice),
            (.paused(drained: true, ending: true), .ending, .fadeIn),
            (.lingering(until: 7), .lingering(until: 7), .none),
        ]
        XCTAssertEqual(rows.map(\.0), Self.phases)
        for (from, to, action) in rows {
            var phase = from
            XCTAssertEqual(phase.resumed(), action, "\(from)")
            XCTAssertEqual(phase, to, "\(from)")
        }
    }

    func testTheQuestionsTheWriterAsks() {
        XCTAssertEqual(Self.phases.map(\.isPaused), [false, false, true, true, true, true, false])
        XCTAssertEqual(Self.phases.map(\.endWritten), [false, true, false, false, true, true, false])
        XCTAssertEqual(Self.phases.map(\.lingerUntil), [nil, nil, nil, nil, nil, nil, 7])
    }
}

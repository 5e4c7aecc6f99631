// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
@testable import JukeboxMQTT
import XCTest

/// When the position is published, by a table: each row is one status read and whether the
/// position goes out then.
final class PositionPublisherTests: XCTestCase {
    private struct Row {
        let now: Double
        let position: Double?
        var file = "a.flac"
        var phase = "playing"
        let publish: Bool
        let why: String
    }

    func testThePositionGoesOutEveryIntervalWhileItRunsAndAtOnceAfterAJump() {
        let rows: [Row] = [
            Row(now: 0, position: 0, publish: true, why: "the first position"),
            Row(now: 1, position: 1, publish: false, why: "runs as expected"),
            Row(now: 9.9, position: 9.9, publish: false, why: "not yet the interval"),
            Row(now: 10, position: 10, publish: true, why: "the interval passed"),
            Row(now: 11, position: 11.4, publish: false, why: "1.4 s off: within the jump threshold"),
            Row(now: 12, position: 30, publish: true, why: "a seek forward"),
            Row(now: 13, position: 31, file: "b.flac", publish: true, why: "another track"),
            Row(now: 14, position: 32, file: "b.flac", phase: "paused", publish: true, why: "another phase"),
            Row(now: 30, position: 32, file: "b.flac", phase: "paused", publish: false, why: "paused: it does not run, nothing is due"),
            Row(now: 31, position: 10, file: "b.flac", phase: "paused", publish: true, why: "a seek while paused"),
            Row(now: 32, position: nil, file: "", phase: "stopped", publish: true, why: "no position: published empty"),
            Row(now: 33, position: 0, file: "b.flac", phase: "playing", publish: true, why: "a position again"),
        ]
        var p = PositionPublisher(interval: 10)
        for row in rows {
            let running = row.phase == "playing"
            XCTAssertEqual(p.observe(row.position, file: row.file, phase: row.phase, running: running, now: row.now), row.publish,
                           "at \(row.now): \(row.why)")
        }
        XCTAssertEqual(p.published, 0)
    }

    func testAPositionHeldBackLeavesThePublishedOneAndForgetPublishesAgain() {
        var p = PositionPublisher(interval: 10)
        XCTAssertTrue(p.observe(5, file: "a", phase: "playing", running: true, now: 0))
        XCTAssertFalse(p.observe(6, file: "a", phase: "playing", running: true, now: 1))
        XCTAssertEqual(p.published, 5, "the state object carries what was published, not each second's value")
        p.forget()
        XCTAssertNil(p.published)
        XCTAssertTrue(p.observe(7, file: "a", phase: "playing", running: true, now: 2), "after a reconnect everything goes out")
    }

    /// The rule alone, each row against one position seen before (10 s into a.flac, playing, read
    /// at 100 and published at 95; interval 10, jumps beyond 1.5 s).
    func testThePublishingRuleByATable() {
        typealias Seen = PositionPublisher.Seen
        // position, now, published?, why; then what differs from 10 s into a.flac, playing
        struct Rule {
            let position: Double, now: Double, publish: Bool, why: String
            var file = "a.flac", phase = "playing"
            var seen = Seen(value: 10, at: 100, published: 95, file: "a.flac", phase: "playing", running: true)
            init(_ position: Double, _ now: Double, _ publish: Bool, _ why: String, file: String = "a.flac", phase: String = "playing", seen: Seen? = nil) {
                (self.position, self.now, self.publish, self.why, self.file, self.phase) = (position, now, publish, why, file, phase)
                if let seen { self.seen = seen }
            }
        }
        let paused = Seen(value: 10, at: 100, published: 95, file: "a.flac", phase: "paused", running: false)
        let rows: [Rule] = [
            Rule(11, 101, false, "runs as expected"),
            Rule(12.5, 101, false, "1.5 s off: not beyond the threshold"),
            Rule(12.6, 101, true, "1.6 s ahead: a jump"),
            Rule(9.4, 101, true, "1.6 s behind: a jump"),
            Rule(15, 105, true, "the interval since the last publication"),
            Rule(14.9, 104.9, false, "not yet the interval"),
            Rule(11, 101, true, "another file", file: "b.flac"),
            Rule(11, 101, true, "another phase", phase: "paused"),
            Rule(11, 101, true, "another phase, one the face does not know", phase: "waiting"),
            Rule(10, 200, false, "paused: nothing runs, nothing is due", phase: "paused", seen: paused),
            Rule(11.6, 101, true, "paused: a seek", phase: "paused", seen: paused),
            Rule(11, 101, true, "paused, now playing", seen: paused),
        ]
        for r in rows {
            XCTAssertEqual(PositionPublisher.publishes(r.position, file: r.file, phase: r.phase, running: r.phase == "playing", now: r.now,
                                                       after: r.seen, interval: 10), r.publish, r.why)
        }
    }
}

/// The bridge's payloads, built from typed values through the one JSON encoder (`JSONValue`).
final class MQTTPayloadTests: XCTestCase {
    func testTheStateObjectKeepsItsFieldsOrderAndTenths() throws {
        let json = #"{"phase":"playing","title":"T \"q\"\u0001","artist":null,"album":"A","path":"/m/a.flac","position":61.26,"#
            + #""duration":200.04,"index":1,"count":3,"volume":60,"shuffle":false,"repeat":"all","message":null,"newCard":null,"stream":false}"#
        let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
        XCTAssertEqual(MQTTBridge.state(status, published: 61.26).text,
                       #"{"phase":"playing","title":"T \"q\"\u0001","artist":null,"album":"A","file":"/m/a.flac","position":61.3,"#
                       + #""duration":200.0,"volume":60,"shuffle":false,"repeat":"all","queue":3,"message":null,"chapter":null,"speed":null}"#)
        XCTAssertTrue(MQTTBridge.state(status, published: nil).text.contains(#""position":null,"#))
        XCTAssertTrue(MQTTBridge.state(status, published: .infinity).text.contains(#""position":null,"#))
    }

    /// An audiobook's chapter, as `status --json` gives it, in the state object: index, count, title.
    func testTheStateObjectCarriesTheChapter() throws {
        let json = #"{"phase":"playing","title":"Book","path":"/m/b.m4b","position":2.5,"index":1,"count":1,"volume":60,"#
            + #""shuffle":false,"repeat":"off","stream":false,"chapter":{"index":2,"count":3,"title":"The \"middle\"","start":2}}"#
        let status = try JSONDecoder().decode(PlayerStatusJSON.self, from: Data(json.utf8))
        XCTAssertTrue(MQTTBridge.state(status, published: 2.5).text.hasSuffix(
            #""message":null,"chapter":{"index":2,"count":3,"title":"The \"middle\""},"speed":null}"#), MQTTBridge.state(status, published: 2.5).text)
    }

    func testEventsArePublishedFromTheirFields() throws {
        let rows: [(String, [String])] = [
            (#"event {"time":"04:47:43.250","what":"next","phase":"playing"}"#, ["event=next → playing"]),
            (#"event {"time":"t","what":"card 0A0B read","phase":"playing","card":"0A0B"}"#, ["event=card 0A0B read → playing", "card=0A0B"]),
            (#"event {"time":"t","what":"gesture next long","phase":"paused","button":"next","gesture":"long"}"#,
             ["event=gesture next long → paused", "button/next=long"]),
            (#"event {"time":"t","what":"gesture x","phase":"paused","button":"nosuch","gesture":"long"}"#, ["event=gesture x → paused"]),
            (#"event {"time":"t","what":"w"}"#, ["event=w"]),
        ]
        for (line, messages) in rows {
            let event = try XCTUnwrap(EventLine(json: line), line)
            XCTAssertEqual(MQTTBridge.messages(for: event).map { $0.name + "=" + $0.payload }, messages, line)
            // What the player writes reads back the same.
            XCTAssertEqual(EventLine(json: event.json), event, line)
        }
        XCTAssertNil(EventLine(json: #"event {"time":"t"}"#), "no what: no event")
        XCTAssertNil(EventLine(json: "ok events"))
    }
}

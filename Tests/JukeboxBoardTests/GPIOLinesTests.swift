// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import XCTest

/// Edges through the path a chip's edges take: kernel records (`struct gpioevent_data` with
/// libgpiod 1.6, `struct gpio_v2_line_event` with libgpiod 2) written into pipes that a request
/// adopted, read by `jb_gpio_request_read` (with libgpiod 1.6: parsed by libgpiod itself), then
/// active-low, line mapping and merging in `GPIOLines.readEdges()`.
final class GPIOLinesTests: XCTestCase {
    private let t0: UInt64 = 3 * 86_400 * 1_000_000_000 + 123_456_789 // three days of uptime, odd ns

    private func us(_ microseconds: UInt64) -> UInt64 { t0 + microseconds * 1000 }

    func testBouncyPressAndReleaseComeOutInOrderWithActiveLowApplied() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 17), GPIOLineSpec(offset: 27)])
        // A pulled-up button to ground: pressing pulls the pin low with contact bounce, releasing
        // lets it go high with a shorter bounce. Timestamps as a Pi's kernel gives them.
        let press: [(line: Int, rising: Bool, timestampNs: UInt64)] = [
            (0, false, us(0)), (0, true, us(120)), (0, false, us(180)), (0, true, us(900)), (0, false, us(1_400)),
            (0, true, us(181_000)), (0, false, us(181_050)), (0, true, us(181_300)),
        ]
        try feed.feed(press)
        let edges = try feed.lines.readEdges()
        XCTAssertEqual(edges, [
            GPIOEdge(line: 0, rising: true, timestampNs: us(0)),
            GPIOEdge(line: 0, rising: false, timestampNs: us(120)),
            GPIOEdge(line: 0, rising: true, timestampNs: us(180)),
            GPIOEdge(line: 0, rising: false, timestampNs: us(900)),
            GPIOEdge(line: 0, rising: true, timestampNs: us(1_400)),
            GPIOEdge(line: 0, rising: false, timestampNs: us(181_000)),
            GPIOEdge(line: 0, rising: true, timestampNs: us(181_050)),
            GPIOEdge(line: 0, rising: false, timestampNs: us(181_300)),
        ])
        XCTAssertEqual(try feed.lines.readEdges(), [], "nothing is read twice")
    }

    func testTwoLinesAreMergedByTimestampAndActiveHighLinesKeepTheirEdges() throws {
        let feed = try GPIOEventFeed([
            GPIOLineSpec(offset: 5),                                  // button, active-low
            GPIOLineSpec(offset: 6, bias: .pullDown, activeLow: false), // to 3V3 with a pull-down
        ])
        // The kernel writes each line's records in its own order; across fds (libgpiod 1.6) only the
        // timestamps say what came first.
        try feed.feed([(0, false, us(10)), (1, true, us(20)), (0, true, us(30)), (1, false, us(25))])
        XCTAssertEqual(try feed.lines.readEdges(), [
            GPIOEdge(line: 0, rising: true, timestampNs: us(10)),
            GPIOEdge(line: 1, rising: true, timestampNs: us(20)),
            GPIOEdge(line: 1, rising: false, timestampNs: us(25)),
            GPIOEdge(line: 0, rising: false, timestampNs: us(30)),
        ])
    }

    func testARotaryEncoderBurstLargerThanOneReadIsReadCompletely() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(name: "GPIO23"), GPIOLineSpec(name: "GPIO24")])
        // Quadrature: A and B alternate, 4 transitions per detent, 50 detents turned fast (200 edges,
        // more than one 64-record read).
        var input: [(line: Int, rising: Bool, timestampNs: UInt64)] = []
        var level = [true, true]
        for step in 0..<200 {
            let line = step % 2
            level[line].toggle()
            input.append((line, level[line], us(UInt64(step) * 250)))
        }
        try feed.feed(input)
        let edges = try feed.lines.readEdges()
        XCTAssertEqual(edges.count, 200)
        XCTAssertEqual(edges.map(\.timestampNs), input.map(\.timestampNs))
        XCTAssertEqual(edges.map(\.line), input.map(\.line))
        XCTAssertEqual(edges.map(\.rising), input.map { !$0.rising }, "active-low by default")
    }

    func testABurstLongerThanTheKernelQueueLosesItsLastEdgesButTheLevelReadIsTheLines() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 17), GPIOLineSpec(offset: 22, bias: .pullDown, activeLow: false)])
        XCTAssertEqual(try feed.lines.level(0), false, "a fed active-low line starts released (high)")
        XCTAssertEqual(try feed.lines.level(1), false, "a fed active-high line starts released (low)")
        // A press with 41 edges of bounce, ending low (pressed); the kernel keeps the first 16.
        let burst = (0..<41).map { (line: 0, rising: $0 % 2 == 1, timestampNs: us(UInt64($0) * 50)) }
        try feed.feed(burst, kernelQueue: 16)
        let edges = try feed.lines.readEdges()
        XCTAssertEqual(edges.count, 16)
        XCTAssertEqual(edges.map(\.timestampNs), burst.prefix(16).map(\.timestampNs))
        XCTAssertEqual(edges.last?.rising, false, "the last edge read says released")
        XCTAssertEqual(try feed.lines.level(0), true, "the line says pressed")
        XCTAssertEqual(try feed.lines.level(1), false)
        // Active-low is applied to levels as to edges; a level can change without an edge.
        try feed.setLevel(line: 1, high: true)
        XCTAssertEqual(try feed.lines.level(1), true)
        try feed.setLevel(line: 0, high: true)
        XCTAssertEqual(try feed.lines.level(0), false)
        XCTAssertEqual(try feed.lines.readEdges(), [])
        feed.lines.close()
        XCTAssertThrowsError(try feed.lines.level(0)) { XCTAssertEqual(($0 as? DeviceError)?.errno, EBADF) }
        XCTAssertThrowsError(try feed.setLevel(line: 0, high: false))
    }

    func testNothingWaitingReturnsAtOnce() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 17)])
        let start = Date()
        XCTAssertEqual(try feed.lines.readEdges(), [])
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
    }

    func testOneFdPerLineWithLibgpiod1AndOnePerRequestWithLibgpiod2() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 1), GPIOLineSpec(offset: 2), GPIOLineSpec(offset: 3)])
        XCTAssertEqual(feed.lines.fds.count, GPIOChips.libgpiodAPI == 1 ? 3 : 1)
        feed.lines.close()
        XCTAssertEqual(feed.lines.fds, [])
        XCTAssertEqual(try feed.lines.readEdges(), [])
    }

    func testATruncatedRecordIsAnErrorNotAGarbledEdge() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 17)])
        let record = feed.record(line: 0, rising: true, timestampNs: us(1))
        try feed.write(Array(record.prefix(record.count / 2)), line: 0)
        XCTAssertThrowsError(try feed.lines.readEdges()) { error in
            XCTAssertEqual((error as? DeviceError)?.errno, EIO)
        }
    }

    func testAVanishedSourceIsAnError() throws {
        let feed = try GPIOEventFeed([GPIOLineSpec(offset: 17)])
        try feed.feed([(0, false, us(5))])
        feed.closeWriters()
        // The waiting edge comes first; then the end of the fd is reported.
        XCTAssertThrowsError(try feed.lines.readEdges())
    }

    func testLibgpiodVersionIsReported() {
        XCTAssertTrue([1, 2].contains(GPIOChips.libgpiodAPI))
        XCTAssertTrue(GPIOChips.libgpiodVersion.hasPrefix("\(GPIOChips.libgpiodAPI).") || GPIOChips.libgpiodVersion.hasPrefix("v\(GPIOChips.libgpiodAPI)"),
                      GPIOChips.libgpiodVersion)
    }
}

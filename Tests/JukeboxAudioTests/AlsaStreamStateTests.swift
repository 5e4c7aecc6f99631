// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `AlsaStreamState`, the ALSA output's stream states, as tables: state × event → next state and
/// the action the output carries out with libasound.
final class AlsaStreamStateTests: XCTestCase {
    private typealias State = AlsaStreamState

    private static let all: [State] = [.closed, .open, .paused(holding: true), .paused(holding: false)]

    /// Every state × pause or resume × what the device can and is doing.
    func testPauseAndResume() {
        struct Row {
            var from: State
            var on: Bool
            var canPause = true
            var running = false
            var devicePaused = false
            var to: State
            var action: State.Action
        }
        let rows: [Row] = [
            // Closed: nothing to pause or resume.
            Row(from: .closed, on: true, running: true, to: .closed, action: .none),
            Row(from: .closed, on: false, devicePaused: true, to: .closed, action: .none),
            Row(from: .closed, on: true, canPause: false, to: .closed, action: .none),
            // Open: a running device is paused for real; one that plays nothing only holds writes.
            Row(from: .open, on: true, running: true, to: .open, action: .pauseDevice(true)),
            Row(from: .open, on: true, running: false, to: .paused(holding: false), action: .none),
            Row(from: .open, on: true, canPause: false, running: true, to: .open, action: .refuse),
            Row(from: .open, on: true, canPause: false, running: false, to: .open, action: .refuse),
            Row(from: .open, on: false, running: true, to: .open, action: .none),
            Row(from: .open, on: false, canPause: false, to: .open, action: .none),
            // Paused: pausing again does nothing; resuming resumes a device paused for real.
            Row(from: .paused(holding: true), on: true, running: true, to: .paused(holding: true), action: .none),
            Row(from: .paused(holding: false), on: true, to: .paused(holding: false), action: .none),
            Row(from: .paused(holding: true), on: false, devicePaused: true, to: .paused(holding: true),
                action: .pauseDevice(false)),
            Row(from: .paused(holding: true), on: false, devicePaused: false, to: .open, action: .none),
            Row(from: .paused(holding: false), on: false, devicePaused: false, to: .open, action: .none),
            Row(from: .paused(holding: false), on: false, canPause: false, to: .paused(holding: false), action: .refuse),
        ]
        for row in rows {
            var state = row.from
            let action = state.pause(row.on, canPause: row.canPause, running: row.running, devicePaused: row.devicePaused)
            let name = "\(row.from) pause(\(row.on)) canPause \(row.canPause) running \(row.running) paused \(row.devicePaused)"
            XCTAssertEqual(action, row.action, name)
            XCTAssertEqual(state, row.to, name)
        }
    }

    /// The device's answer to `snd_pcm_pause` settles the state; a failure leaves it as it was.
    func testThePauseTakesEffectWhenTheDeviceDidIt() {
        var state = State.open
        XCTAssertEqual(state.pause(true, canPause: true, running: true, devicePaused: false), .pauseDevice(true))
        state.pauseDone(true)
        XCTAssertEqual(state, .paused(holding: true))
        XCTAssertFalse(state.takesWrites)
        XCTAssertEqual(state.pause(false, canPause: true, running: false, devicePaused: true), .pauseDevice(false))
        state.pauseDone(false)
        XCTAssertEqual(state, .open)
        XCTAssertTrue(state.takesWrites)
    }

    /// open, close, empty (drop or drain's end) and drain's start from every state.
    func testTheOtherTransitions() {
        let rows: [(State, opened: State, closed: State, emptied: State, draining: State, drainAction: State.Action)] = [
            (.closed, .open, .closed, .closed, .closed, .none),
            (.open, .open, .closed, .open, .open, .none),
            (.paused(holding: true), .open, .closed, .open, .open, .pauseDevice(false)),
            (.paused(holding: false), .open, .closed, .open, .open, .pauseDevice(false)),
        ]
        XCTAssertEqual(rows.map(\.0), Self.all)
        for row in rows {
            var state = row.0
            state.opened()
            XCTAssertEqual(state, row.opened, "\(row.0) opened")
            state = row.0
            state.closed()
            XCTAssertEqual(state, row.closed, "\(row.0) closed")
            state = row.0
            state.emptied()
            XCTAssertEqual(state, row.emptied, "\(row.0) emptied")
            state = row.0
            XCTAssertEqual(state.draining(), row.drainAction, "\(row.0) draining")
            XCTAssertEqual(state, row.draining, "\(row.0) draining")
        }
        XCTAssertEqual(Self.all.map(\.isOpen), [false, true, true, true])
        XCTAssertEqual(Self.all.map(\.takesWrites), [false, true, false, false])
    }
}

// SPDX-License-Identifier: MIT
import JukeboxCore
import JukeboxTestSupport
import Foundation
import XCTest

/// A phone playing through the box over Bluetooth (`Event.bluetoothPhone`, a fact from
/// bluez-alsa's monitor): the source `bluetooth` begins and ends by it, under the `sources` policy.
final class BluetoothPhoneTests: XCTestCase {
    private let phone = Interruption(id: "source-bluetooth", reason: "Bluetooth: Dad's phone", source: "bluetooth")

    /// The phone starts while track 1 of 2 plays at 31.4 s: the device is released, the status
    /// names the phone, the release gives the heard place (31.6 s).
    private func phoneTakesTrack1(_ h: CoreHarness, file: StaticString = #filePath, line: UInt = #line) {
        h.sourceTakesTrack1(by: .bluetoothPhone(streaming: true, sender: "Dad's phone"), phone, file: file, line: line)
    }

    func testAPhoneThatPlaysTakesTheDeviceAndItsStopResumesAtTheHeardPlace() {
        let h = CoreHarness(playing(2))
        h.heard(1, at: 31.4, shows: status("playing", song: 1, index: 1, of: 2, elapsed: "0:31"))
        phoneTakesTrack1(h)
        // Said again with the same name (a list after a monitor's restart): nothing changes.
        h.send(.bluetoothPhone(streaming: true, sender: "Dad's phone"), { _ in }, commands: [])
        h.interruptionEndsPlayingTrack1(of: 2, id: "source-bluetooth", at: 31.6, elapsed: "0:31",
                                        by: .bluetoothPhone(streaming: false, sender: ""))
        // A stop said again ends nothing.
        h.send(.bluetoothPhone(streaming: false, sender: ""), { _ in }, commands: [])
    }

    /// The adapter reads BlueZ's alias off the loop: a phone that streams before it came is
    /// shown by its address, then by its alias, said again as a start. Only the name changes (no
    /// second release, the place kept); over another interruption the name waits underneath.
    func testAPhonesAliasLearnedAfterTheStartReplacesItsAddress() {
        var s = playing(2)
        let begin = reduce(&s, .bluetoothPhone(streaming: true, sender: "00:AA:01:00:00:00"))
        XCTAssertTrue(begin.contains { if case .releaseDevice = $0 { return true } else { return false } }, "\(begin)")
        XCTAssertEqual(s.phase, .interrupted(reason: "Bluetooth: 00:AA:01:00:00:00"))
        let before = s
        let renamed = reduce(&s, .bluetoothPhone(streaming: true, sender: "Kim's \"phone\"\n\u{1B}[2J"))
        XCTAssertEqual(s.phase, .interrupted(reason: "Bluetooth: Kim's \"phone\"\u{FFFD}\u{FFFD}[2J"))
        XCTAssertEqual(s.interruptions.map(\.reason), ["Bluetooth: Kim's \"phone\"\u{FFFD}\u{FFFD}[2J"])
        XCTAssertFalse(renamed.contains { if case .releaseDevice = $0 { return true } else { return false } }, "\(renamed)")
        XCTAssertEqual(s.pendingGrants, before.pendingGrants)
        XCTAssertEqual(s.position, before.position)
        XCTAssertEqual(s.afterInterruption, before.afterInterruption)
        // Another interruption on top: it shows; the phone's new name is kept for after it.
        _ = reduce(&s, .interruptBegan(id: "alarm", reason: "alarm"))
        _ = reduce(&s, .bluetoothPhone(streaming: true, sender: "Kim"))
        XCTAssertEqual(s.phase, .interrupted(reason: "alarm"))
        _ = reduce(&s, .interruptEnded(id: "alarm"))
        XCTAssertEqual(s.phase, .interrupted(reason: "Bluetooth: Kim"))
    }

    func testAForbiddenPhoneIsRefusedAndItsStopChangesNothing() {
        var s = Settings()
        s.sources = SourceSettings(named: ["bluetooth": .forbidden])
        let h = CoreHarness(playing(2, settings: s))
        let refused = "Bluetooth refused: other sources are not allowed on this box"
        let shown = status("playing", song: 1, index: 1, of: 2, message: refused)
        h.send(.bluetoothPhone(streaming: true, sender: "Dad's phone"), {
            $0.message = refused
            $0.shown = shown
        }, commands: [.render(shown)])
        XCTAssertTrue(h.state.interruptions.isEmpty && h.state.pendingGrants.isEmpty && h.state.releaseToken == nil)
        // Its stop neither says "no interruption to end" nor touches the play.
        h.send(.bluetoothPhone(streaming: false, sender: ""), { _ in }, commands: [])
    }

    /// A forbidden phone whose address is known is also disconnected: keeping the card alone
    /// would not keep it out (bluealsa-aplay plays it once the card is let go, or at once on a
    /// shared device). Its name learnt after the refusal refuses it again, and asks again (a
    /// phone that connected again meanwhile is sent away too). An address that is not one asks
    /// nothing; another policy never disconnects.
    func testAForbiddenPhoneIsDisconnected() {
        var s = Settings()
        s.sources = SourceSettings(named: ["bluetooth": .forbidden])
        let h = CoreHarness(playing(2, settings: s))
        let refused = "Bluetooth refused: other sources are not allowed on this box"
        let shown = status("playing", song: 1, index: 1, of: 2, message: refused)
        h.send(.bluetoothPhone(streaming: true, sender: "AA:BB:CC:DD:EE:01", address: "aa:bb:cc:dd:ee:01"), {
            $0.message = refused
            $0.shown = shown
        }, commands: [.disconnectBluetooth(address: "AA:BB:CC:DD:EE:01"), .render(shown)])
        h.send(.bluetoothPhone(streaming: true, sender: "Kim's phone", address: "AA:BB:CC:DD:EE:01"), { _ in },
               commands: [.disconnectBluetooth(address: "AA:BB:CC:DD:EE:01")])
        h.send(.bluetoothPhone(streaming: false, sender: ""), { _ in }, commands: [])
        h.send(.bluetoothPhone(streaming: true, sender: "x", address: "AA:BB:CC:DD:EE:01; rm -rf /"), { _ in }, commands: [])
        XCTAssertTrue(h.state.interruptions.isEmpty && h.state.releaseToken == nil)

        for policy in [SourcePolicy.resume, .stayPaused] {
            var other = Settings()
            other.sources = SourceSettings(named: ["bluetooth": policy])
            var state = playing(2, settings: other)
            let commands = reduce(&state, .bluetoothPhone(streaming: true, sender: "p", address: "AA:BB:CC:DD:EE:01"))
            XCTAssertFalse(commands.contains { if case .disconnectBluetooth = $0 { return true } else { return false } }, "\(policy): \(commands)")
            XCTAssertEqual(state.interruptions.map(\.source), ["bluetooth"], "\(policy)")
        }
    }

    func testAPhonesStopNeverEndsAnotherInterruption() {
        var s = playing(2)
        _ = reduce(&s, .interruptBegan(id: "alarm", reason: "alarm"))
        _ = reduce(&s, .bluetoothPhone(streaming: false, sender: ""))
        XCTAssertEqual(s.interruptions.map(\.id), ["alarm"])
        // A phone over an interruption: its stop leaves the other in force.
        _ = reduce(&s, .bluetoothPhone(streaming: true, sender: "x"))
        _ = reduce(&s, .bluetoothPhone(streaming: false, sender: ""))
        XCTAssertEqual(s.interruptions.map(\.id), ["alarm"])
        XCTAssertEqual(s.phase, .interrupted(reason: "alarm"))
    }

    func testAPhonesNameIsInertAndBounded() {
        var s = playing(2)
        let hostile = "Evil\nok ▶\u{1B}[2J" + String(repeating: "é", count: 200)
        _ = reduce(&s, .bluetoothPhone(streaming: true, sender: hostile))
        guard case .interrupted(let reason) = s.phase else { return XCTFail("not interrupted: \(s.phase)") }
        XCTAssertTrue(reason.hasPrefix("Bluetooth: Evil\u{FFFD}ok ▶\u{FFFD}[2J"), reason)
        XCTAssertLessThanOrEqual(reason.utf8.count, "Bluetooth: ".utf8.count + OtherSource.maxSenderBytes, reason)
        let summary = Event.bluetoothPhone(streaming: true, sender: hostile).summary
        XCTAssertFalse(summary.unicodeScalars.contains { DisplayText.isControl($0) }, summary.debugDescription)
    }

    /// A stream that starts and stops 100 times, the engine's release report before or after the
    /// stop: every stop plays on from the place heard, nothing piles up.
    func testAPhoneThatFlaps100TimesNeverLosesThePlace() {
        var flips = SeededCoin(variable: "JUKEBOX_PHONE_SEED", test: "BluetoothPhoneTests flapping")
        let seed = flips.seed
        func coin() -> Bool { flips.flip() }
        var s = playing(2)
        var heard = 10.0
        _ = reduce(&s, .heard(playID: 1, seconds: heard))
        for cycle in 0..<100 {
            guard let playID = s.loaded?.playID else { return XCTFail("cycle \(cycle): nothing playing: \(s.phase)") }
            let begin = reduce(&s, .bluetoothPhone(streaming: true, sender: "flapper"))
            guard let token = begin.compactMap({ if case .releaseDevice(let t) = $0 { return t } else { return nil } }).first else {
                return XCTFail("cycle \(cycle) (seed \(seed)): no release asked: \(begin)")
            }
            heard += 0.05
            let released = PlayPosition(playID: playID, seconds: heard)
            let start: Double?
            if coin() {
                _ = reduce(&s, .deviceReleased(token: token, heard: released))
                start = startedAt(reduce(&s, .bluetoothPhone(streaming: false, sender: "")))
            } else {
                let before = s.position
                start = startedAt(reduce(&s, .bluetoothPhone(streaming: false, sender: "")))
                _ = reduce(&s, .deviceReleased(token: token, heard: released))
                XCTAssertEqual(start, before, "cycle \(cycle) (seed \(seed))")
                heard = before
            }
            XCTAssertEqual(start, heard, "cycle \(cycle) (seed \(seed)): not at the place")
            XCTAssertEqual(s.phase, .playing, "cycle \(cycle) (seed \(seed))")
            XCTAssertTrue(s.interruptions.isEmpty && s.pendingGrants.isEmpty && s.releaseToken == nil, "cycle \(cycle) (seed \(seed))")
            guard let again = s.loaded?.playID else { return XCTFail("cycle \(cycle): not restarted") }
            _ = reduce(&s, .trackStarted(playID: again))
            _ = reduce(&s, .heard(playID: again, seconds: heard))
        }
        XCTAssertEqual(s.position, heard, accuracy: 1e-9, "seed \(seed)")
        XCTAssertEqual(s.currentTrack?.id, 1, "seed \(seed)")
    }

    /// A stream that stops and starts again before the engine reported the first release: the
    /// play started at the stop opens the device again after that release, so the new start
    /// asks a release of its own, and only that one's report grants (before, the two shared the
    /// first: the grant came while the device played again; the binary's flapping test found it).
    func testAStartAfterAStopBeforeTheReleaseWasReportedReleasesAgain() {
        var s = playing(2)
        _ = reduce(&s, .heard(playID: 1, seconds: 10))
        XCTAssertEqual(reduce(&s, .bluetoothPhone(streaming: true, sender: "p")).first, .releaseDevice(token: 1))
        let end = reduce(&s, .bluetoothPhone(streaming: false, sender: ""))
        XCTAssertEqual(startedAt(end), 10)
        let again = reduce(&s, .bluetoothPhone(streaming: true, sender: "p"))
        XCTAssertEqual(again.first, .releaseDevice(token: 2), "\(again)")
        XCTAssertEqual(s.releaseToken, 2)
        let stale = reduce(&s, .deviceReleased(token: 1, heard: PlayPosition(playID: 1, seconds: 10.2)))
        XCTAssertFalse(stale.contains(.grant(id: "source-bluetooth")), "granted while the device plays again: \(stale)")
        XCTAssertEqual(s.pendingGrants, ["source-bluetooth"])
        let released = reduce(&s, .deviceReleased(token: 2, heard: PlayPosition(playID: 3, seconds: 10.1)))
        XCTAssertTrue(released.contains(.grant(id: "source-bluetooth")), "\(released)")
        XCTAssertEqual(s.position, 10.1, accuracy: 1e-9)
        XCTAssertEqual(startedAt(reduce(&s, .bluetoothPhone(streaming: false, sender: ""))), 10.1)
    }
}

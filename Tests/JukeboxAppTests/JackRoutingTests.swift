// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxAudio
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import Foundation
import XCTest

/// Headphones with a device of their own, wired as the player wires them (issue 30): the jack
/// (`TestJack`, through the real libasound) reaches the core, the core routes, `RoutedOutput`
/// opens the other test device, and the track goes on there from where it was heard.
final class JackRoutingTests: XCTestCase {
    func testPluggingInMovesThePlayToTheHeadphonesDevice() throws {
        guard case .success(let plugin) = TestJack.plugin else { throw missingPeer("no C compiler for the test jack") }
        TestJack.reset()
        var template = Array((FileManager.default.temporaryDirectory.path + "/jukebox-route-XXXXXX").utf8CString)
        // The name is read from the array itself: the pointer mkdtemp returns points into the
        // array's buffer, which a release build may free and reuse once the array is not used again.
        guard mkdtemp(&template) != nil else { throw POSIXError(.EEXIST) }
        let dir = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/noise.wav"
        try TestAudio.write(path: path, kind: .wav16, frames: 44100 * 6)
        let source = try TestAudio.decode(path: path)
        let speaker = try TestPCM(directory: dir + "/speaker", name: "speaker", speed: 3)
        let phones = try TestPCM(directory: dir + "/phones", name: "phones", speed: 3)
        let routed = RoutedOutput(card: AlsaOutput(device: speaker.name, configText: speaker.configText),
                                  headphones: AlsaOutput(device: phones.name, configText: phones.configText))
        let mailbox = Mailbox()
        let engine = AudioEngine(makeOutput: { routed }) { report in
            if let event = AudioWiring.event(for: report) { mailbox.post(event) }
        }
        defer { engine.shutdown() }
        let log = Log(level: .info)
        let jack = JackSource(HeadphoneJackSettings(card: plugin.device, control: "Headphone Jack", device: "phones"), log: log,
                              config: plugin.config)
        defer { jack.close() }
        var state = State()
        state.settings.headphones = HeadphoneSettings(pauseOnUnplug: false, routes: true)
        let runtime = Runtime(state: state, audio: engine, store: nil, status: RecordingStatus(), log: log,
                              mailbox: mailbox, sources: [jack])
        runtime.routeOutput = { routed.route(to: AudioWiring.device(for: $0)) }
        runtime.start(initial: [])
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.headphonesIn == false })
        runtime.dispatch(.replaceQueue([TrackInfo(path: path, duration: 6)]))
        // The engine's position: the loop's own follows only its ticks (every 4 s while nothing
        // shows the time) and the events, such as the jack's, before which it reads it afresh.
        XCTAssertTrue(waitFor(10) { _ = runtime.step(wait: false); return (engine.position()?.seconds ?? 0) >= 1 }, "\(log.recent)")
        XCTAssertTrue(phones.recording().isEmpty)
        TestJack.set("Headphone Jack", true)
        XCTAssertTrue(waitFor(10) { _ = runtime.step(wait: false); return runtime.state.headphonesIn == true })
        XCTAssertEqual(routed.routed, .headphones)
        // To the end of the track, through the headphones' device.
        XCTAssertTrue(waitFor(20) { _ = runtime.step(wait: false); return runtime.state.phase == .stopped }, "\(log.recent)")
        let frameBytes = source.bytesPerFrame
        let first = speaker.recording(), second = phones.recording()
        XCTAssertGreaterThan(second.count / frameBytes, 44100, "the rest of the track on the headphones' device")
        assertPrefix(first, of: source.bytes, "the speaker's part")
        // The headphones' part is the track's end, from where it was heard when the jack changed.
        let tail = Array(source.bytes.suffix(second.count))
        // After the fade-in of a play that does not begin its track (15 ms; 50 skipped).
        let ramp = 2205 * frameBytes
        XCTAssertEqual(Array(second.dropFirst(ramp)), Array(tail.dropFirst(ramp)), "the headphones' part is the rest of the track")
        // It went on from where it was heard (1 s or more before the plug), not from the start.
        XCTAssertLessThanOrEqual(second.count / frameBytes, source.frames - 44100, "the headphones' part started before 0:01")
        // Written to both: what the speaker held unheard, and the position's age at the plug (the
        // loop's last heard report, at 3x real time here).
        let overlap = first.count + second.count - source.bytes.count
        print("JackRoutingTests: \(overlap / frameBytes) frames written to both devices")
    }

    private func assertPrefix(_ bytes: [UInt8], of whole: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertLessThanOrEqual(bytes.count, whole.count, what, file: file, line: line)
        XCTAssertTrue(bytes.elementsEqual(whole.prefix(bytes.count)), what, file: file, line: line)
    }
}

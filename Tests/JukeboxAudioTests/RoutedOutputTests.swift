// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import JukeboxFixtures
import XCTest

/// The routed output (headphones with a device of their own, issue 30), through the real libasound
/// on two test devices: a play opens the device the route names; after a route change and the
/// stop and start the core orders, the track goes on through the other device from where it was
/// heard, bit for bit, and nothing more reaches the first.
final class RoutedOutputTests: ScratchCase {
    func testAPlayGoesOnThroughTheOtherDeviceFromWhereItWasHeard() throws {
        let path = try scratch.audio(.wav16, frames: 44100 * 4)
        let source = try TestAudio.decode(path: path)
        let speaker = try TestPCM(directory: scratch.path("speaker"), name: "speaker", speed: 4)
        let phones = try TestPCM(directory: scratch.path("phones"), name: "phones", speed: 4)
        let routed = RoutedOutput(card: AlsaOutput(device: speaker.name, configText: speaker.configText),
                                  headphones: AlsaOutput(device: phones.name, configText: phones.configText))
        let (log, engine) = logAndEngine { routed }
        defer { engine.shutdown() }
        playUntilHeard(engine, log, id: 1, path: path, seconds: 1)
        // What the core does on a plug: route, let the device go, start the track again there.
        let heard = try XCTUnwrap(engine.position()?.seconds)
        engine.stop()
        routed.route(to: .headphones)
        engine.play(id: 2, path: path, from: heard, paused: false)
        XCTAssertTrue(log.wait(timeout: 15) { if case .finished(2, _) = $0 { true } else { false } }, "\(log.all)")
        engine.shutdown()
        XCTAssertFalse(routed.isOpen)

        let first = speaker.recording(), second = phones.recording()
        let frameBytes = source.bytesPerFrame
        XCTAssertGreaterThan(first.count, 44100 * frameBytes, "the speaker played at least the first second")
        assertSameAudio(first, source.bytes[..<min(first.count, source.bytes.count)], bytesPerFrame: frameBytes, "the speaker's part")
        // The headphones' part starts where the play was asked to start and runs to the end: the
        // same frames, after the fade-in of a play that does not begin its track.
        let start = Int((heard * 44100).rounded())
        XCTAssertEqual(second.count / frameBytes, source.frames - start, "the headphones' part from \(heard) s")
        let ramp = GainRamp.frames(rate: 44100)
        assertSameAudio(Array(second.dropFirst(ramp * frameBytes)), source.bytes(frames: (start + ramp)..<source.frames),
                        bytesPerFrame: frameBytes, "the headphones' part from \(heard) s, after the fade-in")
    }

    func testTheRouteChoosesTheDeviceAProbeAsks() throws {
        let speaker = try TestPCM(directory: scratch.path("speaker"), name: "speaker")
        let routed = RoutedOutput(card: AlsaOutput(device: speaker.name, configText: speaker.configText),
                                  headphones: AlsaOutput(device: "jukebox_no_such_pcm"))
        XCTAssertNil(routed.probe())
        routed.route(to: .headphones)
        XCTAssertNotNil(routed.probe(), "the headphones' device does not exist")
        XCTAssertEqual(routed.routed, .headphones)
    }
}

// SPDX-License-Identifier: MIT
import JukeboxApp
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// The config's headphone jack watched by the loop (`TestJack`: a user-space control device, read
/// through the real libasound): its state at start and each change reach the core as
/// `Event.headphones`, a pull pauses; a card that goes away is logged once and watched again when
/// it is back, its state reported again.
final class JackSourceTests: XCTestCase {
    func testTheJacksStateReachesTheCoreAndAPullPauses() throws {
        guard case .success(let plugin) = TestJack.plugin else { throw missingPeer("no C compiler for the test jack") }
        TestJack.reset()
        TestJack.set("Headphone Jack", true)
        let log = Log(level: .info)
        let source = JackSource(HeadphoneJackSettings(card: plugin.device, control: "Headphone Jack"), log: log, config: plugin.config)
        defer { source.close() }
        var state = State()
        state.settings.headphones = HeadphoneSettings(volumeMax: 40)
        state.volume = 90
        let status = RecordingStatus()
        let runtime = Runtime(state: state, audio: RecordingAudio(), store: nil, status: status,
                              log: log, sources: [source], clock: ManualClock().read)
        runtime.start(initial: [])
        // In at start: reported once, and the cap turns the volume down.
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.headphonesIn == true })
        XCTAssertEqual(runtime.state.volume, 40)
        XCTAssertTrue(log.recent.contains { $0.contains("headphones: watching \"Headphone Jack\" on \(plugin.device)") }, "\(log.recent)")
        runtime.dispatch(.replaceQueue([TrackInfo(path: "/m/a.flac", duration: 60)]))
        XCTAssertEqual(runtime.state.phase, .playing)
        TestJack.set("Headphone Jack", false)
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.headphonesIn == false })
        XCTAssertEqual(runtime.state.phase, .paused)
        XCTAssertEqual(status.reports.last, "headphones unplugged: paused")
        // The card's notices fail (gone): one warning, the jack closed and opened again (the
        // loop's once-a-second look; its manual clock makes that at once).
        TestJack.set("Card Gone", true)
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return log.recent.contains { $0.contains("looking for the jack again") } })
        XCTAssertTrue(log.recent.contains { $0.hasSuffix("warning: headphones: \(plugin.device): No such device; looking for the jack again") }, "\(log.recent)")
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return log.recent.filter { $0.contains("headphones: watching") }.count == 2 }, "\(log.recent)")
        // Back with headphones in: the change is read and reported.
        TestJack.set("Card Gone", false)
        TestJack.set("Headphone Jack", true)
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.headphonesIn == true })
        XCTAssertEqual(log.recent.filter { $0.contains("looking for the jack again") }.count, 1, "\(log.recent)")
    }
}

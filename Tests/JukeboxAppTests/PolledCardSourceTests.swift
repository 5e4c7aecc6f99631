// SPDX-License-Identifier: MIT
import JukeboxApp
@testable import JukeboxBoard
import JukeboxCore
import JukeboxFixtures
import JukeboxService
import JukeboxSystem
import JukeboxTestSupport
import XCTest

/// An RC522 polled on its own thread into the loop: placed → `cardRead`, removed →
/// `cardRemoved`, through the eventfd; the simulator beneath the SPI boundary.
final class PolledCardSourceTests: XCTestCase {
    /// The simulator behind a lock, as the test thread places cards while the poller reads.
    final class Locked: SPITransport, @unchecked Sendable {
        let sim = MFRC522Simulator()
        let monitor = Monitor()
        func transfer(_ bytes: [UInt8]) throws(DeviceError) -> [UInt8] {
            monitor.lock()
            defer { monitor.unlock() }
            return try sim.transfer(bytes)
        }
        func with(_ body: (MFRC522Simulator) -> Void) { monitor.withLock { body(sim) } }
    }

    func testPlacedAndRemovedReachTheCoreAndOnRemovePausePauses() {
        let spi = Locked()
        let source = PolledCardSource(CardWatch(MFRC522(spi), missesToRemove: 2), name: "card reader (rc522 test)",
                                      log: Log(level: .error), interval: 0.01)
        defer { source.close() }
        var state = State()
        state.settings.cards.onRemove = .pause
        let runtime = Runtime(state: state, audio: RecordingAudio(), store: nil, status: RecordingStatus(),
                              log: Log(level: .error), sources: [source], clock: ManualClock().read)
        runtime.start(initial: [.cardsLoaded(CardMap(["DEADBEEF": .command(.volumeDown)]))])
        XCTAssertEqual(source.fds.count, 1)
        spi.with { $0.place([0xDE, 0xAD, 0xBE, 0xEF]) }
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.cards.lastReadID == "DEADBEEF" })
        XCTAssertEqual(runtime.state.volume, 95)
        // Taken away: after two looks without it, a removal (read here, straight off the source).
        spi.with { $0.remove([0xDE, 0xAD, 0xBE, 0xEF]) }
        var events: [Event] = []
        XCTAssertTrue(waitFor(5) {
            events += source.read(fd: source.fds[0])
            return events.contains { if case .cardRemoved(id: "DEADBEEF", _) = $0 { return true } else { return false } }
        })
        XCTAssertEqual(events.count, 1, "\(events)")
        spi.with { $0.place([0x04, 1, 2, 3, 4, 5, 6]) }
        XCTAssertTrue(waitFor(5) { _ = runtime.step(wait: false); return runtime.state.cards.lastUnknown == "04010203040506" })
        source.close()
        XCTAssertEqual(source.fds, [], "closed: the thread is joined")
    }
}

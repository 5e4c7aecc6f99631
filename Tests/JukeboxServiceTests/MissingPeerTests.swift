// SPDX-License-Identifier: MIT
import Glibc
import JukeboxTestSupport
import XCTest

/// A missing peer is a skip on a developer's machine and a failure under board/test.sh.
final class MissingPeerTests: XCTestCase {
    func testAMissingPeerSkipsUnlessPeersAreRequired() {
        let before = getenv("JUKEBOX_REQUIRE_PEERS").map { String(cString: $0) }
        defer {
            if let before { setenv("JUKEBOX_REQUIRE_PEERS", before, 1) } else { unsetenv("JUKEBOX_REQUIRE_PEERS") }
        }
        unsetenv("JUKEBOX_REQUIRE_PEERS")
        XCTAssertTrue(missingPeer("mpc is not installed") is XCTSkip)
        setenv("JUKEBOX_REQUIRE_PEERS", "0", 1)
        XCTAssertTrue(missingPeer("mpc is not installed") is XCTSkip)
        setenv("JUKEBOX_REQUIRE_PEERS", "1", 1)
        let error = missingPeer("mpc is not installed")
        XCTAssertFalse(error is XCTSkip)
        XCTAssertEqual("\(error)", "mpc is not installed (JUKEBOX_REQUIRE_PEERS=1: a failure, not a skip)")
    }
}

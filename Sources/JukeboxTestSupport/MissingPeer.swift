// SPDX-License-Identifier: MIT
import Glibc
import XCTest

/// A peer a test needs (a server program such as mosquitto, icecast2 or snapserver, a client such
/// as mpc or python3-mpd, a fixture server that could not start) is missing.
public struct MissingPeer: Error, CustomStringConvertible {
    /// What is missing, and what installs it.
    public var description: String
}

/// What a test throws when a peer it needs is missing: a skip on a developer's machine, where not
/// every Debian package need be installed, but a failure when `JUKEBOX_REQUIRE_PEERS=1`, as
/// board/test.sh sets it: CI installs every peer first, so a skip there would hide a broken fixture
/// or package behind a green run.
public func missingPeer(_ reason: String) -> Error {
    if peersRequired { return MissingPeer(description: reason + " (JUKEBOX_REQUIRE_PEERS=1: a failure, not a skip)") }
    return XCTSkip(reason)
}

/// Whether a missing peer fails the test (`JUKEBOX_REQUIRE_PEERS=1`).
public var peersRequired: Bool {
    guard let value = getenv("JUKEBOX_REQUIRE_PEERS") else { return false }
    return String(cString: value) == "1"
}

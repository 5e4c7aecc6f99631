// SPDX-License-Identifier: MIT
import Glibc
@testable import JukeboxService
import XCTest

/// The MPD listener serves this machine and the local network only, whatever the sandbox lets in
/// (with internet radio on, the drop-in allows every address in both directions).
final class MPDPeerTests: XCTestCase {
    /// Whether a peer at `text` (an address of `family`) is local, through a sockaddr as `accept` fills it.
    private func local<Address>(_ text: String, _ family: Int32, _ address: Address,
                                _ fill: (inout sockaddr_storage, Address) -> Void) -> Bool {
        var a = address
        XCTAssertEqual(withUnsafeMutableBytes(of: &a) { inet_pton(family, text, $0.baseAddress) }, 1, text)
        var s = sockaddr_storage()
        fill(&s, a)
        return MPDPeer.isLocal(s)
    }

    private func v4(_ text: String) -> Bool {
        local(text, AF_INET, in_addr()) { storage, a in
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_addr = a
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: sin) { raw.copyMemory(from: $0) } }
        }
    }

    private func v6(_ text: String) -> Bool {
        local(text, AF_INET6, in6_addr()) { storage, a in
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_addr = a
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: sin6) { raw.copyMemory(from: $0) } }
        }
    }

    func testLoopbackAndThePrivateRangesAreLocal() {
        for a in ["127.0.0.1", "127.255.0.9", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254", "192.168.1.20",
                  "169.254.3.4", "100.64.0.1", "100.127.255.255"] {
            XCTAssertTrue(v4(a), a)
        }
        for a in ["::1", "fe80::1", "febf::1", "fc00::1", "fd12:3456::9", "::ffff:192.168.1.2", "::ffff:127.0.0.1"] {
            XCTAssertTrue(v6(a), a)
        }
    }

    func testEverythingElseIsNot() {
        for a in ["8.8.8.8", "172.15.255.255", "172.32.0.1", "192.169.0.1", "11.0.0.1", "100.63.255.255", "100.128.0.1",
                  "169.255.0.1", "0.0.0.0", "255.255.255.255", "1.2.3.4"] {
            XCTAssertFalse(v4(a), a)
        }
        for a in ["2001:db8::1", "2a00:1450::1", "::", "::2", "fec0::1", "fe00::1", "::ffff:8.8.8.8", "64:ff9b::808:808"] {
            XCTAssertFalse(v6(a), a)
        }
        var other = sockaddr_storage()
        other.ss_family = sa_family_t(AF_PACKET)
        XCTAssertFalse(MPDPeer.isLocal(other))
        other.ss_family = sa_family_t(AF_UNIX)
        XCTAssertTrue(MPDPeer.isLocal(other))
    }
}

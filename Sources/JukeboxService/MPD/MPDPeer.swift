// SPDX-License-Identifier: MIT
import Glibc

/// Who may talk to the MPD listener over TCP: this machine and the local network (loopback,
/// link-local, the private IPv4 ranges and carrier-grade NAT, IPv6 unique-local), as the
/// service's network drop-in allows (board/mpd-network.sh). The drop-in alone cannot hold that
/// line once internet radio is on: systemd's `IPAddressAllow=` filters both directions, so
/// letting streams come from any address lets any address reach the MPD port. The listener
/// therefore checks each peer itself and closes the others at once, unanswered. Unix sockets
/// are local by nature. Public: the web face (JukeboxWeb) applies the same rule.
public enum MPDPeer {
    /// Whether the peer of an accepted connection (its address as `accept` filled it) is local.
    public static func isLocal(_ address: sockaddr_storage) -> Bool {
        var copy = address
        return withUnsafeBytes(of: &copy) { raw -> Bool in
            switch Int32(address.ss_family) {
            case AF_UNIX: return true
            case AF_INET:
                let a = raw.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_addr)!, as: in_addr.self)
                return isLocal(ipv4: UInt32(bigEndian: a.s_addr))
            case AF_INET6:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_addr)!
                return isLocal(ipv6: (0..<16).map { raw[offset + $0] })
            default: return false
            }
        }
    }

    /// An IPv4 address (host order) in loopback, link-local, 10/8, 172.16/12, 192.168/16 or 100.64/10.
    public static func isLocal(ipv4 a: UInt32) -> Bool {
        localIPv4.contains { range in a >> (32 - range.bits) == range.prefix >> (32 - range.bits) }
    }

    /// 127/8, 169.254/16, 10/8, 172.16/12, 192.168/16, 100.64/10 (a table, not one long
    /// expression: Swift 6.0.3 gives up type-checking those).
    private static let localIPv4: [(prefix: UInt32, bits: UInt32)] = [
        (0x7F00_0000, 8), (0xA9FE_0000, 16), (0x0A00_0000, 8), (0xAC10_0000, 12), (0xC0A8_0000, 16), (0x6440_0000, 10),
    ]

    /// An IPv6 address (16 bytes) that is loopback, link-local (fe80::/10), unique-local
    /// (fc00::/7), or an IPv4-mapped local one.
    public static func isLocal(ipv6 b: [UInt8]) -> Bool {
        guard b.count == 16 else { return false }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return true }
        if b[0] & 0xFE == 0xFC { return true }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return isLocal(ipv4: b[12...15].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        return false
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxCore

/// Polls the descriptors `fds()` gives (asked again each round: a watch may replace them) until
/// one is readable and returns what `read` makes of the readable ones; [] after `seconds`. Waits
/// on poll(2) with a bound, never sleeps.
func nextEvents(within seconds: Double, fds: () -> [Int32], read: (Int32) -> [Event]) -> [Event] {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        var polled = fds().map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&polled, nfds_t(polled.count), 200) > 0 else { continue }
        let events = polled.filter { $0.revents != 0 }.flatMap { read($0.fd) }
        if !events.isEmpty { return events }
    }
    return []
}

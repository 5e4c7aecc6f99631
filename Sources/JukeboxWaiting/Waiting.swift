// SPDX-License-Identifier: MIT
import Foundation

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
/// For conditions another process or thread makes true (a file written, a reply), where there
/// is nothing to wait on directly; never a stand-in for a fake clock.
public func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return condition()
}

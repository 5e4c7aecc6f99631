// SPDX-License-Identifier: MIT
import Foundation
import XCTest

/// Runs Debian's `metaflac` (package flac, which board/setup.sh installs) with `arguments`, as a
/// tagger such as loudgain would leave a file: the ReplayGain tests write real FLAC comments with
/// it rather than with our own writer. Missing: `missingPeer` (a skip, or a failure in CI);
/// a non-zero exit throws with its status.
public func metaflac(_ arguments: [String]) throws {
    let tool = "/usr/bin/metaflac"
    guard access(tool, X_OK) == 0 else { throw missingPeer("metaflac is not installed (Debian's flac; board/setup.sh installs it)") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw MetaflacFailed(description: "metaflac \(arguments) exited with status \(process.terminationStatus)")
    }
}

/// metaflac ran and refused (a failure of the test, never a skip).
public struct MetaflacFailed: Error, CustomStringConvertible {
    /// The arguments and the exit status.
    public var description: String
}

// SPDX-License-Identifier: MIT
import Foundation
import XCTest

/// A test case with a fresh folder of its own (`dir`), removed after each test.
class ScratchTestCase: XCTestCase {
    /// This test's folder.
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "jukebox-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// A daemon test with a local radio server (`RadioServer` over a 3 s MP3, `dir/tone.mp3`) started
/// before each test; the test is skipped without python3 (the arm64 chroot has none).
class RadioDaemonTestCase: DaemonTestCase {
    var server: RadioServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let mp3 = dir + "/tone.mp3"
        try TestAudio.write(path: mp3, kind: .mp3, frames: 132_300, sampleRate: 44100, channels: 2)
        do { server = try RadioServer(mp3: mp3, folder: dir) } catch let error as RadioServer.Unavailable {
            throw missingPeer(error.description)
        }
    }

    override func tearDown() {
        server = nil
        super.tearDown()
    }

    /// The daemon's `status --json`, decoded; empty when it does not answer.
    func json() -> [String: Any] {
        guard let out = try? ctl("status", "--json").stdout,
              let object = try? JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] else { return [:] }
        return object
    }
}

// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

final class AlsaMessagesAdmitTests: XCTestCase {
    /// A drain loop alternates two libasound messages every few milliseconds: each is passed on
    /// once, then at most once a minute with the count of repeats held back.
    func testAlternatingRepeatsArePassedOnOnceAMinuteWithTheirCount() {
        let a = "alsa-lib snd_pcm_hw_drain: test \(UUID())", b = "alsa-lib snd_pcm_hw_delay: test \(UUID())"
        var passed: [String] = []
        for i in 0..<200 {
            let now = 1000 + Double(i) * 0.02
            if let line = AlsaMessages.admit(i % 2 == 0 ? a : b, now: now) { passed.append(line) }
        }
        XCTAssertEqual(passed, [a, b])
        XCTAssertEqual(AlsaMessages.admit(a, now: 1000 + AlsaMessages.repeatInterval + 1), a + " (repeated 99 times since)")
        XCTAssertNil(AlsaMessages.admit(a, now: 1000 + AlsaMessages.repeatInterval + 2))
    }

    /// The non-blocking drain's EAGAIN and a just-emptied stream's EPIPE are answers the output
    /// handles, never logged; the same calls failing otherwise are.
    func testTheDrainsExpectedAnswersAreNotLogged() {
        let drain = "alsa-lib snd_pcm_hw_drain: SNDRV_PCM_IOCTL_DRAIN failed (-11): Resource temporarily unavailable"
        let delay = "alsa-lib snd_pcm_hw_delay: SNDRV_PCM_IOCTL_DELAY failed (-32): Broken pipe"
        XCTAssertNil(AlsaMessages.admit(drain, now: 5000))
        XCTAssertNil(AlsaMessages.admit(delay, now: 5000))
        let other = "alsa-lib snd_pcm_hw_drain: SNDRV_PCM_IOCTL_DRAIN failed (-5): Input/output error \(UUID())"
        XCTAssertEqual(AlsaMessages.admit(other, now: 5000), other)
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// USB sticks through the real binary: config `usb` with a root under the test's folder
/// (`mountsOnly: false`, as a plain folder is no mount point), a "stick" moved in, pulled out and
/// put back.
final class USBBinaryTests: DaemonTestCase {
    private func status() -> String { (try? ctl("status", "--json").stdout) ?? "" }

    func testAStickMovedInPlaysPulledOutKeepsItsPlaceAndPutBackPlaysOn() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        let media = dir + "/media"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        // The stick is made beside the root and moved in whole, as a mount appears at once.
        let made = dir + "/made"
        // Two folders: the first plays while the second is read and appended.
        try FileManager.default.createDirectory(atPath: made + "/Album", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: made + "/Bonus", withIntermediateDirectories: true)
        for n in 1...2 { try TestAudio.write(path: made + "/Album/\(n).wav", kind: .wav16, frames: 44_100 * 60) }
        try TestAudio.write(path: made + "/Bonus/3.wav", kind: .wav16, frames: 44_100 * 60)
        let daemon = try startDaemon([song], extra: ["usb": ["roots": [media], "autoplay": true, "mountsOnly": false]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let stick = media + "/STICK"
        try FileManager.default.moveItem(atPath: made, toPath: stick)
        XCTAssertTrue(waitFor(30) { self.status().contains("\"path\":\"\(stick)/Album/1.wav\"") && self.status().contains("\"phase\":\"playing\"") },
                      status())
        XCTAssertTrue(waitFor(30) { self.status().contains("\"count\":3") }, status())
        _ = try ctl("seek", "20")
        XCTAssertTrue(waitFor(30) { (self.position() ?? 0) >= 20 }, status())

        // Pulled out: waiting, same track, same queue, the place kept.
        let away = dir + "/away"
        try FileManager.default.moveItem(atPath: stick, toPath: away)
        XCTAssertTrue(waitFor(30) { self.status().contains("\"phase\":\"waiting\"") }, status())
        let kept = status()
        XCTAssertTrue(kept.contains("\"path\":\"\(stick)/Album/1.wav\""), kept)
        XCTAssertTrue(kept.contains("\"count\":3"), kept)
        let place = try XCTUnwrap(position())
        XCTAssertGreaterThanOrEqual(place, 20)
        XCTAssertTrue(try ctl("log", "100").stdout.contains("USB stick removed"))

        // Back in: it plays on from there, not from the top.
        try FileManager.default.moveItem(atPath: away, toPath: stick)
        XCTAssertTrue(waitFor(30) { self.status().contains("\"phase\":\"playing\"") }, status())
        XCTAssertTrue(status().contains("\"path\":\"\(stick)/Album/1.wav\""), status())
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(position()), place - 0.5)
    }

    /// The `position` of `status --json`.
    private func position() -> Double? {
        let s = status()
        guard let r = s.range(of: "\"position\":") else { return nil }
        return Double(s[r.upperBound...].prefix { "0123456789.".contains($0) })
    }
}

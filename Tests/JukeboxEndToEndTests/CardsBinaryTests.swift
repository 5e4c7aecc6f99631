// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures
import XCTest

/// The cards map through the real binary: `rfid` in the config, `jukebox ctl card assign`, the map
/// rewritten on disk, a bad map refused, `probe rfid` without a reader.
final class CardsBinaryTests: DaemonTestCase {
    func testCardAssignWritesTheMapAndABadMapIsLeftAlone() throws {
        let song = dir + "/song.wav"
        try TestAudio.write(path: song, kind: .wav16, frames: 44_100 * 60)
        let cards = dir + "/cards.json"
        try Data(#"{"0099": "toggle"}"#.utf8).write(to: URL(fileURLWithPath: cards))
        let daemon = try startDaemon([song], extra: ["rfid": ["reader": "keyboard", "name": "no such reader here", "cards": cards]])
        defer { daemon.process.terminate(); _ = daemon.wait(timeout: 5) }

        let none = try ctl("card", "assign", "toggle")
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("no new card to assign: swipe one, or give its id"), none.stderr + none.stdout)
        let sleep = try ctl("card", "assign", "5", "sleep soon")
        XCTAssertNotEqual(sleep.status, 0)
        XCTAssertTrue(sleep.stderr.contains("usage: sleep MINUTES (1-1440) | sleep track|chapter|folder | sleep off"), sleep.stdout + sleep.stderr)

        let assigned = try ctl("card", "assign", "0012345678", dir + "/My Album")
        XCTAssertEqual(assigned.status, 0, assigned.stderr)
        XCTAssertEqual(assigned.stdout, "card 0012345678 is \(dir!)/My Album\n")
        let written = try String(contentsOfFile: cards, encoding: .utf8)
        XCTAssertEqual(written, "{\n  \"0012345678\" : \"\(dir!)/My Album\",\n  \"0099\" : \"toggle\"\n}\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }, [])
        XCTAssertTrue(try ctl("status", "--json").stdout.contains(#""newCard":null"#))

        // Edited by hand, badly: reported (the log), the previous map kept, and not written over.
        try Data(#"{"1": "dance"}"#.utf8).write(to: URL(fileURLWithPath: cards))
        XCTAssertTrue(waitFor(10) { (try? ctl("log", "100"))?.stdout.contains("card 1: \"dance\" is neither an absolute path, a stream URL nor a command") == true },
                      (try? ctl("log", "100").stdout) ?? "")
        let refused = try ctl("card", "assign", "7", "next")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("fix it before assigning"), refused.stderr + refused.stdout)
        XCTAssertEqual(try String(contentsOfFile: cards, encoding: .utf8), #"{"1": "dance"}"#)
        let log = try ctl("log", "100").stdout
        XCTAssertTrue(log.contains("card reader: no input device named like 'no such reader here' yet; watching for it"), log)
        XCTAssertTrue(log.contains("cards map \(cards): 1 card"), log)
        XCTAssertTrue(log.contains("cards map \(cards): 2 cards"), log)
    }

    func testProbeRfidWithoutAReaderListsTheDevicesAndSaysHowToNameIt() throws {
        let result = try Jukebox.run(["probe", "rfid"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stdout.hasSuffix("name the reader: jukebox probe rfid --device /dev/input/by-id/…-event-kbd (or --name NAME)\n"),
                      result.stdout)
        let missing = try Jukebox.run(["probe", "rfid", "--device", dir + "/event99"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("\(dir!)/event99: no such input device"), missing.stderr)
    }

    func testProbeRfidForAnRC522OrPN532ThatIsNotThereSaysWhatIsMissing() throws {
        let spi = try Jukebox.run(["probe", "rfid", "--reader", "rc522", "--device", dir + "/spidev9.9"])
        XCTAssertEqual(spi.status, 1)
        XCTAssertTrue(spi.stderr.contains("no SPI device \(dir!)/spidev9.9"), spi.stderr)
        let i2c = try Jukebox.run(["probe", "rfid", "--reader", "pn532", "--bus", dir + "/i2c-9"])
        XCTAssertEqual(i2c.status, 1)
        XCTAssertTrue(i2c.stderr.contains("no I2C bus \(dir!)/i2c-9"), i2c.stderr)
        // /dev/null is no spidev node: the kernel refuses the SPI mode ioctl.
        let notSPI = try Jukebox.run(["probe", "rfid", "--reader", "rc522", "--device", "/dev/null"])
        XCTAssertEqual(notSPI.status, 1)
        XCTAssertTrue(notSPI.stderr.contains("/dev/null: cannot set SPI mode 0"), notSPI.stderr)
        let bad = try Jukebox.run(["probe", "rfid", "--reader", "mifare"])
        XCTAssertEqual(bad.status, 2)
    }
}

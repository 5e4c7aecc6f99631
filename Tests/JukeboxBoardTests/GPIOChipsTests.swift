// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxBoard
import XCTest

/// Finding chips and lines, and the errors when they are not there. The chip folder is a temporary
/// directory (empty, or holding a file that is not a chip), so the results are the same on a board.
final class GPIOChipsTests: XCTestCase {
    private var dir = ""

    override func setUp() {
        dir = NSTemporaryDirectory() + "jukebox-gpio-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    private func openError(_ specs: [GPIOLineSpec]) -> DeviceError? {
        do {
            let lines = try GPIOLines.open(specs, directory: dir)
            lines.close()
            return nil
        } catch {
            return error
        }
    }

    func testNoChipsIsAnEmptyList() {
        XCTAssertEqual(GPIOChips.list(directory: dir), [])
        XCTAssertEqual(GPIOChips.list(directory: dir + "/missing"), [])
        _ = GPIOChips.list() // this machine's /dev: whatever is there, no crash
    }

    func testAMissingLabelSaysWhichChipsExist() {
        let error = openError([GPIOLineSpec(chip: "pinctrl-rp1", offset: 17)])
        XCTAssertEqual(error?.kind, .notFound)
        XCTAssertEqual(error?.message, "no gpiochip with label pinctrl-rp1; chips here: none (no \(dir)/gpiochip*)")
    }

    func testAMissingLineNameSaysSo() {
        let error = openError([GPIOLineSpec(name: "GPIO17")])
        XCTAssertEqual(error?.kind, .notFound)
        XCTAssertEqual(error?.message, "no GPIO line named GPIO17; chips here: none (no \(dir)/gpiochip*)")
    }

    func testAnOffsetWithoutAChipLooksForThePiHeaderBank() {
        let error = openError([GPIOLineSpec(offset: 17)])
        XCTAssertEqual(error?.kind, .notFound)
        XCTAssertTrue(error?.message.hasPrefix("no Raspberry Pi header chip (pinctrl-rp1, pinctrl-bcm2711, pinctrl-bcm2835)") == true,
                      error?.message ?? "")
    }

    func testAMissingChipPathOrNumber() {
        XCTAssertEqual(openError([GPIOLineSpec(chip: dir + "/gpiochip9", offset: 1)])?.message,
                       "\(dir)/gpiochip9: no such gpiochip; chips here: none (no \(dir)/gpiochip*)")
        XCTAssertEqual(openError([GPIOLineSpec(chip: "gpiochip4", offset: 1)])?.kind, .notFound)
    }

    func testAFileThatIsNotAChipIsListedWithItsErrorAndRefused() {
        _ = FileManager.default.createFile(atPath: dir + "/gpiochip0", contents: Data("x".utf8))
        let chips = GPIOChips.list(directory: dir)
        XCTAssertEqual(chips.count, 1)
        XCTAssertEqual(chips.first?.path, dir + "/gpiochip0")
        XCTAssertTrue(chips.first?.error?.contains("not a GPIO chip") == true, chips.first?.error ?? "no error")
        let error = openError([GPIOLineSpec(chip: "gpiochip0", offset: 0)])
        XCTAssertEqual(error?.kind, .notFound)
        XCTAssertTrue(error?.message.hasPrefix("\(dir)/gpiochip0: not a GPIO chip; chips here: \(dir)/gpiochip0 (") == true, error?.message ?? "")
        XCTAssertEqual(openError([GPIOLineSpec(chip: "pinctrl-bcm2711", offset: 4)])?.kind, .notFound)
    }

    func testASpecNeedsAnOffsetOrAName() {
        XCTAssertEqual(openError([GPIOLineSpec(chip: "pinctrl-rp1")])?.kind, .invalid)
        XCTAssertEqual(openError([GPIOLineSpec(chip: "pinctrl-rp1", offset: -1)])?.kind, .invalid)
    }

    func testRequestFailuresNameTheHolderAndWhatToInstall() {
        XCTAssertEqual(GPIOErrors.request(EBUSY, line: "GPIO17", who: "foo"),
                       DeviceError(kind: .busy, message: "line GPIO17 is used by 'foo'", errno: EBUSY))
        XCTAssertEqual(GPIOErrors.request(EBUSY, line: "GPIO17", who: "").message,
                       "line GPIO17 is used by another user (no consumer name)")
        let denied = GPIOErrors.open(EACCES, path: "/dev/gpiochip0", chips: "")
        XCTAssertEqual(denied.kind, .permissionDenied)
        XCTAssertTrue(denied.message.contains("group gpio"))
        XCTAssertTrue(denied.message.contains("udev rule"))
        XCTAssertEqual(GPIOErrors.request(EINVAL, line: "GPIO4", who: nil).kind, .invalid)
    }
}

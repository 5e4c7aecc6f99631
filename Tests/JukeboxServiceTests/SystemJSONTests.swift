// SPDX-License-Identifier: MIT
import Foundation
import JukeboxService
import XCTest

/// `system --json` from a made-up /proc and /sys (the `root` the reads are under).
final class SystemJSONTests: XCTestCase {
    func testTheFactsComeFromProcSysAndTheFolders() throws {
        let dir = TempDir()
        dir.write("proc/uptime", "3725.51 7000.10\n")
        dir.write("proc/meminfo", "MemTotal:         470000 kB\nMemFree:  1000 kB\nMemAvailable:     250000 kB\n")
        dir.write("proc/self/status", "Name:\tjukebox\nVmRSS:\t   18000 kB\n")
        dir.write("sys/class/thermal/thermal_zone0/temp", "48312\n")
        dir.write("sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
        dir.write("sys/class/thermal/thermal_zone1/temp", "not a number\n")
        let text = SystemJSON.text(folders: [dir.path, dir.path + "/proc", "/nonexistent"], version: "1.2 \"x\"", playerUptime: 61.7, root: dir.path)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertEqual(object["version"] as? String, "1.2 \"x\"")
        XCTAssertEqual(object["uptime"] as? Int, 3725)
        XCTAssertEqual(object["playerUptime"] as? Int, 61)
        XCTAssertEqual(object["memory"] as? [String: Int], ["totalKiB": 470000, "availableKiB": 250000])
        XCTAssertEqual(object["playerMemoryKiB"] as? Int, 18000)
        XCTAssertEqual((object["temperatures"] as? [[String: Any]])?.count, 1, text)
        XCTAssertTrue(text.contains("\"temperatures\":[{\"zone\":\"cpu-thermal\",\"celsius\":48.312}]"), text)
        // One disk: both folders are on the same file system; a missing folder is left out.
        let disks = try XCTUnwrap(object["disks"] as? [[String: Any]])
        XCTAssertEqual(disks.count, 1, text)
        XCTAssertEqual(disks.first?["folder"] as? String, dir.path)
        XCTAssertGreaterThan(disks.first?["bytes"] as? Int ?? 0, 0)
        XCTAssertNotNil(object["addresses"] as? [String])
    }

    func testNothingToReadIsNullNotAnError() throws {
        let dir = TempDir()
        let text = SystemJSON.text(folders: [], version: "v", playerUptime: 0, root: dir.path)
        XCTAssertTrue(text.contains("\"uptime\":null,\"playerUptime\":0,\"memory\":{\"totalKiB\":null,\"availableKiB\":null},\"playerMemoryKiB\":null,\"disks\":[],\"temperatures\":[]"), text)
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(text.utf8)))
    }
}

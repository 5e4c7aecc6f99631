// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxSystem

/// `system --json`: the box as the web face's System page shows it, one JSON object: the
/// versions, the machine's and the player's uptime, memory, the disks of the music and state
/// folders, the temperatures of /sys/class/thermal, the host name and addresses (as this
/// process's network namespace sees them: the player's sandbox has none but loopback unless
/// MPD's TCP drop-in opens it). Read off the loop (a stick's statvfs may wait).
public enum SystemJSON {
    /// `folders`: whose file systems to report (each once); `player`: the player's own facts
    /// (version, uptime in seconds, resident memory in KiB); `setupProblems`: the appliance
    /// image's boot-time problems (`State.setupProblems`, already inert and bounded).
    public static func text(folders: [String], version: String, playerUptime: Double, setupProblems: [String] = [], root: String = "") -> String {
        let q = JSONText.quoted
        var fields: [String] = ["\"version\":" + q(version)]
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : ""
        fields.append("\"host\":" + q(host))
        let uptime = readFileText(root + "/proc/uptime").flatMap { $0.split(separator: " ").first.flatMap { Double($0) } }
        fields.append("\"uptime\":" + (uptime.map { String(Int($0)) } ?? "null"))
        fields.append("\"playerUptime\":\(Int(playerUptime))")
        let meminfo = readFileText(root + "/proc/meminfo") ?? ""
        func kib(_ key: String) -> String {
            let line = meminfo.split(separator: "\n").first { $0.hasPrefix(key + ":") }
            return line.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } }
                .map { String($0) } ?? "null"
        }
        fields.append("\"memory\":{\"totalKiB\":\(kib("MemTotal")),\"availableKiB\":\(kib("MemAvailable"))}")
        let status = readFileText(root + "/proc/self/status") ?? ""
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } }
        fields.append("\"playerMemoryKiB\":" + (rss.map { String($0) } ?? "null"))
        fields.append("\"disks\":[" + disks(folders).joined(separator: ",") + "]")
        fields.append("\"temperatures\":[" + temperatures(root: root).joined(separator: ",") + "]")
        fields.append("\"addresses\":[" + addresses().map(q).joined(separator: ",") + "]")
        fields.append("\"setupProblems\":[" + setupProblems.map(q).joined(separator: ",") + "]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Each folder's file system once (by its device number): size and free bytes.
    static func disks(_ folders: [String]) -> [String] {
        var seen: Set<UInt64> = []
        var out: [String] = []
        for folder in folders.prefix(16) {
            var st = stat()
            guard stat(folder, &st) == 0, seen.insert(UInt64(st.st_dev)).inserted else { continue }
            var fs = statvfs()
            guard statvfs(folder, &fs) == 0 else { continue }
            let size = UInt64(fs.f_blocks) * UInt64(fs.f_frsize), free = UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
            out.append("{\"folder\":" + JSONText.quoted(folder) + ",\"bytes\":\(size),\"freeBytes\":\(free)}")
        }
        return out
    }

    /// /sys/class/thermal/thermal_zone*/: its type and degrees Celsius (millidegrees in the file).
    static func temperatures(root: String) -> [String] {
        var out: [String] = []
        for n in 0..<16 {
            let zone = root + "/sys/class/thermal/thermal_zone\(n)"
            guard let raw = readFileText(zone + "/temp", limit: 64), let milli = Int(raw.filter { $0 != "\n" && $0 != " " }) else {
                if n > 0 && !isDirectory(zone) { break }
                continue
            }
            let type = (readFileText(zone + "/type", limit: 128) ?? "zone\(n)").filter { $0 != "\n" }
            out.append("{\"zone\":" + JSONText.quoted(type) + ",\"celsius\":" + String(Double(milli) / 1000) + "}")
        }
        return out
    }

    /// The numeric addresses of the interfaces that are up, loopback left out.
    static func addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [String] = []
        var at: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = at {
            defer { at = entry.pointee.ifa_next }
            guard let addr = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0,
                  entry.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            let family = Int32(addr.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(addr, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let name = entry.pointee.ifa_name.map { String(cString: $0) } ?? "?"
            out.append(name + " " + host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
            if out.count >= 32 { break }
        }
        return out
    }
}

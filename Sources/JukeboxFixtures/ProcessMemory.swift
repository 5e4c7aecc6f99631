// SPDX-License-Identifier: MIT
import FoundationEssentials

/// A process's resident memory from `/proc/PID/status`, in KiB.
///
/// Why leak checks compare `anon` and not `rss`: VmRSS also counts the pages of mapped files
/// (the binary, the libraries) that are in memory at the moment, and the kernel drops and brings
/// those back with the page cache's pressure. Beside a parallel build, one player's VmRSS swung
/// by 3.5 MiB within 20 s while its RssAnon moved 16 KiB (CI failed once on that swing). RssAnon
/// is the process's own heap and stacks: what a leak grows.
public struct ProcessMemory: Sendable, Equatable {
    /// VmRSS: everything resident, mapped files included.
    public var rss: Int
    /// VmHWM: the peak of VmRSS.
    public var peak: Int
    /// RssAnon: resident anonymous memory (heap, stacks), the part a leak grows.
    public var anon: Int

    /// The figures of process `pid` (`nil`: this process); nil once it is gone.
    public static func of(_ pid: Int32? = nil) -> ProcessMemory? {
        let path = "/proc/" + (pid.map { String($0) } ?? "self") + "/status"
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var rss: Int?, peak: Int?, anon: Int?
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2 else { continue }
            switch words[0] {
            case "VmRSS:": rss = Int(words[1])
            case "VmHWM:": peak = Int(words[1])
            case "RssAnon:": anon = Int(words[1])
            default: break
            }
        }
        guard let rss, let peak, let anon else { return nil }
        return ProcessMemory(rss: rss, peak: peak, anon: anon)
    }
}

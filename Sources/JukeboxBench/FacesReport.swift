// SPDX-License-Identifier: MIT
import Foundation
import JukeboxFixtures

extension FacesRSS {
    /// The mappings printed and kept: the largest, each at least this many KiB resident.
    static let mappingsShown = 10, mappingMinimumKiB = 64

    /// The JSON object of one run.
    var json: [String: Any] {
        var out: [String: Any] = [
            "device": device, "deviceKind": deviceKind, "faces": faces.label,
            "maxRssMiB": mib(maxRssKiB), "rssAnonAtMaxMiB": mib(anonAtMaxKiB), "pssAnonAtMaxMiB": mib(pssAnonAtMaxKiB), "threadsAtMax": threadsAtMax,
            "formats": formats.map { ["format": $0.format.rawValue, "maxRssMiB": mib($0.rssKiB), "rssAnonMiB": mib($0.anonKiB)] as [String: Any] },
            "clients": clients,
        ]
        if let smaps {
            out["smapsAtMax"] = [
                "rssMiB": mib(smaps.rss), "pssMiB": mib(smaps.pss), "anonymousMiB": mib(smaps.anonymous),
                "largestKiB": smaps.largest(Self.mappingsShown, minimum: Self.mappingMinimumKiB).map {
                    ["name": $0.name, "rss": $0.rss, "pss": $0.pss, "anonymous": $0.anonymous, "mappings": $0.mappings] as [String: Any]
                },
            ] as [String: Any]
        }
        if let webMaxRssKiB { out["webProcessMaxRssMiB"] = mib(webMaxRssKiB) }
        if let webAnonKiB { out["webProcessRssAnonMiB"] = mib(webAnonKiB) }
        return out
    }

    /// The readable lines of the section.
    static func table(_ runs: [FacesRSS]) -> [String] {
        var lines = ["`jukebox run` playing, without and with its faces (MiB; the highest VmRSS sample while playing; the five formats in turn)"]
        for r in runs {
            let what = r.faces.label
            let perFormat = r.formats.map { $0.format.label + " " + String(format: "%.1f", Double($0.rssKiB) / 1024) }.joined(separator: ", ")
            var line = "  \(r.device) \(what): max \(String(format: "%.1f", Double(r.maxRssKiB) / 1024))"
            line += String(format: " (RssAnon %.1f", Double(r.anonAtMaxKiB) / 1024)
            if let s = r.smaps { line += String(format: ", PSS %.1f", Double(s.pss) / 1024) }
            line += String(format: ", Pss_Anon %.1f", Double(r.pssAnonAtMaxKiB) / 1024)
            line += ", \(r.threadsAtMax) threads); \(perFormat)"
            lines.append(line)
            if let w = r.webMaxRssKiB {
                let clients = r.clients.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                lines.append(String(format: "    the web app's own process: max %.1f (RssAnon %.1f); clients saw: ", Double(w) / 1024, Double(r.webAnonKiB ?? 0) / 1024) + clients)
            }
            if r.maxRssKiB > Report.rssTargetKiB, let s = r.smaps {
                let largest = s.largest(mappingsShown, minimum: mappingMinimumKiB).map { u -> String in
                    u.name + " " + String(format: "%.2f", Double(u.rss) / 1024)
                }
                lines.append("    over the target; largest mappings then (RSS MiB): " + largest.joined(separator: ", "))
            }
        }
        lines.append("  devices: " + Set(runs.map { "\($0.device) = \($0.deviceKind)" }).sorted().joined(separator: "; ") + "; no dmix here (it needs a card)")
        lines.append("  target: \(Report.targets["rssRunFaces"]!)")
        lines.append("")
        return lines
    }
}

private func mib(_ kib: Int) -> Double { round(Double(kib) / 1024, 2) }

// SPDX-License-Identifier: MIT
import Foundation

/// What a player left in its state file, read the way the player reads it but independently of
/// its code: the queue file's JSON object, with the place sidecar (`FILE.place`: current,
/// position, phase, repeat, volume) laid over it when the sidecar names this queue file by the
/// 64-bit FNV-1a hash of its bytes. The sidecar is either one JSON line (the first layout) or two
/// 4 KiB slots, each a JSON line with its `seq`, a line with the line's hash in hex, then zeros:
/// the intact record with the highest `seq` among those naming this queue file counts. For tests
/// and the benchmark; nil when there is no queue file.
public enum SavedStateFile {
    public static func read(_ path: String) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: path),
              var json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        let queue = hex(fnv1a(Array(data)))
        if let place = FileManager.default.contents(atPath: path + ".place").flatMap({ newestPlace(Array($0), queue: queue) }) {
            for key in ["current", "position", "phase", "repeat", "volume"] { json[key] = place[key] }
        }
        return json
    }

    /// The place in a sidecar's bytes that names the queue file with hash `queue` (hex).
    public static func newestPlace(_ bytes: [UInt8], queue: String) -> [String: Any]? {
        func object(_ line: some Collection<UInt8>) -> [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
        }
        guard bytes.count == 8192 else {
            return object(bytes).flatMap { $0["queue"] as? String == queue ? $0 : nil }
        }
        var best: (seq: Int, place: [String: Any])?
        for slot in 0..<2 {
            let data = Array(bytes[(slot * 4096)..<((slot + 1) * 4096)])
            guard let end = data.firstIndex(of: 0x0A) else { continue }
            let line = Array(data[...end])
            let rest = data[(end + 1)...]
            guard let hashEnd = rest.firstIndex(of: 0x0A), String(decoding: rest[..<hashEnd], as: UTF8.self) == hex(fnv1a(line)),
                  let place = object(line), place["queue"] as? String == queue, let seq = place["seq"] as? Int else { continue }
            if seq > (best?.seq ?? -1) { best = (seq, place) }
        }
        return best?.place
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

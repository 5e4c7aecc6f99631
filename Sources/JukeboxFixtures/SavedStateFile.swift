// SPDX-License-Identifier: MIT
import Foundation

/// What a player left in its state file, read the way the player reads it but independently of
/// its code: the queue file's JSON object, with the place sidecar (`FILE.place`: current,
/// position, phase, repeat, volume) laid over it when the sidecar names this queue file by the
/// 64-bit FNV-1a hash of its bytes. For tests and the benchmark; nil when there is no queue file.
public enum SavedStateFile {
    public static func read(_ path: String) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: path),
              var json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in data { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        let hex = String(hash, radix: 16)
        if let placeData = FileManager.default.contents(atPath: path + ".place"),
           let place = (try? JSONSerialization.jsonObject(with: placeData)) as? [String: Any],
           place["queue"] as? String == String(repeating: "0", count: 16 - hex.count) + hex {
            for key in ["current", "position", "phase", "repeat", "volume"] { json[key] = place[key] }
        }
        return json
    }
}

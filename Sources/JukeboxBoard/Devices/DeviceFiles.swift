// SPDX-License-Identifier: MIT
import JukeboxSystem

/// Device files named PREFIX + number in `directory` (`gpiochip3`, `event12`), in numeric order
/// (2 before 10); an unreadable directory gives none.
func numberedDevices(in directory: String, prefix: String) -> [String] {
    var numbered: [(Int, String)] = []
    for name in (try? directoryEntries(directory)) ?? [] {
        guard name.hasPrefix(prefix), let number = Int(name.dropFirst(prefix.count)) else { continue }
        numbered.append((number, directory + "/" + name))
    }
    return numbered.sorted { $0.0 < $1.0 }.map(\.1)
}

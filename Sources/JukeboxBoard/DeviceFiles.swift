// SPDX-License-Identifier: MIT
import Glibc

/// Device files named PREFIX + number in `directory` (`gpiochip3`, `event12`), in numeric order
/// (2 before 10); an unreadable directory gives none.
func numberedDevices(in directory: String, prefix: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var numbered: [(Int, String)] = []
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
        }
        guard name.hasPrefix(prefix), let number = Int(name.dropFirst(prefix.count)) else { continue }
        numbered.append((number, directory + "/" + name))
    }
    return numbered.sorted { $0.0 < $1.0 }.map(\.1)
}

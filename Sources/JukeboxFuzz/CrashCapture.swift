// SPDX-License-Identifier: MIT
import Glibc

/// In the randomized mode, keeps the input being run so that a crash (a trap, a failed property)
/// leaves it in a file, as libFuzzer does with its `crash-…` files. The signal handler only calls
/// async-signal-safe functions on memory allocated up front.
enum CrashCapture {
    nonisolated(unsafe) static var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    nonisolated(unsafe) static var capacity = 0
    nonisolated(unsafe) static var count = 0
    nonisolated(unsafe) static var path: UnsafeMutablePointer<CChar>?

    /// Installs the handlers; crashes are written to `file` (its folder must exist).
    static func install(file: String, capacity: Int) {
        buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        self.capacity = capacity
        path = strdup(file)
        for sig in [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE] {
            signal(sig) { sig in
                if let path = CrashCapture.path {
                    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                    if fd >= 0 {
                        _ = write(fd, CrashCapture.buffer, CrashCapture.count)
                        _ = close(fd)
                        let note = "jukebox-fuzz: crash; input written to "
                        _ = write(2, note, strlen(note))
                        _ = write(2, path, strlen(path))
                        _ = write(2, "\n", 1)
                    }
                }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }

    /// Remembers the input about to run.
    static func set(_ data: [UInt8]) {
        count = min(data.count, capacity)
        data.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: count) }
    }
}

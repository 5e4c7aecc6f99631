// SPDX-License-Identifier: MIT
import Glibc
import JukeboxCore
import JukeboxService
import JukeboxSystem

/// A simulated card reader for the tests that drive the binary (the web face's card flow):
/// with `JUKEBOX_TEST_CARD_PIPE=PATH` in the environment, each line written to the FIFO at PATH
/// is a card read (`Event.cardRead`, at the monotonic clock), as a keyboard reader's id and
/// Enter would be. A real reader needs `/dev/input` (or uinput, as the VM's `rfid-keyboard`
/// scenario uses); this seam lets the end-to-end and browser tests swipe without one. Not
/// documented for users; nothing opens it without the variable.
final class TestCardPipe: EventSource {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// The source when the variable names a FIFO, else none.
    static func sources(log: Log) -> [EventSource] {
        guard let path = getenv("JUKEBOX_TEST_CARD_PIPE").map({ String(cString: $0) }), !path.isEmpty else { return [] }
        // Read-write: the FIFO never reports an end when a writer closes it.
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            if fd >= 0 { close(fd) }
            log.warning("JUKEBOX_TEST_CARD_PIPE: \(path) is no FIFO; no simulated card reader")
            return []
        }
        log.info("card reader: simulated by the FIFO \(path)")
        return [TestCardPipe(fd: fd)]
    }

    private init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    var fds: [Int32] { [fd] }
    var needsMaintenance: Bool { false }
    func maintain() {}

    func read(fd: Int32) -> [Event] {
        var chunk = [UInt8](repeating: 0, count: 512)
        let n = Glibc.read(fd, &chunk, chunk.count)
        guard n > 0 else { return [] }
        buffer += chunk[0..<n]
        var events: [Event] = []
        while let end = buffer.firstIndex(of: 0x0A) {
            let line = String(decoding: buffer[..<end].prefix(64), as: UTF8.self)
            buffer.removeSubrange(...end)
            events.append(.cardRead(id: line, at: monotonicNow()))
        }
        if buffer.count > 64 { buffer.removeAll() }
        return events
    }
}

// SPDX-License-Identifier: MIT
import CInput
import Glibc
import JukeboxSystem

/// Edges without a chip: `GPIOLines` whose fds are pipes, fed with the kernel's own records
/// (`struct gpioevent_data` for libgpiod 1.6, `struct gpio_v2_line_event` for libgpiod 2) and read
/// by exactly the code that reads a chip's request (`jb_gpio_request_read`; with libgpiod 1.6 the
/// records are parsed by libgpiod's `gpiod_line_event_read_fd_multiple`, see gpio.c for libgpiod 2).
/// For tests and simulated buttons.
public final class GPIOEventFeed {
    /// The lines the feed writes to; read them like real ones.
    public let lines: GPIOLines
    /// Write ends: one per line (libgpiod 1.6) or one (libgpiod 2).
    private var writers: [Int32]
    private let offsets: [Int]
    private var seqno: UInt32 = 0

    /// Makes lines for `specs`; each line's offset is `spec.offset` or its position.
    public init(_ specs: [GPIOLineSpec]) throws(DeviceError) {
        let offsets = specs.enumerated().map { $0.element.offset ?? $0.offset }
        let pipeCount = jb_gpio_fd_per_line() ? specs.count : 1
        var readers: [Int32] = [], writers: [Int32] = []
        for _ in 0..<pipeCount {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else {
                let code = errno
                (readers + writers).forEach { _ = Glibc.close($0) }
                throw DeviceError(kind: .failed, message: "pipe: \(errnoText(code))", errno: code)
            }
            ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
            readers.append(ends[0])
            writers.append(ends[1])
        }
        let configs = specs.enumerated().map {
            jb_gpio_line_config(offset: UInt32(offsets[$0.offset]), bias: $0.element.cBias, active_low: $0.element.activeLow)
        }
        guard let handle = jb_gpio_request_adopt(readers, readers.count, configs, configs.count) else {
            let code = errno
            (readers + writers).forEach { _ = Glibc.close($0) }
            throw DeviceError(kind: .invalid, message: "cannot feed \(specs.count) lines: \(errnoText(code))", errno: code)
        }
        let resolved = offsets.map { GPIOLines.Resolved(chipPath: "(fed)", chipLabel: "fed", offset: $0, name: "") }
        lines = GPIOLines(specs: specs, resolved: resolved, chips: [],
                          requests: [(handle, Array(specs.indices), GPIOLines.fds(of: handle))])
        self.writers = writers
        self.offsets = offsets
    }

    deinit { closeWriters() }

    /// The bytes of one kernel record for a physical edge on line `line` (before active-low).
    public func record(line: Int, rising: Bool, timestampNs: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 128)
        seqno &+= 1
        let size = jb_gpio_encode_kernel_event(UInt32(offsets[line]), rising, timestampNs, seqno, &bytes, bytes.count)
        return Array(bytes.prefix(size))
    }

    /// Writes physical edges (`rising`: the pin went high) as the kernel would deliver them, and
    /// leaves each line at the level of its last edge (what `GPIOLines.level` reads).
    ///
    /// `kernelQueue`: as if nobody read during these edges and the kernel kept only that many a
    /// line, dropping the newer ones, as uAPI v1 (libgpiod 1.6) does with its 16-record FIFO. The
    /// level follows every edge, dropped or not, so the last edge read is not the line's level.
    /// (uAPI v2 drops the oldest instead: this is v1's worst case whatever the libgpiod.)
    public func feed(_ edges: [(line: Int, rising: Bool, timestampNs: UInt64)], kernelQueue: Int? = nil) throws(DeviceError) {
        var queued: [Int: Int] = [:]
        for edge in edges {
            try setLevel(line: edge.line, high: edge.rising)
            queued[edge.line, default: 0] += 1
            if let kernelQueue, queued[edge.line, default: 0] > kernelQueue {
                seqno &+= 1  // the kernel numbers the edges it drops too
                continue
            }
            try write(record(line: edge.line, rising: edge.rising, timestampNs: edge.timestampNs), line: edge.line)
        }
    }

    /// Sets the physical level of line `line` (`high`: the pin is high) without an edge, as
    /// `GPIOLines.level` will read it (through `jb_gpio_request_get_value`, which answers a fed
    /// request's level in place of libgpiod's read of a chip's line).
    public func setLevel(line: Int, high: Bool) throws(DeviceError) {
        guard let (handle, index) = lines.place(line), jb_gpio_request_feed_level(handle, index, high) == 0 else {
            throw DeviceError(kind: .failed, message: "feed level: line \(line) is not open", errno: EBADF)
        }
    }

    /// Writes raw bytes into the fd that carries line `line`'s records (malformed input).
    public func write(_ bytes: [UInt8], line: Int) throws(DeviceError) {
        guard !writers.isEmpty else { throw DeviceError(kind: .failed, message: "feed write: the feed is closed", errno: EBADF) }
        let fd = writers[writers.count == 1 ? 0 : line]
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                throw DeviceError(kind: .failed, message: "feed write: \(errnoText(code))", errno: code)
            }
            done += n
        }
    }

    /// Closes the write ends (a reader then sees end of file, like a vanished chip).
    public func closeWriters() {
        writers.forEach { _ = Glibc.close($0) }
        writers = []
    }
}

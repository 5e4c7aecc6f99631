// SPDX-License-Identifier: MIT
import Foundation
import Glibc
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// `SnapcastOutput` against a real FIFO and a reader that behaves as snapserver's pipe source
/// does (`SnapReader`): the pipe paces the writer, the bytes arrive whole and in order, a missing
/// reader or a stalled one is a lost device within bounded time, an interrupt ends a waiting
/// write at once, and formats the stream cannot carry are refused naming both. The same with
/// the real snapserver and snapclient: JukeboxEndToEndTests' SnapcastTests.
final class SnapcastOutputTests: ScratchCase {
    private let stream = SnapcastOutput.StreamFormat(rate: 44100, bits: 16, channels: 2)
    private let cd = AudioFormat(sampleRate: 44100, channels: 2, sample: .int16)

    private func fifo(_ scratch: Scratch) -> String {
        let path = scratch.path("fifo")
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        return path
    }

    func testTheEngineFeedsTheReaderEveryFrameInOrderAcrossATrackBoundary() throws {
        let pipe = fifo(scratch)
        let first = try scratch.audio(.flac, frames: 30_011, name: "a")
        let second = try scratch.audio(.wav16, frames: 20_021, name: "b")
        let a = try TestAudio.decode(path: first)
        let b = try TestAudio.decode(path: second)
        // Eight times real time: the test stays short and the pipe still paces the writer.
        let reader = SnapReader(path: pipe, bytesPerSecond: 44100 * 4 * 8)
        defer { reader.stop() }
        let (log, engine) = logAndEngine { SnapcastOutput(pipe: pipe, stream: self.stream) }
        engine.play(id: 1, path: first, from: 0, paused: false, next: (id: 2, path: second))
        XCTAssertTrue(log.wait(for: .finished(id: 2)))
        engine.shutdown()
        XCTAssertTrue(waitFor(5) { reader.bytes.count >= a.bytes.count + b.bytes.count })
        assertSameAudio(Array(reader.bytes.prefix(a.bytes.count + b.bytes.count)), (a.bytes + b.bytes)[...],
                        bytesPerFrame: 4, "what the reader got")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .started(id: 2), .finished(id: 2)])
    }

    func testThePositionIsWhatTheReaderTookAndNeverAhead() throws {
        let pipe = fifo(scratch)
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        // Real time: the pipe (64 KiB, 0.37 s) stays full, so written - delay is what was read.
        let reader = SnapReader(path: pipe, bytesPerSecond: 44100 * 4)
        defer { reader.stop() }
        let (log, engine) = logAndEngine { SnapcastOutput(pipe: pipe, stream: self.stream) }
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .started(id: 1)))
        var checks = 0
        while checks < 20, !log.all.contains(.finished(id: 1)) {
            usleep(50_000)  // how often the position is sampled while it plays in real time; not synchronisation
            let before = Double(reader.bytes.count) / 4 / 44100
            guard let position = engine.position() else { continue }
            let (taken, late) = reader.takenAndLate()
            let after = Double(taken) / 4 / 44100
            // Extrapolated between writes at the stream's rate, as the reader's clock runs: ahead of
            // what was read only by what a held-back reader has not yet caught up on (a loaded
            // machine holds its thread; 0.23 s once at load 9), plus 0.1 s of chunks and scheduling.
            // Never more: the full pipe (0.37 s, written and not read) is not counted as heard.
            XCTAssertGreaterThanOrEqual(position.seconds, before - 0.2, "position behind what was read")
            XCTAssertLessThanOrEqual(position.seconds, after + late + 0.1, "position ahead of what was read (the reader \(late) s late)")
            checks += 1
        }
        XCTAssertGreaterThan(checks, 10)
    }

    func testAReaderThatLooksEveryTenthOfASecondIsWaitedForAndNobodyIsLostInBoundedTime() throws {
        let pipe = fifo(scratch)
        let output = SnapcastOutput(pipe: pipe, stream: stream)
        // Nobody reads: lost after the attach timeout, not a hang.
        let start = Date()
        XCTAssertThrowsError(try output.open(format: cd)) { error in
            XCTAssertEqual((error as? OutputError)?.kind, .lost)
            XCTAssertTrue((error as? OutputError)?.message.contains("nobody reads") == true, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        XCTAssertEqual(output.probe()?.kind, .lost)
        XCTAssertFalse(output.isOpen)
        // snapserver between two looks: it opened, met an end of file, closed, looks again in 100 ms.
        let reader = SnapReader(path: pipe, bytesPerSecond: 44100 * 4)
        defer { reader.stop() }
        XCTAssertTrue(waitFor(2) { reader.endsOfFile >= 2 })
        XCTAssertNil(output.probe())
        // Found at one of its next looks, within the attach timeout.
        try output.open(format: cd)
        let endsOfFile = reader.endsOfFile
        let block = (0..<4410).flatMap { i in [Int16(truncatingIfNeeded: i), Int16(truncatingIfNeeded: -i)] }
        XCTAssertEqual(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 4410) }, 4410)
        output.close()
        // Kept open for the reader, which takes everything (and then reads silence: nothing).
        let sent = block.withUnsafeBytes { [UInt8]($0) }
        XCTAssertTrue(waitFor(2) { reader.bytes.count >= sent.count })
        XCTAssertEqual(reader.bytes, sent)
        XCTAssertEqual(reader.endsOfFile, endsOfFile, "an end of file after the last frames: snapserver would lose its last chunk")
        // The next open takes the same pipe up again: the reader never met an end of file.
        try output.open(format: cd)
        XCTAssertEqual(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 441) }, 441)
        XCTAssertTrue(waitFor(2) { reader.bytes.count == sent.count + 441 * 4 })
        XCTAssertEqual(reader.endsOfFile, endsOfFile)
    }

    func testAnInterruptEndsAWriteThatWaitsForRoomAndDropTakesBackWhatThePipeHolds() throws {
        let pipe = fifo(scratch)
        let reader = SnapReader(path: pipe, bytesPerSecond: 0)  // open, reads nothing
        defer { reader.stop() }
        let output = SnapcastOutput(pipe: pipe, stream: stream)
        try output.open(format: cd)
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(Glibc.pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        output.setInterrupt(fds[0])
        XCTAssertEqual(Glibc.write(fds[1], "x", 1), 1)
        let block = [Int16](repeating: 7, count: 44100 * 2)
        let start = Date()
        let queued = try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 44100) }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5, "the interrupt did not end the write")
        // The pipe took what fits (64 KiB by default), not the whole second.
        XCTAssertGreaterThan(queued, 0)
        XCTAssertLessThan(queued, 44100)
        XCTAssertEqual(output.delayFrames(), queued)
        output.drop()
        XCTAssertEqual(output.delayFrames(), 0)
        XCTAssertEqual(output.cutMethod, .drop)
        XCTAssertThrowsError(try output.pause(true)) { XCTAssertEqual(($0 as? OutputError)?.kind, .unsupported) }
        output.close()
    }

    func testAReaderThatStopsReadingIsAStallAndOneThatLeavesIsLostWithoutSIGPIPE() throws {
        let pipe = fifo(scratch)
        let output = SnapcastOutput(pipe: pipe, stream: stream)
        output.stallTimeout = 0.3
        let block = [Int16](repeating: 1, count: 44100 * 2)
        do {
            let stalled = SnapReader(path: pipe, bytesPerSecond: 0)
            defer { stalled.stop() }
            try output.open(format: cd)
            let start = Date()
            XCTAssertThrowsError(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 44100) }) { error in
                XCTAssertEqual((error as? OutputError)?.kind, .lost)
                XCTAssertTrue((error as? OutputError)?.message.contains("stalled") == true, "\(error)")
            }
            XCTAssertLessThan(Date().timeIntervalSince(start), 2)
            XCTAssertEqual(output.counters.stalls, 1)
            // What the pipe held was never heard: the engine counts it back.
            XCTAssertEqual(output.failurePoint?.unheard, output.failurePoint?.accepted)
            output.close()
        }
        let leaving = SnapReader(path: pipe, bytesPerSecond: 44100 * 4)
        try output.open(format: cd)
        XCTAssertEqual(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 4410) }, 4410)
        leaving.stop()
        // SIGPIPE would end this process: it must come back as an error instead.
        XCTAssertThrowsError(try block.withUnsafeBytes { try output.write($0.baseAddress!, frames: 44100) }) { error in
            XCTAssertEqual((error as? OutputError)?.kind, .lost)
        }
        XCTAssertEqual(output.counters.lost, 2)
        output.close()
    }

    func testFormatsTheStreamCannotCarryAreRefusedNamingBothAndMonoGoesToBothChannels() throws {
        let pipe = fifo(scratch)
        let output = SnapcastOutput(pipe: pipe, stream: stream)
        XCTAssertThrowsError(try output.open(format: AudioFormat(sampleRate: 48000, channels: 2, sample: .int16))) { error in
            let e = error as? OutputError
            XCTAssertEqual(e?.kind, .unsupported)
            XCTAssertTrue(e?.message.contains("48000 Hz with 2 channels") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("44100:16:2") == true, "\(error)")
        }
        XCTAssertThrowsError(try output.open(format: AudioFormat(sampleRate: 44100, channels: 6, sample: .int16))) {
            XCTAssertEqual(($0 as? OutputError)?.kind, .unsupported)
        }
        // Another sample type: refused, so the engine converts to the stream's (its candidates).
        XCTAssertThrowsError(try output.open(format: AudioFormat(sampleRate: 44100, channels: 2, sample: .float32))) {
            XCTAssertEqual(($0 as? OutputError)?.kind, .unsupported)
        }
        let reader = SnapReader(path: pipe, bytesPerSecond: 44100 * 4 * 8)
        defer { reader.stop() }
        try output.open(format: AudioFormat(sampleRate: 44100, channels: 1, sample: .int16))
        let mono: [Int16] = (0..<3000).map { Int16($0) - 1500 }
        XCTAssertEqual(try mono.withUnsafeBytes { try output.write($0.baseAddress!, frames: mono.count) }, mono.count)
        output.close()
        let stereo = mono.flatMap { [$0, $0] }.withUnsafeBytes { [UInt8]($0) }
        XCTAssertTrue(waitFor(2) { reader.bytes.count >= stereo.count })
        XCTAssertEqual(reader.bytes, stereo)
    }

    func testA24BitStreamGetsSamplesRightJustifiedInFourBytes() throws {
        let pipe = fifo(scratch)
        let output = SnapcastOutput(pipe: pipe, stream: .init(rate: 48000, bits: 24, channels: 2))
        let reader = SnapReader(path: pipe, bytesPerSecond: 48000 * 8 * 8)
        defer { reader.stop() }
        try output.open(format: AudioFormat(sampleRate: 48000, channels: 2, sample: .int32))
        // 24-bit values, left-justified as decoders hand them over.
        let values: [Int32] = [0, 1, -1, 8_388_607, -8_388_608, 123_456, -654_321, 42]
        let left = values.map { $0 << 8 }
        XCTAssertEqual(try left.withUnsafeBytes { try output.write($0.baseAddress!, frames: 4) }, 4)
        output.close()
        XCTAssertTrue(waitFor(2) { reader.bytes.count >= 32 })
        XCTAssertEqual(reader.bytes, values.withUnsafeBytes { [UInt8]($0) })
    }

    func testWhatIsNoFIFOIsRefusedAndAMissingPipeIsLost() throws {
        let file = scratch.file("plain", [1, 2, 3])
        let output = SnapcastOutput(pipe: file, stream: stream)
        XCTAssertThrowsError(try output.open(format: cd)) { error in
            XCTAssertEqual((error as? OutputError)?.kind, .other)
            XCTAssertTrue((error as? OutputError)?.message.contains("not a FIFO") == true, "\(error)")
        }
        XCTAssertEqual(scratch.bytes(file), [1, 2, 3])
        let pipe = fifo(scratch)
        let link = scratch.path("link")
        XCTAssertEqual(symlink(pipe, link), 0)
        XCTAssertEqual(SnapcastOutput(pipe: link, stream: stream).probe()?.kind, .other)
        XCTAssertEqual(SnapcastOutput(pipe: scratch.path("absent"), stream: stream).probe()?.kind, .lost)
    }
}

/// A reader of a FIFO that behaves as snapserver's pipe source: it opens the FIFO non-blocking
/// and reads `bytesPerSecond` (0: none, but it stays open while there is a writer); at an end of
/// file (no writer) it closes and opens again 100 ms later.
final class SnapReader: @unchecked Sendable {
    private final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var received: [UInt8] = []
        var eofs = 0
        var stopping = false
        var done = false
        /// When the reader would have taken everything it took so far, reading on time (its
        /// clock's schedule; reset whenever the pipe had less than was due: the writer is behind;
        /// 0 between opens).
        var scheduleStart = 0.0
    }

    private let shared = Shared()
    private let bytesPerSecond: Int

    var bytes: [UInt8] { shared.lock.withLock { shared.received } }
    var endsOfFile: Int { shared.lock.withLock { shared.eofs } }

    /// The bytes taken, and how many seconds behind its own schedule the reader is now (0 when
    /// on time): what a thread held back by a loaded machine has yet to catch up on.
    func takenAndLate() -> (taken: Int, late: Double) {
        shared.lock.withLock {
            guard bytesPerSecond > 0, shared.scheduleStart > 0 else { return (shared.received.count, 0) }
            let due = (Self.now() - shared.scheduleStart) * Double(bytesPerSecond)
            return (shared.received.count, max(0, due - Double(shared.received.count)) / Double(bytesPerSecond))
        }
    }

    private static func now() -> Double { ProcessInfo.processInfo.systemUptime }

    init(path: String, bytesPerSecond: Int) {
        self.bytesPerSecond = bytesPerSecond
        let shared = self.shared
        let rate = Double(bytesPerSecond)
        let thread = Thread {
            defer { shared.lock.withLock { shared.done = true } }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !shared.lock.withLock({ shared.stopping }) {
                let fd = open(path, O_RDONLY | O_NONBLOCK)
                guard fd >= 0 else { usleep(100_000); continue }  // snapserver's look again
                var endOfFile = false
                while !endOfFile, !shared.lock.withLock({ shared.stopping }) {
                    if bytesPerSecond == 0 {
                        // Reads nothing, but notices its writer leaving, as snapserver's next read would.
                        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                        if poll(&p, 1, 20) > 0, p.revents & Int16(POLLHUP) != 0, p.revents & Int16(POLLIN) == 0 { endOfFile = true }
                        continue
                    }
                    // What its clock says is due, whole frames: after a wait longer than its 20 ms
                    // (a loaded machine) it takes the arrears at once, as snapserver's timer does.
                    let now = Self.now()
                    let (start, taken) = shared.lock.withLock { () -> (Double, Int) in
                        let taken = shared.received.count
                        if shared.scheduleStart == 0 { shared.scheduleStart = now - 0.02 - Double(taken) / rate }
                        return (shared.scheduleStart, taken)
                    }
                    let due = Int((now - start) * rate) / 4 * 4
                    let want = min(buffer.count, max(4, due - taken))
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, want) }
                    if n > 0 {
                        shared.lock.withLock {
                            shared.received += buffer[0..<n]
                            // Less than was due: the writer is behind, not the reader.
                            if n < want { shared.scheduleStart = now - Double(shared.received.count) / rate }
                        }
                    } else if n == 0 {
                        shared.lock.withLock { shared.eofs += 1; shared.scheduleStart = 0 }
                        endOfFile = true
                        continue
                    } else {
                        shared.lock.withLock { shared.scheduleStart = now - Double(shared.received.count) / rate }
                    }
                    usleep(20_000)  // the reader's own pace: snapserver reads a chunk every 20 ms
                }
                close(fd)
                if endOfFile { usleep(100_000) }  // snapserver looks again 100 ms after an end of file
            }
        }
        thread.start()
    }

    /// Stops reading and closes the FIFO (a writer then has no reader).
    func stop() {
        shared.lock.withLock { shared.stopping = true }
        // Its loop looks every 20 ms (100 ms between opens).
        XCTAssertTrue(waitFor(2) { self.shared.lock.withLock { self.shared.done } })
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// The engine and `AlsaOutput` against the fault-injecting test device (`Sources/JukeboxTestPCM`),
/// through the real libasound: pacing, busy, another program holding the device, unplug and resume,
/// xrun, suspend, stall, a device that cannot pause. Figures are printed for the record.
final class FaultyDeviceTests: ScratchCase {
    private func device(speed: Double = 1, faults: [TestPCM.Fault] = []) throws -> TestPCM {
        let pcm = try TestPCM(directory: scratch.path("device"), speed: speed)
        try pcm.set(faults)
        return pcm
    }

    private func engine(_ pcm: TestPCM, _ log: ReportLog, plug: Bool = false) -> AudioEngine {
        let name = plug ? pcm.plugName : pcm.name
        let config = pcm.configText
        return makeEngine(log) { AlsaOutput(device: name, configText: config) }
    }

    private func finished(_ log: ReportLog, _ id: UInt64, timeout: Double) -> Bool {
        log.wait(timeout: timeout) { if case .finished(id, _) = $0 { true } else { false } }
    }

    /// Frames a stream that starts mid-track fades in over (the engine's ramp is 15 ms: 662 frames at 44.1 kHz).
    private let fadeFrames = 1024

    private func isLost(_ report: AudioEngine.Report) -> Bool {
        if case .deviceUnavailable(let error) = report { error.kind == .lost } else { false }
    }

    private func deviceReports(_ log: ReportLog) -> [OutputError] {
        log.all.compactMap { if case .deviceUnavailable(let error) = $0 { error } else { nil } }
    }

    /// Waits until the engine reports a position of at least `seconds` heard.
    private func waitHeard(_ engine: AudioEngine, _ seconds: Double, timeout: Double = 10) -> Bool {
        TestPCM.wait(timeout: timeout) { (engine.position()?.seconds ?? 0) >= seconds }
    }

    private func period(_ pcm: TestPCM) -> Int {
        pcm.events(named: "params").last.flatMap { Int($0.fields["period"] ?? "") } ?? 0
    }

    // MARK: Pacing and recording

    /// Writes `seconds` of a 16-bit stereo ramp straight to an `AlsaOutput` and drains it: the time
    /// from the first write to the end of the drain, and whether the recording is the bytes written.
    private func pace(speed: Double, seconds: Double) throws -> (elapsed: Double, exact: Bool) {
        let pcm = try device(speed: speed)
        let output = AlsaOutput(device: pcm.name, configText: pcm.configText)
        try output.open(format: AudioFormat(sampleRate: 44100, channels: 2, sample: .int16))
        let frames = Int(seconds * 44100)
        let bytes = (0..<frames * 4).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let start = Date()
        var done = 0
        while done < frames {
            let count = min(2048, frames - done)
            done += try bytes.withUnsafeBytes { try output.write($0.baseAddress! + done * 4, frames: count) }
        }
        output.drain()
        let elapsed = Date().timeIntervalSince(start)
        output.close()
        // A machine too slow or too busy to feed the device in time underruns it (under
        // qemu-aarch64: 1 xrun at speed 1, 9 at speed 10): each must be recovered, nothing lost.
        let c = output.counters
        print("jukeboxtest pacing counters: \(c)")
        XCTAssertEqual(c.recoveries, c.xruns + c.suspends)
        XCTAssertEqual([c.stalls, c.lost], [0, 0])
        return (elapsed, pcm.recording() == bytes)
    }

    // Lower bounds only: the device never plays faster than its speed. How much slower a loaded
    // or emulated machine is, is the machine's figure, not the device's.
    func testRealTimePacing() throws {
        let (elapsed, exact) = try pace(speed: 1, seconds: 1)
        print("jukeboxtest pacing: 1.000 s of audio at speed 1 played in \(String(format: "%.3f", elapsed)) s")
        XCTAssertGreaterThanOrEqual(elapsed, 0.995)
        XCTAssertTrue(exact, "recording differs from what was written")
    }

    func testFastPacing() throws {
        let (elapsed, exact) = try pace(speed: 10, seconds: 2)
        print("jukeboxtest pacing: 2.000 s of audio at speed 10 played in \(String(format: "%.3f", elapsed)) s")
        XCTAssertGreaterThanOrEqual(elapsed, 0.199)
        XCTAssertTrue(exact, "recording differs from what was written")
    }

    func testEngineRecordingIsBitExact() throws {
        let pcm = try device(speed: 10)
        let path = try scratch.audio(.wav24, frames: 88200)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 5))
        engine.shutdown()
        assertSameAudio(pcm.recording(), source.bytes[...], bytesPerFrame: 8, "recorded")
        // A starved writer (a loaded machine, a sanitizer build) may meet a real underrun at 10x
        // speed: it must be recovered in place, never turn into a lost device or a gap.
        let counters = engine.counters()
        XCTAssertEqual(counters.recoveries, counters.xruns + counters.suspends, "\(counters)")
        XCTAssertEqual(counters.lost, 0, "\(counters)")
        XCTAssertEqual(counters.stalls, 0, "\(counters)")
    }

    func testPlugStacksOnTheDevice() throws {
        let pcm = try device(speed: 20)
        let path = try scratch.audio(.oggVorbis, frames: 30000, channels: 1)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log, plug: true)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 5), "\(log.all)")
        engine.shutdown()
        XCTAssertEqual(pcm.events(named: "params").first?.fields["format"], "FLOAT_LE")
        assertSameAudio(pcm.recording(), source.bytes[...], bytesPerFrame: 4, "through plug")
    }

    // MARK: Busy

    func testBusyAtOpenIsReportedAsBusy() throws {
        let pcm = try device(faults: [.busy])
        let path = try scratch.audio(.wav16, frames: 4410)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0.05, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable = $0 { true } else { false } })
        XCTAssertEqual(deviceReports(log).map(\.kind), [.busy])
        XCTAssertEqual(engine.position()?.seconds ?? -1, 0.05, accuracy: 1e-9)
        try pcm.clear()
        engine.play(id: 2, path: path, from: 0, paused: false)
        XCTAssertTrue(finished(log, 2, timeout: 5))
    }

    func testAnotherProgramHoldingTheDeviceIsNamedAndLetsGo() throws {
        let pcm = try device(speed: 1)
        let home = scratch.path("home")
        try pcm.writeAsoundrc(home: home)
        // aplay plays one second of silence to the same device (its own recording is appended
        // first), read from a pipe the test closes once the engine has found the device busy: a
        // file would let aplay finish before a slow machine (qemu-aarch64) got the engine there.
        let feed = Pipe()
        let aplay = Process()
        aplay.executableURL = URL(fileURLWithPath: "/usr/bin/aplay")
        aplay.arguments = ["-q", "-D", pcm.name, "-t", "raw", "-f", "S16_LE", "-r", "44100", "-c", "2", "-"]
        aplay.environment = ["HOME": home, "PATH": "/usr/bin:/bin"]
        aplay.standardInput = feed
        try aplay.run()
        defer { if aplay.isRunning { aplay.terminate() } }
        try feed.fileHandleForWriting.write(contentsOf: [UInt8](repeating: 0, count: 44100 * 4))
        XCTAssertTrue(TestPCM.wait(timeout: 5) { pcm.lockHolder == aplay.processIdentifier }, "aplay never opened the device")

        let path = try scratch.audio(.wav16, frames: 22050)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable = $0 { true } else { false } })
        let busy = try XCTUnwrap(deviceReports(log).first)
        XCTAssertEqual(busy.kind, .busy)
        XCTAssertEqual(busy.holder, "aplay (pid \(aplay.processIdentifier))")
        print("jukeboxtest busy: holder reported as \(busy.holder ?? "nil")")

        try feed.fileHandleForWriting.close()
        aplay.waitUntilExit()
        XCTAssertEqual(aplay.terminationStatus, 0)
        let aplayBytes = pcm.recording().count
        // The retry policy is the core's; here the caller just plays again.
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 5))
        engine.shutdown()
        XCTAssertGreaterThanOrEqual(aplayBytes, 44100 * 4)
        assertSameAudio(Array(pcm.recording()[aplayBytes...]), source.bytes[...], bytesPerFrame: 4, "after aplay")
    }

    // MARK: Unplug

    func testUnplugMidStreamHoldsTheHeardFrameAndResumesFromIt() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.7))
        try pcm.set([.unplug])
        XCTAssertTrue(log.wait(timeout: 5, for: isLost))
        XCTAssertEqual(deviceReports(log).count, 1)
        XCTAssertTrue(TestPCM.wait(timeout: 2) { !pcm.events(named: "close").isEmpty }, "device not closed")
        let held = try XCTUnwrap(engine.position())
        XCTAssertEqual(held.id, 1)
        XCTAssertEqual(engine.position()?.seconds, held.seconds, "the held position moves")
        let unplug = try XCTUnwrap(pcm.events(named: "unplug").first)
        let lastHeard = unplug.heard / 4 // the first frame the device did not play (stream 1 starts at frame 0)
        let heldFrame = Int((held.seconds * 44100).rounded())
        let periodFrames = period(pcm)
        print("jukeboxtest unplug: device stopped at frame \(lastHeard), engine holds \(heldFrame) "
              + "(\(heldFrame - lastHeard) frames, period \(periodFrames))")
        XCTAssertLessThanOrEqual(abs(heldFrame - lastHeard), periodFrames)
        XCTAssertEqual(engine.counters().lost, 1)

        // Opening fails while unplugged…
        engine.play(id: 1, path: path, from: held.seconds, paused: false)
        XCTAssertTrue(TestPCM.wait(timeout: 5) { self.deviceReports(log).count == 2 })
        XCTAssertEqual(deviceReports(log).last?.kind, .lost)
        XCTAssertEqual(engine.position()?.seconds ?? -1, held.seconds, accuracy: 1e-9)
        // …and after replugging the track continues from the held frame.
        try pcm.clear()
        let streamOneBytes = pcm.recording().count
        engine.play(id: 1, path: path, from: held.seconds, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 6))
        engine.shutdown()
        let recording = pcm.recording()
        assertSameAudio(Array(recording[..<streamOneBytes]), source.bytes(frames: 0..<(streamOneBytes / 4)),
                        bytesPerFrame: 4, "before the unplug")
        // The resumed stream is the rest of the track from the held frame, bit for bit after its fade-in.
        XCTAssertEqual((recording.count - streamOneBytes) / 4, source.frames - heldFrame)
        assertSameAudio(Array(recording[(streamOneBytes + fadeFrames * 4)...]),
                        source.bytes(frames: (heldFrame + fadeFrames)..<source.frames), bytesPerFrame: 4, "after the resume")
        print("jukeboxtest unplug: resumed at frame \(heldFrame): \(heldFrame - lastHeard) frames after the last heard "
              + "(negative: repeated), \(streamOneBytes / 4 - lastHeard) frames were queued and never heard")
    }

    /// A card that vanishes mid-track resumes, once back, from the last frame it played: at most a
    /// little before it (what it played between the writer's last delay reading and the loss,
    /// repeated), never after it. The test device stops its clock when the control file changes
    /// and the writer learns it only at its next call (up to a period later): `AlsaOutput` used to
    /// assume the card had played on until then, and the resume skipped that much (0.4-1.0 s on a
    /// real card, whose queue was lost).
    func testAVanishedCardResumesFromTheLastFrameItPlayedNotAfterIt() throws {
        let (lastHeard, heldFrame, periodFrames) = try unplugAndReplug(stallFirst: false)
        XCTAssertLessThanOrEqual(heldFrame, lastHeard, "the resume skipped \(heldFrame - lastHeard) frames the card never played")
        // What it repeats: at most what the card played since the writer last read its delay
        // (the writer wakes once a period on this device).
        XCTAssertLessThanOrEqual(lastHeard - heldFrame, periodFrames + 4096)
    }

    /// A USB card stops playing before its driver goes: the writer waits for room, reading a
    /// delay that no longer shrinks, and then meets the loss up to a period later. The resume
    /// is the frame the card stopped at (within 20 ms, never after), not that minus the time the
    /// loss took to show.
    func testACardThatStopsAndThenVanishesResumesWhereItStopped() throws {
        let (lastHeard, heldFrame, _) = try unplugAndReplug(stallFirst: true)
        XCTAssertLessThanOrEqual(heldFrame, lastHeard, "the resume skipped \(heldFrame - lastHeard) frames the card never played")
        XCTAssertLessThanOrEqual(lastHeard - heldFrame, 882, "more than 20 ms repeated")
    }

    /// A card lost right after an xrun recovery, before the writer read its delay again, said
    /// nothing was unheard (the last delay was forgotten at the recovery), so the resume skipped
    /// the whole refilled buffer. The last delay known now survives the recovery: the resume
    /// repeats (what the xrun dropped, too) but never passes the last frame the card played.
    /// Straight on `AlsaOutput`, reading the delay after every write as the engine does.
    func testACardLostRightAfterAnXrunIsNotTakenAsHeardPastWhereItStopped() throws {
        let pcm = try device(speed: 1)
        let output = AlsaOutput(device: pcm.name, configText: pcm.configText)
        try output.open(format: AudioFormat(sampleRate: 44100, channels: 2, sample: .int16))
        let bytes = [UInt8](repeating: 0x11, count: 44100 * 4 * 4)
        var written = 0
        while written < 44100 / 2 {
            written += try bytes.withUnsafeBytes { try output.write($0.baseAddress!, frames: 2048) }
            _ = output.delayFrames()
        }
        XCTAssertFalse(pcm.events(named: "start").isEmpty, "never started")
        try pcm.set([.xrun])
        // The next write meets the xrun, recovers, refills the buffer and waits for room: the card
        // goes as soon as it plays again, before the writer's next look at it.
        let unplugger = Thread {
            let started = TestPCM.wait(timeout: 5) {
                let names = pcm.events().map(\.name)
                guard let xrun = names.lastIndex(of: "xrun") else { return false }
                return names[xrun...].contains("start")
            }
            if started { try? pcm.set([.unplug]) }
        }
        unplugger.start()
        var failure: OutputError?
        do {
            _ = try bytes.withUnsafeBytes { try output.write($0.baseAddress!, frames: 44100 * 3) }
        } catch let error as OutputError {
            failure = error
        }
        XCTAssertEqual(failure?.kind, .lost, "\(String(describing: failure)); events \(pcm.events())")
        let point = try XCTUnwrap(output.failurePoint)
        output.close()
        let unplug = try XCTUnwrap(pcm.events(named: "unplug").first)
        XCTAssertGreaterThanOrEqual(output.counters.recoveries, 1)
        let total = written + point.accepted
        XCTAssertEqual(pcm.recording().count / 4, total, "the device records every frame written")
        let resumeFrame = total - point.unheard
        let lastHeard = unplug.heard / 4
        print("jukeboxtest xrun then unplug: the card stopped at frame \(lastHeard) of \(total) written; the output "
              + "says \(point.unheard) unheard: resume at \(resumeFrame) (\(resumeFrame - lastHeard) frames after the last heard)")
        XCTAssertLessThanOrEqual(resumeFrame, lastHeard, "the resume would skip \(resumeFrame - lastHeard) frames never played")
        XCTAssertGreaterThanOrEqual(resumeFrame, 0)
    }

    /// Plays a 4 s track, unplugs the device 0.7 s in (after stalling it for 0.5 s with
    /// `stallFirst`), replugs it and plays on from the held frame; checks the recording around it.
    /// Returns the frame the device stopped at (the first it did not play), the frame the
    /// engine resumed at, and the device's period.
    private func unplugAndReplug(stallFirst: Bool) throws -> (lastHeard: Int, heldFrame: Int, period: Int) {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 4)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.7))
        if stallFirst {
            try pcm.set([.stall])
            // The device applies a fault when the writer next calls it: up to a period after the
            // set, since the writer sleeps until a period is free (found with a 2 s buffer).
            XCTAssertTrue(TestPCM.wait(timeout: 3) { !pcm.events(named: "stall").isEmpty }, "the stall never began")
            usleep(500_000)
            XCTAssertFalse(log.all.contains(where: isLost), "lost during the stall")
        }
        try pcm.set([.unplug])
        XCTAssertTrue(log.wait(timeout: 5, for: isLost))
        XCTAssertEqual(deviceReports(log).count, 1)
        XCTAssertTrue(TestPCM.wait(timeout: 2) { !pcm.events(named: "close").isEmpty }, "device not closed")
        let held = try XCTUnwrap(engine.position())
        XCTAssertEqual(held.id, 1)
        let unplug = try XCTUnwrap(pcm.events(named: "unplug").first)
        let stopped = stallFirst ? try XCTUnwrap(pcm.events(named: "stall").first) : unplug
        let lastHeard = stopped.heard / 4 // stream 1 starts at frame 0 of the recording
        let heldFrame = Int((held.seconds * 44100).rounded())
        // Back: the rest of the track from the held frame.
        try pcm.clear()
        let streamOneBytes = pcm.recording().count
        engine.play(id: 1, path: path, from: held.seconds, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 8))
        engine.shutdown()
        let recording = pcm.recording()
        XCTAssertEqual((recording.count - streamOneBytes) / 4, source.frames - heldFrame)
        if recording.count > streamOneBytes + fadeFrames * 4 {
            assertSameAudio(Array(recording[(streamOneBytes + fadeFrames * 4)...]),
                            source.bytes(frames: (heldFrame + fadeFrames)..<source.frames), bytesPerFrame: 4, "after the resume")
        }
        let periodFrames = period(pcm)
        print("jukeboxtest vanish\(stallFirst ? " after a stall" : ""): the card stopped at frame \(lastHeard), noticed "
              + "\(unplug.fields["noticed_after_ms"] ?? "?") ms after the unplug; resumed at \(heldFrame): "
              + "\(heldFrame - lastHeard) frames after the last heard (negative: repeated), period \(periodFrames)")
        return (lastHeard, heldFrame, periodFrames)
    }

    // MARK: Release for another program (interruptions, release on pause)

    func testReleaseReportsWhereTheSoundStoppedAndResumingThereRepeatsAndSkipsNothing() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.6))
        let asked = try XCTUnwrap(engine.position())
        engine.release(token: 7)
        var heard: HeardPoint?
        XCTAssertTrue(log.wait(timeout: 5) { report in
            if case .released(7, let point) = report { heard = point; return true } else { return false }
        })
        XCTAssertTrue(TestPCM.wait(timeout: 2) { !pcm.events(named: "close").isEmpty }, "device not closed")
        let stopped = try XCTUnwrap(heard)
        XCTAssertEqual(stopped.id, 1)
        // The test device cannot rewind: the release dropped what it held, so the sound stopped at
        // the frame it had reached ("stop" event), well before the end of what it received.
        let streamOneFrames = pcm.recording().count / 4
        let stopEvent = try XCTUnwrap(pcm.events(named: "stop").first)
        let heardFrames = try XCTUnwrap(Int(stopEvent.fields["heard"] ?? "")) / 4
        let stoppedFrame = Int((stopped.seconds * 44100).rounded())
        print("jukeboxtest release: asked at frame \(Int(asked.seconds * 44100)), sound stopped at frame \(stoppedFrame) "
              + "(device: \(heardFrames)), device received \(streamOneFrames) frames")
        XCTAssertEqual(Double(stoppedFrame), Double(heardFrames), accuracy: 64, "the reported stop is the last frame the device played")
        XCTAssertLessThan(stoppedFrame - Int(asked.seconds * 44100), 44100 / 10, "cut within 100 ms of the release")
        engine.play(id: 2, path: path, from: stopped.seconds, paused: false)
        XCTAssertTrue(finished(log, 2, timeout: 6))
        engine.shutdown()
        let recording = pcm.recording()
        XCTAssertEqual(recording.count / 4, streamOneFrames + source.frames - stoppedFrame,
                       "resumed at the stop frame: nothing repeated or skipped")
        assertSameAudio(Array(recording[((streamOneFrames + fadeFrames) * 4)...]),
                        source.bytes(frames: (stoppedFrame + fadeFrames)..<source.frames), bytesPerFrame: 4, "after the resume")
    }

    func testAVolumeChangeInterruptsTheWriteButLosesOrRepeatsNoFrame() throws {
        let pcm = try device(speed: 4)
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.3))
        // The writer waits in the full device buffer: the command wakes it mid-write.
        engine.setVolume(50)
        XCTAssertTrue(finished(log, 1, timeout: 10))
        engine.shutdown()
        // The device only drops: the change cut what it held (recorded, never played) and the
        // engine decoded it again from the frame the device had reached.
        let dropped = pcm.events(named: "stop").dropLast().reduce(0) { $0 + ($1.recorded - $1.heard) / 4 }
        // The frames the device plays between the engine's delay read and its drop are heard twice
        // (at 4× speed a frame lasts 5.7 µs: 0–6 frames here, more if the writer thread is
        // preempted between the two calls). None is lost.
        let repeated = pcm.recording().count / 4 - dropped - source.frames
        XCTAssert((0...4410).contains(repeated), "every frame played, \(repeated) of them twice")
    }

    /// The test device only drops (like pulse and PipeWire): a volume change must not wait behind
    /// the second it holds. What it held is dropped at the frame it had reached, and the track is
    /// decoded again from there, fading in at the new gain: nothing lost, bit-exact before the cut.
    func testAVolumeChangeOnADropOnlyDeviceCutsWhatIsQueued() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 3)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.4))
        engine.setVolume(50)
        XCTAssertTrue(finished(log, 1, timeout: 10))
        engine.shutdown()
        let recording = pcm.recording()
        let cut = try XCTUnwrap(pcm.events(named: "stop").first, "\(pcm.events())")
        let heard = cut.heard / 4
        let held = (cut.recorded - cut.heard) / 4
        let starts = pcm.events(named: "start")
        let gap = starts.count > 1 ? (Double(starts[1].fields["t"] ?? "") ?? 0) - (Double(cut.fields["t"] ?? "") ?? 0) : -1
        print("jukeboxtest volume on a drop-only device: cut at frame \(heard) with \(held) frames queued, "
              + "silent \(String(format: "%.1f", gap * 1000)) ms until the device started again")
        XCTAssertGreaterThan(held, 44100 / 10, "the cut took back what was queued (a long buffer), not only what came after")
        // The engine reads the device's delay just before the drop: the frames played in between
        // (tens of microseconds) are written again, heard twice. Nothing is lost.
        let repeated = recording.count / 4 - (cut.recorded / 4 + source.frames - heard)
        print("jukeboxtest volume on a drop-only device: \(repeated) frames heard twice")
        // Normally 0 or 1; more only if the writer thread is preempted between the two calls.
        XCTAssert((0...4410).contains(repeated), "resumed at the cut frame: \(repeated) frames repeated")
        assertSameAudio(Array(recording[..<cut.heard]), source.bytes[..<cut.heard], bytesPerFrame: 4, "before the cut, untouched")
        // After the ramp every sample is the source at the new gain (within rounding).
        let gain = VolumeCurve.gain(percent: 50)
        let after = recording[cut.recorded...].withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let expected = source.bytes[((heard - repeated) * 4)...].withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        XCTAssertEqual(after.count, expected.count)
        let worst = zip(after, expected).dropFirst(fadeFrames * 2).map { abs(Double($0) - Double($1) * gain) }.max() ?? 0
        XCTAssertLessThanOrEqual(worst, 1.5, "at the new gain after the ramp")
    }

    // MARK: Xrun and suspend

    func testXrunIsRecoveredCountedAndLosesNothingWritten() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 2)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.5))
        try pcm.set([.xrun])
        XCTAssertTrue(finished(log, 1, timeout: 6))
        engine.shutdown()
        let xruns = pcm.events(named: "xrun")
        let underruns = pcm.events(named: "underrun")
        XCTAssertEqual(xruns.count, 1)
        let counters = engine.counters()
        // Natural underruns (a starved machine) count too; the device logs every one.
        XCTAssertEqual(counters.xruns, xruns.count + underruns.count)
        XCTAssertEqual(counters.recoveries, counters.xruns)
        XCTAssertEqual(counters.lost, 0)
        // The device dropped what it held; the engine neither lost nor repeated a frame it wrote.
        assertSameAudio(pcm.recording(), source.bytes[...], bytesPerFrame: 4, "across the xrun")
        XCTAssertEqual(log.tracks.count, 2, "\(log.tracks)")
        if let xrun = xruns.first {
            print("jukeboxtest xrun: recovered; the device dropped \((xrun.recorded - xrun.heard) / 4) queued frames; counters \(counters)")
        }
    }

    func testSuspendIsResumedWhereItStopped() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 2)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.5))
        try pcm.set([.suspend])
        XCTAssertTrue(finished(log, 1, timeout: 6))
        engine.shutdown()
        XCTAssertEqual(pcm.events(named: "suspend").count, 1)
        XCTAssertEqual(pcm.events(named: "resume").count, 1)
        let counters = engine.counters()
        XCTAssertEqual(counters.suspends, 1)
        XCTAssertGreaterThanOrEqual(counters.recoveries, 1)
        XCTAssertEqual(counters.lost, 0)
        // A resumed device drops nothing: every frame is heard once.
        assertSameAudio(pcm.recording(), source.bytes[...], bytesPerFrame: 4, "across the suspend")
        XCTAssertEqual(pcm.events(named: "close").last?.heard, source.bytes.count)
        XCTAssertEqual(log.tracks.count, 2, "\(log.tracks)")
        print("jukeboxtest suspend: resumed; counters \(counters)")
    }

    // MARK: Stall

    func testStalledDeviceIsLostWithinTheBoundWithoutSpinning() throws {
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: 44100 * 5)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.5))
        let cpuBefore = processCPUSeconds()
        let start = Date()
        try pcm.set([.stall])
        XCTAssertTrue(log.wait(timeout: 6, for: isLost))
        let detected = Date().timeIntervalSince(start)
        let cpu = processCPUSeconds() - cpuBefore
        XCTAssertEqual(deviceReports(log).count, 1)
        XCTAssertGreaterThanOrEqual(detected, 1.9)
        XCTAssertLessThan(detected, 3.0)
        XCTAssertLessThan(cpu, 0.5, "the stalled wait should sleep, not spin")
        let counters = engine.counters()
        XCTAssertEqual(counters.stalls, 1)
        XCTAssertEqual(counters.lost, 1)
        let stall = try XCTUnwrap(pcm.events(named: "stall").first)
        let held = try XCTUnwrap(engine.position())
        let heldFrame = Int((held.seconds * 44100).rounded())
        print("jukeboxtest stall: lost after \(String(format: "%.3f", detected)) s, process CPU \(String(format: "%.3f", cpu)) s; "
              + "device stopped at frame \(stall.heard / 4), engine holds \(heldFrame)")
        XCTAssertLessThanOrEqual(abs(heldFrame - stall.heard / 4), period(pcm))
        XCTAssertTrue(TestPCM.wait(timeout: 2) { !pcm.events(named: "close").isEmpty }, "device not closed")
    }

    /// A stall while the end of the queue plays out (everything written, the writer waiting for the
    /// device to play it) is a stall like any other: lost within the bound, counted, the heard frame
    /// held, no `.finished`, and the rest of the track played once the device is back. The writer
    /// used to wait for a delay that never shrank (a silent box saying "playing" at the track's end),
    /// or, in the last 50 ms, let `drain` give up and report the end as heard.
    func testAStallWhileTheEndOfTheQueuePlaysOutIsLostAndResumedWhereItStopped() throws {
        // Stalled from the start: a short track fits in the device buffer, so every write succeeds
        // and only the play-out can notice.
        try stallAtTheEnd(seconds: 0.6, stall: { pcm, _ in try pcm.set([.stall]) })
        // Stalled once everything is written: the device meets it at the writer's next look, in
        // the last milliseconds, inside `drain`.
        try stallAtTheEnd(seconds: 1.5, stall: { pcm, bytes in
            XCTAssertTrue(TestPCM.wait(timeout: 5) { pcm.recording().count >= bytes }, "never all written")
            try pcm.set([.stall])
        })
    }

    private func stallAtTheEnd(seconds: Double, stall: (TestPCM, Int) throws -> Void) throws {
        scratch = try Scratch()
        let pcm = try device(speed: 1)
        let path = try scratch.audio(.wav16, frames: Int(44100 * seconds))
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        let start = Date()
        if seconds < 1 { try stall(pcm, source.bytes.count) }
        engine.play(id: 1, path: path, from: 0, paused: false)
        if seconds >= 1 { try stall(pcm, source.bytes.count) }
        XCTAssertTrue(log.wait(timeout: 8, for: isLost), "the stall was never noticed: \(log.all)")
        let detected = Date().timeIntervalSince(start)
        XCTAssertFalse(log.all.contains { if case .finished = $0 { true } else { false } }, "\(log.all)")
        let counters = engine.counters()
        XCTAssertEqual([counters.stalls, counters.lost], [1, 1], "\(counters)")
        let stalled = try XCTUnwrap(pcm.events(named: "stall").first)
        let held = try XCTUnwrap(engine.position())
        XCTAssertEqual(held.id, 1)
        let heldFrame = Int((held.seconds * 44100).rounded())
        print("jukeboxtest stall at the end of a \(seconds) s track: lost \(String(format: "%.3f", detected)) s after the play; "
              + "device stopped at frame \(stalled.heard / 4), engine holds \(heldFrame)")
        XCTAssertLessThanOrEqual(abs(heldFrame - stalled.heard / 4), period(pcm))
        XCTAssertTrue(TestPCM.wait(timeout: 2) { !pcm.events(named: "close").isEmpty }, "device not closed")
        // Back: the rest of the track from the held frame, and then its end.
        try pcm.clear()
        let streamOneBytes = pcm.recording().count
        engine.play(id: 1, path: path, from: held.seconds, paused: false)
        XCTAssertTrue(finished(log, 1, timeout: 6))
        engine.shutdown()
        XCTAssertEqual((pcm.recording().count - streamOneBytes) / 4, source.frames - heldFrame)
    }

    // MARK: Pause

    func testOutputPausesOnADeviceThatCanAndRefusesOnOneThatCannot() throws {
        for refuses in [false, true] {
            let pcm = try TestPCM(directory: scratch.path("device-\(refuses)"), speed: 1)
            try pcm.set(refuses ? [.nopause] : [])
            let output = AlsaOutput(device: pcm.name, configText: pcm.configText)
            try output.open(format: AudioFormat(sampleRate: 44100, channels: 2, sample: .int16))
            let frames = [UInt8](repeating: 0, count: 4410 * 4)
            XCTAssertEqual(try frames.withUnsafeBytes { try output.write($0.baseAddress!, frames: 4410) }, 4410)
            if refuses {
                XCTAssertThrowsError(try output.pause(true)) { XCTAssertEqual(($0 as? OutputError)?.kind, .unsupported) }
            } else {
                try output.pause(true)
                XCTAssertEqual(pcm.events(named: "pause").count, 1)
                try output.pause(false)
            }
            output.close()
        }
    }

    func testPauseOnADeviceThatCannotPauseIsExact() throws {
        let pcm = try device(speed: 1, faults: [.nopause])
        let path = try scratch.audio(.wav16, frames: 44100 * 2)
        let source = try TestAudio.decode(path: path)
        let log = ReportLog()
        let engine = engine(pcm, log)
        defer { engine.shutdown() }
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(waitHeard(engine, 0.5))
        engine.pause()
        // Paused once the device stopped (dropped, or played out after a fade) and the engine holds
        // the frame it stopped at.
        XCTAssertTrue(TestPCM.wait(timeout: 3) { !pcm.events(named: "stop").isEmpty }, "the device never stopped")
        let stop = try XCTUnwrap(pcm.events(named: "stop").first)
        let lastHeard = stop.heard / 4
        XCTAssertTrue(TestPCM.wait(timeout: 2) {
            abs(Int(((engine.position()?.seconds ?? 0) * 44100).rounded()) - lastHeard) <= self.period(pcm)
        }, "held \(String(describing: engine.position())), device stopped at frame \(lastHeard)")
        let held = try XCTUnwrap(engine.position())
        engine.resume()
        XCTAssertTrue(finished(log, 1, timeout: 6))
        engine.shutdown()
        let heldFrame = Int((held.seconds * 44100).rounded())
        let recording = pcm.recording()
        let opens = pcm.events(named: "params")
        let differing = differingRanges(recording, source.bytes, bytesPerFrame: 4)
        print("jukeboxtest nopause: device stopped at frame \(lastHeard), engine held \(heldFrame) "
              + "(\(heldFrame - lastHeard) frames), \(opens.count) stream(s); frames differing from the source: \(differing)")
        if opens.count >= 2 {
            // Dropped and rewritten: the second stream is the rest of the track from the held frame.
            let secondStart = opens[1].recorded
            XCTAssertEqual((recording.count - secondStart) / 4, source.frames - heldFrame)
            assertSameAudio(Array(recording[(secondStart + fadeFrames * 4)...]),
                            source.bytes(frames: (heldFrame + fadeFrames)..<source.frames), bytesPerFrame: 4, "after the resume")
        } else {
            // Kept open (faded out, played out, faded in): nothing lost or repeated, and untouched
            // away from the fades around the held frame.
            XCTAssertEqual(recording.count, source.bytes.count)
            for range in differing {
                XCTAssertTrue(range.lowerBound >= heldFrame - 2 * fadeFrames && range.upperBound <= heldFrame + 2 * fadeFrames,
                              "frames \(range) differ, away from the pause at \(heldFrame)")
            }
        }
        XCTAssertEqual(log.tracks.count, 2, "\(log.tracks)")
    }
}

/// The frame ranges where `a` and `b` differ (for messages).
private func differingRanges(_ a: [UInt8], _ b: [UInt8], bytesPerFrame: Int) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    let frames = min(a.count, b.count) / bytesPerFrame
    var start: Int?
    for f in 0..<frames {
        let same = a[(f * bytesPerFrame)..<((f + 1) * bytesPerFrame)] == b[(f * bytesPerFrame)..<((f + 1) * bytesPerFrame)]
        if !same && start == nil { start = f }
        if same, let s = start { ranges.append(s..<f); start = nil }
    }
    if let s = start { ranges.append(s..<frames) }
    return ranges
}

/// CPU seconds (user + system) this process has used.
private func processCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

// SPDX-License-Identifier: MIT
import Foundation
import JukeboxAudio
import JukeboxFixtures
import XCTest

/// End to end through libasound: the engine plays to the ALSA `file` plugin, which records the exact
/// bytes it is given, and the recording is compared with libsndfile's own decode of the source.
final class AlsaPlaybackTests: XCTestCase {
    private func record(_ scratch: Scratch, _ body: (AudioEngine, ReportLog) throws -> Void) rethrows -> (raw: [UInt8], log: ReportLog) {
        let raw = scratch.path("recorded.raw")
        let (log, engine) = logAndEngine { AlsaOutput(device: fileDevice(raw)) }
        defer { engine.shutdown() }
        try body(engine, log)
        // shutdown closes the device, which flushes the plugin's buffer to the file.
        engine.shutdown()
        return (scratch.bytes(raw), log)
    }

    func testEveryFormatIsRecordedBitForBit() throws {
        for kind in TestAudio.Kind.allCases {
            let scratch = try Scratch()
            let path = try scratch.audio(kind, frames: 20000)
            let source = try TestAudio.decode(path: path)
            let (raw, log) = record(scratch) { engine, log in
                engine.play(id: 1, path: path, from: 0, paused: false)
                XCTAssertTrue(log.wait(for: .finished(id: 1)), "\(kind)")
            }
            assertSameAudio(raw, source.bytes[...], bytesPerFrame: source.bytesPerFrame, "\(kind)")
            XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)], "\(kind)")
            XCTAssertEqual(log.all.filter { $0 == .firstSample }.count, 1, "\(kind)")
        }
    }

    func testGaplessContinuationAddsAndLosesNoFrame() throws {
        let scratch = try Scratch()
        let first = try scratch.audio(.flac, frames: 10001, name: "a")
        let second = try scratch.audio(.wav16, frames: 7777, name: "b")
        let a = try TestAudio.decode(path: first)
        let b = try TestAudio.decode(path: second)
        let (raw, log) = record(scratch) { engine, log in
            // Start paused so the next track is set before the first can end (the file plugin does not pace).
            engine.play(id: 1, path: first, from: 0, paused: true)
            engine.setNext(id: 2, path: second)
            engine.resume()
            XCTAssertTrue(log.wait(for: .finished(id: 2)))
        }
        assertSameAudio(raw, (a.bytes + b.bytes)[...], bytesPerFrame: a.bytesPerFrame, "A then B")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1, next: 2), .started(id: 2), .finished(id: 2)])
    }

    func testClearNextEndsAfterTheCurrentTrack() throws {
        let scratch = try Scratch()
        let first = try scratch.audio(.wav16, frames: 5000, name: "a")
        let second = try scratch.audio(.wav16, frames: 5000, name: "b")
        let a = try TestAudio.decode(path: first)
        let (raw, log) = record(scratch) { engine, log in
            engine.play(id: 1, path: first, from: 0, paused: true)
            engine.setNext(id: 2, path: second)
            engine.clearNext()
            engine.resume()
            XCTAssertTrue(log.wait(for: .finished(id: 1)))
        }
        assertSameAudio(raw, a.bytes[...], bytesPerFrame: a.bytesPerFrame, "A only")
        XCTAssertEqual(log.tracks, [.started(id: 1), .finished(id: 1)])
    }

    func testPlayFromAnOffsetStartsAtThatExactFrame() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav24, frames: 20000)
        let source = try TestAudio.decode(path: path)
        let (raw, log) = record(scratch) { engine, log in
            engine.play(id: 9, path: path, from: 5000.0 / 44100.0, paused: false)
            XCTAssertTrue(log.wait(for: .finished(id: 9)))
        }
        // Starting inside a track fades in (AudioEngine.fadeFrames); every frame after that is exact.
        let fade = AudioEngine.fadeFrames(rate: 44100)
        XCTAssertEqual(raw.count, 15000 * source.bytesPerFrame)
        assertSameAudio(Array(raw.dropFirst(fade * source.bytesPerFrame)), source.bytes(frames: (5000 + fade)..<20000),
                        bytesPerFrame: source.bytesPerFrame, "from frame 5000")
        XCTAssertEqual(log.tracks, [.started(id: 9), .finished(id: 9)])
    }

    func testMissingFileReportsFailedAndLeavesTheEngineIdle() throws {
        let scratch = try Scratch()
        let (raw, log) = record(scratch) { engine, log in
            engine.play(id: 3, path: scratch.path("gone.flac"), from: 0, paused: false)
            XCTAssertTrue(log.wait { if case .failed = $0 { true } else { false } })
            XCTAssertNil(engine.position())
        }
        XCTAssertEqual(log.all, [.failed(id: 3, reason: "no such file or directory")])
        XCTAssertTrue(raw.isEmpty)
    }

    func testUnknownDeviceReportsDeviceUnavailableAndKeepsThePosition() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 44100)
        let (log, engine) = logAndEngine { AlsaOutput(device: "jukebox_no_such_device") }
        defer { engine.shutdown() }
        engine.play(id: 4, path: path, from: 0.5, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable = $0 { true } else { false } })
        guard case .deviceUnavailable(let error) = log.all.first else { return XCTFail("\(log.all)") }
        XCTAssertEqual(error.kind, .lost)
        XCTAssertTrue(error.message.contains("jukebox_no_such_device"), error.message)
        XCTAssertEqual(log.all.count, 1)
        let position = engine.position()
        XCTAssertEqual(position?.id, 4)
        XCTAssertEqual(position?.seconds ?? -1, 0.5, accuracy: 0.001)
    }

    func testMissingCardReportsDeviceUnavailable() throws {
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 1000, channels: 1)
        let (log, engine) = logAndEngine { AlsaOutput(device: "hw:CARD=JukeboxMissing") }
        defer { engine.shutdown() }
        engine.play(id: 5, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait { if case .deviceUnavailable(let e) = $0 { e.kind == .lost } else { false } }, "\(log.all)")
    }

    func testHasSoundCardAgreesWithProc() {
        let proc = FileManager.default.fileExists(atPath: "/proc/asound/cards")
            && !((try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8)) ?? "").contains("no soundcards")
        XCTAssertEqual(AlsaOutput.hasSoundCard(), proc)
    }
}

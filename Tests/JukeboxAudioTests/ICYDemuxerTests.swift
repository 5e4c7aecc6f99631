// SPDX-License-Identifier: MIT
import JukeboxAudio
import JukeboxCore
import Foundation
import XCTest

/// `ICYDemuxer` and its title parsing: pure, no network.
final class ICYDemuxerTests: XCTestCase {
    /// An ICY body: `audio` with a metadata block (`texts`, cycled) after every `interval` bytes.
    private func body(_ audio: [UInt8], interval: Int, texts: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        var block = 0
        while index < audio.count {
            let run = audio[index..<min(audio.count, index + interval)]
            out += run
            index += run.count
            if run.count == interval {
                var text = texts[block % texts.count]
                block += 1
                text += [UInt8](repeating: 0, count: (16 - text.count % 16) % 16)
                out.append(UInt8(text.count / 16))
                out += text
            }
        }
        return out
    }

    func testAudioComesOutWholeWhateverTheReadSizes() {
        let seed = ProcessInfo.processInfo.environment["JUKEBOX_ICY_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("ICYDemuxerTests seed: \(seed) (JUKEBOX_ICY_SEED=\(seed) replays it)")
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<50 {
            let interval = Int(rng.next() % 3000) + 1
            let audio = (0..<Int(rng.next() % 20000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let texts: [[UInt8]] = [Array("StreamTitle='A';".utf8), [], Array("StreamTitle='B';".utf8)]
            let wire = body(audio, interval: interval, texts: texts)
            var demuxer = ICYDemuxer(metaInterval: interval)
            var out: [UInt8] = []
            var titles: [String] = []
            var index = 0
            while index < wire.count {
                let step = min(wire.count - index, Int(rng.next() % 5000) + 1)
                wire[index..<(index + step)].withUnsafeBytes { raw in
                    demuxer.feed(raw, audio: { out += $0 }, metadata: { titles.append(ICYDemuxer.streamTitle($0) ?? "-") })
                }
                index += step
            }
            XCTAssertEqual(out, audio, "seed \(seed), interval \(interval)")
            // Blocks alternate A, (empty: no callback), B: every title seen is one of them, in turn.
            let blocks = audio.count / interval
            let expected = (0..<blocks).compactMap { [Optional("A"), nil, Optional("B")][$0 % 3] }
            XCTAssertEqual(titles, expected, "seed \(seed)")
            XCTAssertFalse(titles.contains("-"), "an empty block reached the metadata callback: seed \(seed)")
        }
    }

    func testTitlesAreCleanedAndBounded() {
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='Artist - Title';StreamUrl='x';".utf8)), "Artist - Title")
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='Rock 'n' Roll';".utf8)), "Rock 'n' Roll")
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='  \u{1B}[2J\u{07}Clear\r\n ';".utf8)), "[2JClear")
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='';".utf8)), "")
        XCTAssertNil(ICYDemuxer.streamTitle(Array("StreamUrl='x';".utf8)))
        // Latin-1 from an older server, and a cut-off block.
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='Caf".utf8) + [0xE9] + Array("';".utf8)), "Café")
        XCTAssertEqual(ICYDemuxer.streamTitle(Array("StreamTitle='Unfinished".utf8)), "Unfinished")
        let long = ICYDemuxer.streamTitle(Array(("StreamTitle='" + String(repeating: "x", count: 4000) + "';").utf8))
        XCTAssertEqual(long?.count, ICYDemuxer.maxTitleCharacters)
    }
}

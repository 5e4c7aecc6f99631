// SPDX-License-Identifier: MIT
import JukeboxCore

/// Tokens each parser cares about: the randomized mode splices them into inputs, and
/// `jukebox-fuzz dict HARNESS` prints them for libFuzzer's `-dict=`.
extension Harness {
    var tokens: [String] {
        switch self {
        case .command, .runtime:
            return ["status", "--json", "play", "pause", "toggle", "stop", "next", "prev", "previous", "seek",
                    "vol", "volume", "shuffle", "on", "off", "repeat", "one", "all", "queue", "add", "load", "clear",
                    "save", "interrupt", "yield", "begin", "end", "diag", "log", "events", "version", "help", "?", "sleep", "card", "assign", "speed", "default", "1.25", "0.75", "2x", "podcast",
                    " ", "\t", "\r", "\n", "\r\n", "+", "-", ":", ".", "0", "1", "59", "60", "1:00", "1:59:59.5",
                    "100", "101", "-100", "1000", "1001", "9223372036854775807", "-9223372036854775808",
                    "9223372036854775808", "99999999999999999999", "1e308", "0.000001",
                    "\u{1B}", "\u{1B}[", "\u{1B}[A", "\u{1B}O", "\u{1B}[1;5C", "\u{03}", "\u{15}", "\u{7F}", "\u{08}",
                    "\u{00}", "é", "€", "😀", "\u{85}", "\u{2028}"]
        case .config:
            return ["{", "}", "[", "]", "\"", ":", ",", "null", "true", "false", "0", "-1", "1e400", "-0",
                    "9223372036854775808", "0.5", "\"device\"", "\"audio\"", "\"alsa\"", "\"null\"", "\"state\"",
                    "\"music\"", "\"resume\"", "\"playing\"", "\"paused\"", "\"saveInterval\"", "\"volumeMin\"",
                    "\"volumeMax\"", "\"volumeStep\"", "\"seekStep\"", "\"logLevel\"", "\"debug\"", "\"socket\"",
                    "\"releaseDelay\"", "\"resumeAfterDeviceLoss\"", "\"bootVolume\"", "\"mixer\"", "\"mixerCard\"",
                    "\"resumeRewind\"", "\"console\"", "\"consoleBaud\"", "115200", "\"chime\"", "\"board\"",
                    "\"gpio\"", "\"chip\"", "\"bias\"", "\"pull-up\"", "\"activeLow\"", "\"debounceMs\"",
                    "\"buttons\"", "\"playPause\"", "\"next\"", "\"encoder\"", "\"a\"", "\"b\"", "\"push\"",
                    "\"stepsPerDetent\"", "\"acceleration\"", "\"input\"", "\"*\"", "\"display\"", "\"type\"",
                    "\"ssd1306\"", "\"hd44780-16x2\"", "\"terminal\"", "\"bus\"", "\"address\"", "39", "\"pins\"",
                    "\"powerCommand\"", "\"output\"", "\"snapcast\"", "\"pipe\"", "\"/run/snapserver/jukebox\"",
                    "\"speeds\"", "1.25", "\"sampleFormat\"", "\"44100:16:2\"", "\"48000:24:8\"", "\\u0000", "\\ud800", "\\\"", "\"\""]
        case .state:
            return ["{", "}", "[", "]", "\"", ":", ",", "null", "true", "false", "0", "-1", "1", "2", "1e400",
                    "1e300", "-0", "NaN", "9223372036854775807", "18446744073709551616", "0.5", "\"version\"",
                    "\"tracks\"", "\"order\"", "\"current\"", "\"position\"", "\"phase\"", "\"playing\"", "\"paused\"",
                    "\"stopped\"", "\"shuffle\"", "\"shuffleSeed\"", "\"repeat\"", "\"one\"", "\"all\"", "\"volume\"",
                    "\"path\"", "\"title\"", "\"artist\"", "\"album\"", "\"trackNumber\"", "\"discNumber\"",
                    "\"duration\"", "\"/m/a.flac\"", "\"\"", "\\u0000", "\\ud800"]
        case .hls:
            return ["#EXTM3U\n", "#EXT-X-TARGETDURATION:", "#EXT-X-MEDIA-SEQUENCE:", "#EXTINF:", "#EXT-X-ENDLIST",
                    "#EXT-X-DISCONTINUITY", "#EXT-X-KEY:METHOD=AES-128,URI=\"k\"", "#EXT-X-MAP:URI=\"i.mp4\"",
                    "#EXT-X-BYTERANGE:1@0", "#EXT-X-STREAM-INF:BANDWIDTH=", "CODECS=\"mp4a.40.2\"", "AUDIO=\"a\"",
                    "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",DEFAULT=YES,URI=\"x.m3u8\"", ",", "\n", "\r\n", "\"",
                    "0", "1", "-1", "1e308", "nan", "9223372036854775807", "../", "./", "/", "//h/", "?", "#", "s.ts", "http://x/"]
        case .ts:
            // Packet starts, table ids, PES starts, stream types (AAC, MP3, ID3), an ID3 header.
            return ["\u{47}\u{40}\u{00}\u{10}", "\u{47}\u{41}\u{00}\u{10}", "\u{47}\u{41}\u{01}\u{30}", "\u{00}\u{00}\u{01}\u{C0}",
                    "\u{00}\u{00}\u{01}\u{BD}", "\u{0F}", "\u{03}", "\u{15}", "ID3\u{04}\u{00}\u{00}", "TIT2", "\u{FF}\u{F1}"]
        case .fmp4:
            // Box types of init sections and fragments, full-box flags, a 64-bit size, an AAC-LC config.
            return ["moov", "trak", "mdia", "hdlr", "soun", "minf", "stbl", "stsd", "mp4a", "esds", "mvex", "trex",
                    "styp", "moof", "traf", "tfhd", "trun", "mdat", "\u{00}\u{02}\u{02}\u{01}", "\u{00}\u{00}\u{0F}\u{01}",
                    "\u{00}\u{00}\u{00}\u{01}", "\u{FF}\u{FF}\u{FF}\u{FF}", "\u{12}\u{10}"]
        case .feed:
            return FeedHarness.tokens
        }
    }

    /// Inputs the randomized mode builds from scratch (besides mutating the corpus).
    func generate(_ random: inout SeededGenerator) -> [UInt8] {
        let words = tokens
        var out: [UInt8] = []
        switch self {
        case .command, .runtime:
            for _ in 0..<random.below(12) {
                out += Array(words[random.below(words.count)].utf8)
                out.append(random.below(4) == 0 ? 0x0A : 0x20)
            }
        case .config, .state:
            // A JSON-ish object: keys and values from the dictionary, now and then a nested one.
            out += Array("{".utf8)
            for i in 0..<random.below(8) {
                if i > 0 { out += Array(",".utf8) }
                out += Array(words.filter { $0.hasPrefix("\"") }[random.below(words.filter { $0.hasPrefix("\"") }.count)].utf8)
                out += Array(":".utf8)
                switch random.below(5) {
                case 0: out += Array("[\(words[random.below(words.count)]),{\"path\":\"/m/x\",\"duration\":\(words[random.below(words.count)])}]".utf8)
                case 1: out += Array("{\(words[random.below(words.count)]):\(words[random.below(words.count)])}".utf8)
                default: out += Array(words[random.below(words.count)].utf8)
                }
            }
            out += Array("}".utf8)
        case .hls:
            out += Array("#EXTM3U\n".utf8)
            for _ in 0..<random.below(16) {
                out += Array(words[random.below(words.count)].utf8)
                if random.below(3) == 0 { out += Array(String(random.below(100_000)).utf8) }
                out.append(0x0A)
            }
        case .feed:
            // A feed's frame with items made of the tokens, now and then one left open.
            out += Array("<rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel>".utf8)
            for _ in 0..<random.below(8) {
                out += Array("<item>".utf8)
                for _ in 0..<random.below(6) { out += Array(words[random.below(words.count)].utf8) }
                if random.below(5) != 0 { out += Array("</item>".utf8) }
            }
            out += Array("</channel></rss>".utf8)
        case .fmp4:
            // A seed fragment's bytes (the corpus) mutated do most; from scratch, boxes of the tokens.
            for _ in 0..<random.below(12) {
                let token = Array(words[random.below(words.count)].unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
                let size = random.below(3) == 0 ? random.below(1 << 16) : 8 + token.count
                out += [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + token
            }
        case .ts:
            for _ in 0..<random.below(12) {
                var packet = [UInt8](repeating: 0xFF, count: 188)
                let token = Array(words[random.below(words.count)].unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
                packet.replaceSubrange(0..<min(188, token.count), with: token.prefix(188))
                for _ in 0..<random.below(8) { packet[random.below(188)] = UInt8(truncatingIfNeeded: random.below(256)) }
                out += packet
            }
        }
        return out
    }
}

// SPDX-License-Identifier: MIT
import CSndfile
import CTagLib
#if canImport(Glibc)
import Glibc
#endif

/// Makes the demo's music: a few short tagged tunes synthesised on the spot, written with
/// libsndfile in three formats and tagged with TagLib, so `jukebox demo` needs no network and
/// the repository ships no audio.
public enum DemoTracks {
    /// One demo tune.
    struct Tune {
        var file: String
        var format: Int32
        var title: String
        var notes: [(midi: Int, beats: Double)]
        var beat: Double
    }

    static let tunes: [Tune] = [
        Tune(file: "01 Morning Bell.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), title: "Morning Bell",
             notes: [(72, 1), (76, 1), (79, 1), (84, 2), (79, 1), (76, 1), (72, 3), (74, 1), (77, 1), (81, 2), (79, 4)],
             beat: 0.45),
        Tune(file: "02 Little Waltz.ogg", format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), title: "Little Waltz",
             notes: [(67, 1), (71, 1), (74, 1), (72, 2), (71, 1), (69, 3), (67, 1), (69, 1), (71, 1), (67, 3)],
             beat: 0.5),
        Tune(file: "03 Lullaby.wav", format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), title: "Lullaby",
             notes: [(64, 2), (67, 1), (64, 2), (62, 1), (60, 3), (62, 2), (64, 1), (60, 4)],
             beat: 0.55),
    ]

    /// Writes the demo tunes into `folder` (created if missing) and returns their paths in play
    /// order. Existing files are rewritten, so a damaged earlier demo heals itself.
    public static func make(in folder: String) throws(DecodeError) -> [String] {
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw DecodeError(path: folder, reason: "cannot create folder: \(String(cString: strerror(errno)))")
        }
        var paths: [String] = []
        for tune in tunes {
            let path = folder + "/" + tune.file
            try write(tune, to: path)
            tag(path, title: tune.title)
            paths.append(path)
        }
        return paths
    }

    static func write(_ tune: Tune, to path: String) throws(DecodeError) {
        let rate = 44_100
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = 2
        info.format = tune.format
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw DecodeError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        // RIFF INFO strings for players that read WAV tags only from there.
        sf_set_string(file, Int32(SF_STR_TITLE), tune.title)
        sf_set_string(file, Int32(SF_STR_ARTIST), "jukebox demo")
        var samples: [Float] = []
        for (midi, beats) in tune.notes {
            let frequency = 440 * pow(2, Double(midi - 69) / 12)
            let frames = Int(beats * tune.beat * Double(rate))
            for i in 0..<frames {
                let t = Double(i) / Double(rate)
                // A soft bell: fundamental plus two overtones, quick attack, exponential decay.
                let envelope = min(1, t * 200) * exp(-3 * t / (beats * tune.beat))
                let v = sin(2 * .pi * frequency * t) + 0.3 * sin(4 * .pi * frequency * t) + 0.1 * sin(6 * .pi * frequency * t)
                let s = Float(0.25 * envelope * v)
                samples.append(s)
                samples.append(s * 0.9)
            }
        }
        samples += [Float](repeating: 0, count: rate / 2 * 2)  // half a second of rest
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t($0.count / 2)) }
        if written != samples.count / 2 {
            throw DecodeError(path: path, reason: String(cString: sf_strerror(file)))
        }
    }

    static func tag(_ path: String, title: String) {
        guard let file = taglib_file_new(path) else { return }
        defer { taglib_file_free(file) }
        guard let tag = taglib_file_tag(file) else { return }
        taglib_tag_set_title(tag, title)
        taglib_tag_set_artist(tag, "jukebox demo")
        taglib_tag_set_album(tag, "Demo Tunes")
        taglib_file_save(file)
    }
}

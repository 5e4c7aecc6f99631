// SPDX-License-Identifier: MIT
import CSndfile
import Glibc
import JukeboxSystem

/// Makes the demo's music: a few short tagged tunes synthesised on the spot, written and tagged
/// with libsndfile in three formats, so `jukebox demo` needs no network and
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
    /// order. Existing files are replaced, so a damaged earlier demo heals itself. No symlink is
    /// ever followed: each name is unlinked and created anew (`O_CREAT|O_EXCL|O_NOFOLLOW`), so a
    /// link another user planted under a tune's name goes and its target is never written.
    public static func make(in folder: String) throws(DecodeError) -> [String] {
        if mkdir(cPath(folder), 0o755) != 0 && errno != EEXIST {
            throw DecodeError(path: folder, reason: "cannot create folder: \(errnoText(errno))")
        }
        var paths: [String] = []
        for tune in tunes {
            let path = folder + "/" + tune.file
            try write(tune, to: path)
            paths.append(path)
        }
        return paths
    }

    /// A new folder for the tunes that only this user can enter: `mkdtemp` (mode 0700) under
    /// `$TMPDIR`, else /tmp, named `jukebox-demo-XXXXXX`.
    public static func makePrivateFolder() throws(DecodeError) -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base + "/jukebox-demo-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw DecodeError(path: base, reason: "cannot create a folder: \(errnoText(errno))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the tunes `make` wrote into `folder`, then the folder if that left it empty.
    public static func remove(from folder: String) {
        for tune in tunes { unlink(cPath(folder + "/" + tune.file)) }
        rmdir(cPath(folder))
    }

    static func write(_ tune: Tune, to path: String) throws(DecodeError) {
        let rate = 44_100
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = 2
        info.format = tune.format
        unlink(cPath(path))  // a planted link goes, its target stays untouched
        let fd = open(cPath(path), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DecodeError(path: path, reason: "cannot create: \(errnoText(errno))") }
        defer { close(fd) }
        guard let file = sf_open_fd(fd, Int32(SFM_WRITE), &info, 0) else {
            throw DecodeError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        // Tags through libsndfile, written with the audio into the file opened above (Vorbis
        // comments in FLAC and Ogg, RIFF INFO in WAV; TagLib reads all three): tagging by path
        // afterwards would open the name again, and that name could be a link by then.
        sf_set_string(file, Int32(SF_STR_TITLE), tune.title)
        sf_set_string(file, Int32(SF_STR_ARTIST), "jukebox demo")
        sf_set_string(file, Int32(SF_STR_ALBUM), "Demo Tunes")
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
}

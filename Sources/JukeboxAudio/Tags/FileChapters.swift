// SPDX-License-Identifier: MIT

/// The chapters of a file that is not MP4 (whose chapters `MP4Movie` reads), by its first bytes:
/// an ID3v2 tag (`ID3Chapters`: an MP3's `CHAP` frames), a FLAC file or an Ogg stream
/// (`VorbisChapters`: `CHAPTERnnn` comments). Titles cleaned as every tag (`TagText.clean`).
public enum FileChapters {
    /// What `path` says of its chapters: the chapters, none, or why they could not be read.
    public static func outcome(path: String) -> Result<[MP4Chapter], MP4Error> {
        do throws(MP4Error) {
            let file = try MP4File(path: path)
            return .success(try read(file))
        } catch {
            return .failure(error)
        }
    }

    /// The chapters of `path`; empty when it has none or they cannot be read.
    public static func read(path: String) -> [MP4Chapter] {
        (try? outcome(path: path).get()) ?? []
    }

    /// The chapters of the bytes behind `source`.
    static func read(_ source: MP4ByteSource) throws(MP4Error) -> [MP4Chapter] {
        guard source.size >= 4 else { return [] }
        let head = try source.read(at: 0, count: 4)
        let chapters: [MP4Chapter]
        if head.starts(with: "ID3".utf8) {
            chapters = try ID3Chapters.read(source)
        } else if head.elementsEqual("fLaC".utf8) {
            chapters = try VorbisChapters.fromFLAC(source)
        } else if head.elementsEqual("OggS".utf8) {
            chapters = try VorbisChapters.fromOgg(source)
        } else {
            chapters = []
        }
        return chapters.map { MP4Chapter(start: $0.start, title: TagText.clean($0.title)) }
    }
}

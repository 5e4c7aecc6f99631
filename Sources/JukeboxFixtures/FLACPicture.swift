// SPDX-License-Identifier: MIT
import Foundation

extension TestAudio {
    /// Puts a PICTURE metadata block (a front cover: type 3) right after the STREAMINFO of the FLAC
    /// file at `path`, as `metaflac --import-picture-from` does, so tests need no tool for it.
    public static func embedPicture(inFLAC path: String, mimeType: String, bytes: [UInt8]) throws {
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard file.count > 42, Array(file[0..<4]) == Array("fLaC".utf8), file[4] & 0x7F == 0 else {
            throw Failure(description: "\(path): not a FLAC file starting with its STREAMINFO")
        }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let mime = Array(mimeType.utf8)
        let body = u32(3) + u32(mime.count) + mime + u32(0) + u32(0) + u32(0) + u32(0) + u32(0) + u32(bytes.count) + bytes
        // The picture takes STREAMINFO's "last block" flag, which STREAMINFO then gives up.
        let last = file[4] & 0x80
        file[4] &= 0x7F
        let header: [UInt8] = [last | 6, UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)]
        file.insert(contentsOf: header + body, at: 8 + 34)
        try Data(file).write(to: URL(fileURLWithPath: path))
    }
}

// SPDX-License-Identifier: MIT

/// A minimal fragmented MP4 init section (the `fmp4` harness reads every input with it): one
/// AAC-LC sound track, id 1, 44.1 kHz stereo, no default sample size.
enum FMP4Seed {
    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] {
        let size = content.count + 8
        let head: [UInt8] = [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
        return head + Array(type.utf8) + content
    }

    static var initSection: [UInt8] {
        let zeros4: [UInt8] = [0, 0, 0, 0]
        let tkhd = box("tkhd", zeros4 + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 1] + [UInt8](repeating: 0, count: 68))
        let hdlr = box("hdlr", zeros4 + zeros4 + Array("soun".utf8) + [UInt8](repeating: 0, count: 13))
        // ES_Descriptor → DecoderConfigDescriptor (MPEG-4 audio) → DecoderSpecificInfo (AAC-LC, 44.1 kHz, 2 ch).
        let specific: [UInt8] = [5, 2, 0x12, 0x10]
        let decoder: [UInt8] = [4, UInt8(13 + specific.count), 0x40, 0x15] + [UInt8](repeating: 0, count: 11) + specific
        let es: [UInt8] = [3, UInt8(3 + decoder.count), 0, 1, 0] + decoder
        let esds = box("esds", zeros4 + es)
        let fields: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 16, 0, 0, 0, 0, 0xAC, 0x44, 0, 0]
        let mp4a = box("mp4a", fields + esds)
        let stsd = box("stsd", zeros4 + [0, 0, 0, 1] + mp4a)
        let stbl = box("stbl", stsd)
        let mdia = box("mdia", hdlr + box("minf", stbl))
        let trex = box("trex", zeros4 + [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        return box("ftyp", Array("iso6".utf8) + zeros4) + box("moov", box("trak", tkhd + mdia) + box("mvex", trex))
    }
}

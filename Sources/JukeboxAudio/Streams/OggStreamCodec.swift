// SPDX-License-Identifier: MIT
import COgg
import COpus
import Glibc

/// Ogg Vorbis and Ogg Opus through libogg's page sync and the codecs' packet APIs (libvorbis's
/// `vorbis_synthesis_*`, libopus's multistream decoder).
///
/// Not vorbisfile, opusfile or libsndfile: they seek and scan a source to learn its length, which
/// a live stream does not have. Here bytes go into `ogg_sync`, pages come out, and the packets of
/// the one logical stream being played go to its decoder.
///
/// Chained streams (Icecast starts a new logical stream, with new headers, at each track or
/// metadata change): a beginning-of-stream page of Vorbis or Opus replaces the stream being
/// played; the format is reported again only when it differs. Other logical streams (a skeleton
/// or video beside the audio) are skipped. Bounded memory: the sync buffer holds at most one page
/// (≤ 64 KiB) beyond what was fed, and a packet that grows past `packetLimit` fails the stream.
/// Corrupt audio packets are skipped. Output is 32-bit float at the stream's rate and channels
/// (Opus: 48 kHz, its pre-skip dropped and its end trimmed as the last page says).
///
/// Titles: Icecast puts no ICY metadata into an Ogg mount; a track's title is in its link's
/// comment header (Vorbis comment, OpusTags). Each link's TITLE and ARTIST become a title shaped as
/// an ICY `StreamTitle` ("ARTIST - TITLE"), handed out by `takeTitle` once the header is read.
final class OggStreamCodec: StreamCodec {
    private let sync: UnsafeMutablePointer<ogg_sync_state>
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private let page: UnsafeMutablePointer<ogg_page>
    private let packet: UnsafeMutablePointer<ogg_packet>
    private var closed = false
    /// The serial of the logical stream being played; nil before the first one.
    private var serial: Int32?
    /// Its decoder (created at its first page).
    private var voice: (any OggVoice)?
    /// The format last reported.
    private var reported: AudioFormat?
    /// Beginning pages of logical streams that are neither Vorbis nor Opus: serial → what they are.
    private var others: [Int32: String] = [:]
    private var failure: String?
    /// The title of the latest link's comment header, not yet taken.
    private var newTitle: String?
    /// Bytes of pages that carried the played stream's header packets (StreamCodec's contract:
    /// not counted against the sync limit, as a cover picture in a Vorbis comment or OpusTags can
    /// be far larger than it), at most three packets' worth in all so that a stream of nothing but
    /// new links' headers is still refused in the end.
    private(set) var headerBytes = 0

    /// The most bytes one packet may gather across pages before the stream is refused: far above
    /// any audio packet or header (a Vorbis comment with a cover picture stays well below).
    static let packetLimit = 4 << 20

    init() {
        sync = .allocate(capacity: 1)
        sync.initialize(to: ogg_sync_state())
        ogg_sync_init(sync)
        stream = .allocate(capacity: 1)
        stream.initialize(to: ogg_stream_state())
        ogg_stream_init(stream, 0)
        page = .allocate(capacity: 1)
        page.initialize(to: ogg_page())
        packet = .allocate(capacity: 1)
        packet.initialize(to: ogg_packet())
    }

    deinit {
        close()
        sync.deallocate()
        stream.deallocate()
        page.deallocate()
        packet.deallocate()
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !closed, let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard let target = ogg_sync_buffer(sync, bytes.count) else { return }
        target.update(from: base.assumingMemoryBound(to: CChar.self), count: bytes.count)
        ogg_sync_wrote(sync, bytes.count)
    }

    func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> StreamCodecResult {
        if let failure { return .failed(failure) }
        guard !closed else { return .ended }
        let out = buffer.assumingMemoryBound(to: Float.self)
        while true {
            if let voice, let format = voice.format {
                if reported != format {
                    reported = format
                    return .format(format)
                }
                let count = voice.read(into: out, frames: frames)
                if count > 0 { return .frames(count) }
            }
            if serial != nil, let voice {
                let result = ogg_stream_packetout(stream, packet)
                if result == 1 {
                    if let reason = voice.take(packet) { return fail(reason) }
                    if let title = voice.takeTitle() { newTitle = title }
                    continue
                }
                // -1: pages were lost (a gap in the sequence): the next whole packet goes on.
                if result < 0 { continue }
            }
            let result = ogg_sync_pageout(sync, page)
            if result == 0 { return .needMore }
            if result < 0 { continue }  // bytes skipped up to the next page's capture pattern
            if let reason = takePage() { return fail(reason) }
        }
    }

    /// The title of the link whose comment header was read last ("ARTIST - TITLE", TITLE or ARTIST
    /// alone, cleaned as an ICY title), once; nil when none came since the last call (a link
    /// without either tag gives none).
    func takeTitle() -> String? {
        defer { newTitle = nil }
        return newTitle
    }

    /// The stream's nominal bitrate in kbit/s when its header says one (Vorbis); for Opus, whose
    /// header names none, the rate measured from the pages fed but not yet decoded
    /// (`measuredOpusBitrate`), once half a second of them came; else nil.
    var nominalBitrate: Int? {
        if let named = voice?.nominalBitrate { return named }
        guard voice is OpusVoice else { return nil }
        if opusBitrate == nil { opusBitrate = measuredOpusBitrate() }
        return opusBitrate
    }

    /// An Opus link whose rate is not measured yet.
    var measuresBitrate: Bool { voice is OpusVoice && nominalBitrate == nil }

    /// The Opus link's bitrate as measured (kept once known; a new link measures again).
    private var opusBitrate: Int?

    /// The bitrate of the played logical stream's audio pages held in the sync buffer, not yet
    /// taken: the bytes of the pages after the first one with a granule position, over the
    /// samples (48 kHz) between their granule positions. nil below half a second. Reads the
    /// pages' headers only, in place: nothing is consumed, so decoding is untouched.
    private func measuredOpusBitrate() -> Int? {
        guard let serial, let data = sync.pointee.data else { return nil }
        let end = Int(sync.pointee.fill)
        var at = Int(sync.pointee.returned)
        var firstGranule: Int64?
        var bytes = 0
        while at + 27 <= end {
            guard data[at] == 0x4F, data[at + 1] == 0x67, data[at + 2] == 0x67, data[at + 3] == 0x53 else {
                at += 1  // not a page here: look for the next capture pattern
                continue
            }
            let segments = Int(data[at + 26])
            guard at + 27 + segments <= end else { break }
            var body = 0
            for index in 0..<segments { body += Int(data[at + 27 + index]) }
            let length = 27 + segments + body
            guard at + length <= end else { break }
            var granule: Int64 = 0
            for index in (0..<8).reversed() { granule = granule << 8 | Int64(data[at + 6 + index]) }
            var pageSerial: UInt32 = 0
            for index in (0..<4).reversed() { pageSerial = pageSerial << 8 | UInt32(data[at + 14 + index]) }
            if Int32(bitPattern: pageSerial) == serial, granule > 0 {
                if let first = firstGranule {
                    bytes += length
                    let span = granule - first
                    if span >= 24_000 {
                        return max(1, Int((Double(bytes) * 8 * 48 / Double(span)).rounded()))
                    }
                } else {
                    firstGranule = granule
                }
            }
            at += length
        }
        return nil
    }

    /// Bytes libogg holds for this codec (its sync buffer and the stream's packet buffer), for the
    /// tests of its bound.
    var heldBytes: Int { Int(sync.pointee.storage) + stream.pointee.body_storage }

    private func fail(_ reason: String) -> StreamCodecResult {
        failure = reason
        return .failed(reason)
    }

    /// Hands the page to the logical stream it belongs to, starting a new one at a beginning page
    /// of Vorbis or Opus. A failure reason when the stream cannot be played.
    private func takePage() -> String? {
        let pageSerial = ogg_page_serialno(page)
        if ogg_page_bos(page) != 0 {
            let body = UnsafeRawBufferPointer(start: page.pointee.body, count: max(0, page.pointee.body_len))
            let identity = Self.identify(body)
            switch identity {
            case .vorbis, .opus:
                // A chained stream's next link (or the first): the old decoder's PCM was all read.
                voice?.close()
                if identity == .opus { voice = OpusVoice() } else { voice = VorbisVoice() }
                opusBitrate = nil
                serial = pageSerial
                ogg_stream_reset_serialno(stream, pageSerial)
            case .other(let name):
                // Grouped streams put every beginning page before any header's next page: one that
                // comes after the audio's headers is a new link of another codec.
                if voice?.format != nil {
                    voice?.close()
                    voice = nil
                    serial = nil
                }
                if others.count < 16 { others[pageSerial] = name }
                return nil
            }
        }
        guard let serial, pageSerial == serial else {
            if serial == nil, let name = others[pageSerial] {
                return "the Ogg stream holds \(name), not Vorbis or Opus (streams: \(StreamCodecKind.supported))"
            }
            return nil  // another logical stream's page, or one before any beginning
        }
        guard ogg_stream_pagein(stream, page) == 0 else { return nil }
        if voice?.readingHeaders == true {
            headerBytes = min(headerBytes + page.pointee.header_len + page.pointee.body_len, 3 * Self.packetLimit)
        }
        if stream.pointee.body_fill - stream.pointee.body_returned > Self.packetLimit {
            return "an Ogg packet grew past \(Self.packetLimit >> 20) MiB: not a playable stream"
        }
        return nil
    }

    private enum Identity: Equatable {
        case vorbis, opus
        case other(String)
    }

    /// What a logical stream is, by its first packet (the start of its beginning page's body).
    private static func identify(_ body: UnsafeRawBufferPointer) -> Identity {
        // The first byte of some is a packet type (1: Vorbis identification, 0x7F: FLAC, 0x80: Theora).
        func starts(_ byte: UInt8?, _ text: String) -> Bool {
            var prefix: [UInt8] = byte.map { [$0] } ?? []
            prefix += Array(text.utf8)
            return body.starts(with: prefix)
        }
        if starts(1, "vorbis") { return .vorbis }
        if starts(nil, "OpusHead") { return .opus }
        if starts(0x7F, "FLAC") { return .other("FLAC") }
        if starts(nil, "Speex") { return .other("Speex") }
        if starts(nil, "fishead") { return .other("only a skeleton") }
        if starts(0x80, "theora") { return .other("Theora video") }
        return .other("an unknown codec")
    }

    func close() {
        guard !closed else { return }
        closed = true
        voice?.close()
        voice = nil
        ogg_stream_clear(stream)
        ogg_sync_clear(sync)
    }
}

/// The decoder of one logical stream: its header packets, then its audio packets.
private protocol OggVoice: AnyObject {
    /// The PCM shape, once the headers are read.
    var format: AudioFormat? { get }
    /// Header packets are still to come (the next page's bytes are headers, not audio).
    var readingHeaders: Bool { get }
    /// Takes the stream's next packet. A failure reason when the stream cannot be decoded (its
    /// headers); a corrupt audio packet is skipped.
    func take(_ packet: UnsafeMutablePointer<ogg_packet>) -> String?
    /// Copies up to `frames` decoded frames (interleaved) into `out`: 0 when it needs a packet.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int
    /// Frees the library's state. Called once.
    func close()
    /// The title of its comment header, once, after the header packet was taken (nil: none).
    func takeTitle() -> String?
    /// Its nominal bitrate (kbit/s) when the header says one.
    var nominalBitrate: Int? { get }
}

/// TITLE and ARTIST out of one link's comments (`NAME=value` fields, names case-insensitive,
/// values UTF-8), shaped as an ICY `StreamTitle`.
struct OggCommentTitle {
    private var title: [UInt8]?
    private var artist: [UInt8]?
    /// Bytes of a value kept: enough for `ICYDemuxer.maxTitleCharacters` characters of up to 4
    /// bytes, so a 1 MB comment is never copied whole.
    static let valueBytes = 4 * ICYDemuxer.maxTitleCharacters

    /// Takes one field; the first TITLE and the first ARTIST count.
    mutating func take(_ field: UnsafeRawBufferPointer) {
        if title == nil, let value = Self.value(of: "TITLE=", in: field) {
            title = value
        } else if artist == nil, let value = Self.value(of: "ARTIST=", in: field) {
            artist = value
        }
    }

    /// "ARTIST - TITLE", or the one there is, cleaned as an ICY title; nil when neither has text.
    var text: String? {
        Self.streamTitle(artist: artist.map { ICYDemuxer.cleanText($0, latin1Fallback: false) } ?? "",
                         title: title.map { ICYDemuxer.cleanText($0, latin1Fallback: false) } ?? "")
    }

    /// The now-playing text a stream's own tags make, shaped as an ICY `StreamTitle`, decided in
    /// one place: "ARTIST - TITLE", or the one there is (text already read from the comment),
    /// cleaned for a terminal; nil when neither has text.
    static func streamTitle(artist: String, title: String) -> String? {
        var text = title
        if !artist.isEmpty { text = title.isEmpty ? artist : artist + " - " + title }
        text = TagText.clean(text)
        return text.isEmpty ? nil : text
    }

    private static func value(of key: String, in field: UnsafeRawBufferPointer) -> [UInt8]? {
        let key = Array(key.utf8)
        guard field.count >= key.count else { return nil }
        for index in 0..<key.count {
            var byte = field[index]
            if byte >= 0x61 && byte <= 0x7A { byte -= 0x20 }  // ASCII upper case: names ignore case
            if byte != key[index] { return nil }
        }
        var value = Array(field[key.count..<min(field.count, key.count + valueBytes)])
        if field.count > key.count + valueBytes {
            // Cut: a character whose bytes were cut off would show as U+FFFD.
            while let last = value.last, last & 0xC0 == 0x80 { value.removeLast() }
            if let last = value.last, last >= 0xC0 { value.removeLast() }
        }
        return value
    }

    /// The title of an OpusTags packet (RFC 7845 5.2: "OpusTags", a vendor string and a count of
    /// fields, each 32-bit little-endian length first); every length is checked against the packet,
    /// and a field that overruns it ends the reading (the fields before it count).
    static func opusTags(_ packet: UnsafeRawBufferPointer) -> String? {
        var at = 8
        func length() -> Int? {
            guard packet.count - at >= 4 else { return nil }
            var value = 0
            for index in 0..<4 { value |= Int(packet[at + index]) << (8 * index) }
            at += 4
            return value
        }
        guard packet.count >= 8, let vendor = length(), vendor <= packet.count - at else { return nil }
        at += vendor
        guard let count = length() else { return nil }
        var tags = OggCommentTitle()
        // Bounded by the packet, whatever the count says: each field takes 4 bytes at least.
        for _ in 0..<count {
            guard let size = length(), size <= packet.count - at else { break }
            tags.take(UnsafeRawBufferPointer(rebasing: packet[at..<(at + size)]))
            at += size
        }
        return tags.text
    }
}

/// Vorbis: three header packets, then audio. libvorbis trims the stream's first and last blocks
/// itself from the packets' granule positions.
private final class VorbisVoice: OggVoice {
    private let info: UnsafeMutablePointer<vorbis_info>
    private let comment: UnsafeMutablePointer<vorbis_comment>
    private let dsp: UnsafeMutablePointer<vorbis_dsp_state>
    private let block: UnsafeMutablePointer<vorbis_block>
    private var headers = 0
    private var synthesis = false
    private var title: String?
    private(set) var format: AudioFormat?
    var readingHeaders: Bool { headers < 3 }
    var nominalBitrate: Int? {
        headers > 0 && info.pointee.bitrate_nominal > 0 ? info.pointee.bitrate_nominal / 1000 : nil
    }

    func takeTitle() -> String? {
        defer { title = nil }
        return title
    }

    init() {
        // libvorbis keeps pointers between these: they live at fixed addresses.
        info = .allocate(capacity: 1)
        info.initialize(to: vorbis_info())
        comment = .allocate(capacity: 1)
        comment.initialize(to: vorbis_comment())
        dsp = .allocate(capacity: 1)
        dsp.initialize(to: vorbis_dsp_state())
        block = .allocate(capacity: 1)
        block.initialize(to: vorbis_block())
        vorbis_info_init(info)
        vorbis_comment_init(comment)
    }

    func take(_ packet: UnsafeMutablePointer<ogg_packet>) -> String? {
        if headers < 3 {
            guard vorbis_synthesis_headerin(info, comment, packet) == 0 else {
                return "Ogg Vorbis header \(headers + 1) of 3 is damaged"
            }
            headers += 1
            if headers == 2 { title = commentTitle() }
            if headers == 3 {
                guard vorbis_synthesis_init(dsp, info) == 0 else { return "libvorbis refused the stream's headers" }
                vorbis_block_init(dsp, block)
                synthesis = true
                format = AudioFormat(sampleRate: Int(info.pointee.rate), channels: Int(info.pointee.channels), sample: .float32)
            }
            return nil
        }
        if vorbis_synthesis(block, packet) == 0 { vorbis_synthesis_blockin(dsp, block) }
        return nil
    }

    /// TITLE and ARTIST of the comment header libvorbis parsed (its lengths checked by libvorbis).
    private func commentTitle() -> String? {
        var tags = OggCommentTitle()
        let count = Int(comment.pointee.comments)
        guard count > 0, let fields = comment.pointee.user_comments, let lengths = comment.pointee.comment_lengths else {
            return nil
        }
        for index in 0..<count {
            guard let field = fields[index] else { continue }
            tags.take(UnsafeRawBufferPointer(start: field, count: Int(max(0, lengths[index]))))
        }
        return tags.text
    }

    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard synthesis else { return 0 }
        var pcm: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
        let available = Int(vorbis_synthesis_pcmout(dsp, &pcm))
        guard available > 0, let pcm else { return 0 }
        let count = min(available, frames)
        let channels = Int(info.pointee.channels)
        for channel in 0..<channels {
            guard let source = pcm[channel] else { continue }
            var target = out + channel
            for frame in 0..<count {
                target.pointee = source[frame]
                target += channels
            }
        }
        vorbis_synthesis_read(dsp, Int32(count))
        return count
    }

    func close() {
        if synthesis {
            vorbis_block_clear(block)
            vorbis_dsp_clear(dsp)
        }
        vorbis_comment_clear(comment)
        vorbis_info_clear(info)
        info.deallocate()
        comment.deallocate()
        dsp.deallocate()
        block.deallocate()
    }
}

/// Opus (RFC 7845): OpusHead, OpusTags, then audio at 48 kHz. Channel mapping family 0 (mono,
/// stereo) through the one-stream decoder, family 1 (up to 8 channels, Vorbis order) through the
/// multistream one: libopus 1.3's multistream decode checks the CPU's features (`cpuid`) on every
/// packet, which doubled the decoding's CPU in a virtual machine (`OpusPacketDecoder`, issue 33).
private final class OpusVoice: OggVoice {
    private var decoder: OpaquePointer?
    /// Family 0's decoder (an `OpusDecoder`), instead of `decoder`.
    private var single: OpaquePointer?
    private var headers = 0
    private var channels = 0
    /// Frames still to drop at the start (OpusHead's pre-skip).
    private var preSkip = 0
    /// The granule position (48 kHz samples, pre-skip included) at the end of the last packet.
    private var granule: Int64 = 0
    /// Decoded frames not read yet: `pending` frames from `start`.
    private var buffer: UnsafeMutablePointer<Float>?
    private var start = 0
    private var pending = 0
    private var title: String?
    private(set) var format: AudioFormat?
    var readingHeaders: Bool { headers < 2 }
    /// None: OpusHead says no bitrate.
    var nominalBitrate: Int? { nil }

    func takeTitle() -> String? {
        defer { title = nil }
        return title
    }
    /// The most frames one packet decodes to (120 ms at 48 kHz).
    private static let maxPacketFrames = 5760

    func take(_ packet: UnsafeMutablePointer<ogg_packet>) -> String? {
        let bytes = UnsafeRawBufferPointer(start: packet.pointee.packet, count: max(0, packet.pointee.bytes))
        if headers == 0 {
            headers = 1
            return open(head: bytes)
        }
        if headers == 1 {
            headers = 2
            if bytes.starts(with: Array("OpusTags".utf8)) {
                title = OggCommentTitle.opusTags(bytes)
                return nil
            }
        }
        // An empty packet would be concealed as 120 ms of a lost one: skipped instead.
        guard let buffer, let base = packet.pointee.packet, packet.pointee.bytes > 0 else { return nil }
        let length = Int32(clamping: packet.pointee.bytes)
        let decoded: Int
        if let single {
            decoded = Int(opus_decode_float(single, base, length, buffer, Int32(Self.maxPacketFrames), 0))
        } else if let decoder {
            decoded = Int(opus_multistream_decode_float(decoder, base, length, buffer, Int32(Self.maxPacketFrames), 0))
        } else {
            return nil
        }
        guard decoded > 0 else { return nil }  // a corrupt packet: skipped
        var first = min(preSkip, decoded)
        var end = decoded
        preSkip -= first
        let granuleBefore = granule
        // Saturating: a page's granule position is 64 bits off the network (Int64.max then one
        // more packet would trap and take the player down).
        let (sum, overflow) = granule.addingReportingOverflow(Int64(decoded))
        granule = overflow ? .max : sum
        if packet.pointee.granulepos >= 0 {
            // The last page's granule position ends the stream short of the last packet's end.
            if packet.pointee.e_o_s != 0 && packet.pointee.granulepos < granule {
                end = Int(max(0, min(Int64(decoded), packet.pointee.granulepos - granuleBefore)))
            }
            granule = packet.pointee.granulepos
        }
        first = min(first, end)
        start = first
        pending = end - first
        return nil
    }

    /// Reads OpusHead and starts the decoder.
    private func open(head: UnsafeRawBufferPointer) -> String? {
        guard head.count >= 19, head[8] >> 4 == 0 else { return "the Ogg Opus header is damaged" }
        let count = Int(head[9])
        let skip = Int(head[10]) | Int(head[11]) << 8
        let gain = Int16(bitPattern: UInt16(head[16]) | UInt16(head[17]) << 8)
        let family = head[18]
        var streams: Int32 = 1
        var coupled: Int32 = count == 2 ? 1 : 0
        var mapping: [UInt8] = [0, 1]
        switch family {
        case 0:
            guard count == 1 || count == 2 else { return "the Ogg Opus header is damaged (\(count) channels, family 0)" }
        case 1:
            guard count >= 1, count <= 8, head.count >= 21 + count else {
                return "the Ogg Opus header is damaged (\(count) channels, family 1)"
            }
            streams = Int32(head[19])
            coupled = Int32(head[20])
            mapping = Array(head[21..<(21 + count)])
        default:
            return "Opus channel mapping family \(family) is not supported (only 0 and 1)"
        }
        var error: Int32 = 0
        if family == 0 {
            guard let single = opus_decoder_create(48000, Int32(count), &error), error == OPUS_OK else {
                return "libopus refused the stream's header: " + String(cString: opus_strerror(error))
            }
            self.single = single
            // Output gain in Q7.8 dB, applied by libopus as the specification asks.
            if gain != 0 { _ = jb_opus_single_set_gain(single, Int32(gain)) }
        } else {
            guard let decoder = opus_multistream_decoder_create(48000, Int32(count), streams, coupled, mapping, &error),
                  error == OPUS_OK else {
                return "libopus refused the stream's header: " + String(cString: opus_strerror(error))
            }
            self.decoder = decoder
            if gain != 0 { _ = jb_opus_set_gain(decoder, Int32(gain)) }
        }
        channels = count
        preSkip = skip
        buffer = .allocate(capacity: Self.maxPacketFrames * count)
        format = AudioFormat(sampleRate: 48000, channels: count, sample: .float32)
        return nil
    }

    func read(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard pending > 0, let buffer else { return 0 }
        let count = min(pending, frames)
        out.update(from: buffer + start * channels, count: count * channels)
        start += count
        pending -= count
        return count
    }

    func close() {
        if let decoder { opus_multistream_decoder_destroy(decoder) }
        decoder = nil
        if let single { opus_decoder_destroy(single) }
        single = nil
        buffer?.deallocate()
        buffer = nil
    }
}

// SPDX-License-Identifier: MIT
import COpusFile

/// Decodes the packets of a mono or stereo Opus file (channel mapping family 0) for libopusfile,
/// through libopus's one-stream decoder instead of the multistream one opusfile would use.
///
/// Why: libopus 1.3's multistream decode runs its x86 CPU-feature check (`cpuid`) on every packet,
/// a trap into the hypervisor in a virtual machine: measured on the project's 2-core VM, 0.20 s of
/// CPU per audio minute against 0.11 s for the same packets through `opus_decode_float`
/// (issue 33). The samples are the same floats: a family-0 multistream decoder is this one
/// decoder with the channels copied out, and the header's output gain is set the same way.
///
/// opusfile resets its decoder when it starts a link or lands after a seek; this decoder follows
/// it by resetting on a new link and wherever the packet numbers break (libogg numbers packets
/// from 0 again after the stream state is reset for a seek). Other mappings (surround) are left to
/// opusfile (`OP_DEC_USE_DEFAULT`). One per `OpusFileReader`, on the decoding thread.
final class OpusPacketDecoder {
    private let file: OpaquePointer
    private var decoder: OpaquePointer?
    private var channels: Int32 = 0
    /// The link `decoder` was made for, -1 for none (or a link opusfile decodes itself).
    private var link: Int32 = -1
    private var lastPacket: Int64 = -2

    init(file: OpaquePointer) {
        self.file = file
    }

    deinit {
        if let decoder { opus_decoder_destroy(decoder) }
    }

    /// Installs this decoder as `file`'s packet decoder (kept alive by the caller meanwhile).
    func install() {
        op_set_decode_callback(file, { context, _, pcm, packet, samples, channels, format, link in
            guard let context, let pcm, let packet else { return OP_DEC_USE_DEFAULT }
            let decoder = Unmanaged<OpusPacketDecoder>.fromOpaque(context).takeUnretainedValue()
            return decoder.decode(packet, into: pcm, samples: samples, channels: channels, format: format, link: link)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func decode(_ packet: UnsafePointer<ogg_packet>, into pcm: UnsafeMutableRawPointer, samples: Int32,
                        channels: Int32, format: Int32, link: Int32) -> Int32 {
        guard format == OP_DEC_FORMAT_FLOAT, let decoder = ready(link: link, channels: channels) else {
            return OP_DEC_USE_DEFAULT
        }
        let number = Int64(packet.pointee.packetno)
        if number != lastPacket &+ 1 { _ = jb_opusfile_reset(decoder) }
        lastPacket = number
        let got = opus_decode_float(decoder, packet.pointee.packet, Int32(clamping: packet.pointee.bytes),
                                    pcm.assumingMemoryBound(to: Float.self), samples, 0)
        if got < 0 { return got }
        return got == samples ? 0 : OPUS_INVALID_PACKET
    }

    /// The decoder for `link` when its header is mapping family 0 (a fresh one on a new link), nil otherwise.
    private func ready(link: Int32, channels: Int32) -> OpaquePointer? {
        if link == self.link, channels == self.channels { return decoder }
        if let decoder { opus_decoder_destroy(decoder) }
        decoder = nil
        self.link = link
        self.channels = channels
        lastPacket = -2
        guard let head = op_head(file, link), head.pointee.mapping_family == 0,
              head.pointee.channel_count == channels, channels == 1 || channels == 2 else { return nil }
        var error: Int32 = 0
        guard let made = opus_decoder_create(48000, channels, &error), error == OPUS_OK else { return nil }
        _ = jb_opusfile_set_gain(made, head.pointee.output_gain)
        decoder = made
        return made
    }
}

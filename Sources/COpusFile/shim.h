// SPDX-License-Identifier: MIT
// Opus files: libopusfile finds the pages, seeks sample-exactly and trims pre-skip and end padding
// (streams keep libopus's packet decoder in COpus: opusfile seeks and scans its source). Its
// packets are decoded through libopus's one-stream decoder where the file allows (OpusPacketDecoder).
#include <opusfile.h>

// opus_decoder_ctl is variadic, which Swift cannot call: the header's output gain (Q7.8 dB).
static inline int jb_opusfile_set_gain(OpusDecoder *decoder, opus_int32 gain) {
    return opus_decoder_ctl(decoder, OPUS_SET_GAIN(gain));
}

// Back to a fresh decoder's state (OPUS_RESET_STATE), as opusfile does after a seek.
static inline int jb_opusfile_reset(OpusDecoder *decoder) {
    return opus_decoder_ctl(decoder, OPUS_RESET_STATE);
}

// SPDX-License-Identifier: MIT
// libopus's packet decoder (not opusfile: it seeks and scans its source).
#include <opus/opus_multistream.h>

// opus_multistream_decoder_ctl is variadic, which Swift cannot call.
static inline int jb_opus_set_gain(OpusMSDecoder *decoder, opus_int32 gain) {
    return opus_multistream_decoder_ctl(decoder, OPUS_SET_GAIN(gain));
}

// The same for the one-stream decoder (mono and stereo streams: mapping family 0).
static inline int jb_opus_single_set_gain(OpusDecoder *decoder, opus_int32 gain) {
    return opus_decoder_ctl(decoder, OPUS_SET_GAIN(gain));
}
